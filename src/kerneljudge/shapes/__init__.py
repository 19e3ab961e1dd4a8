"""Derived presets and held-out shapes for problems without SMALL / HELD_OUT / HELD_OUT_SMALL metadata.

scan.py reads a problem's constants from its text, roles.py decides which are sizes, derive.py proposes
candidate shapes (all pure, no torch); harness/shape_worker.py checks them by running the reference in a
child process, and execute/shapes.py (resolve) puts it together into a cached ShapePlan (plan.py).
"""
