"""Building a solution's C++/CUDA extensions for it, in the judge's own box: the build request, the keyed build
store (store.py), the boxed runner (boxed_run.py), the shared precompiled headers and their maker (pch.py,
pch_maker.py) and the slim/lean header sets that make builds fast. compile_worker.py and pch_worker.py are
what the boxed build children run: they compile a solution's sources, never run them.

May import: core, sandbox, and judging modules outside build/ that do not import build/.
"""
