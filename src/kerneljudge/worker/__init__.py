"""What runs inside the boxed child processes, beside untrusted solution code: loading the reference and the
solution, correctness trials, timing loops and the device clock, profiles, floors, lint and shape probes.
Everything here assumes the process it runs in may be hostile after the solution loads.

May import: core, numerics, sandbox. Never judging (the trusted side must not be loaded next to a solution).
"""
