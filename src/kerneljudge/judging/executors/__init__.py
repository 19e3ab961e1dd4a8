"""Where solutions are judged: the local executor (this machine's devices, one queue per device) and the Ray
executor (a cluster), both behind the small interface of base.py.

May import: core, judging.
"""
