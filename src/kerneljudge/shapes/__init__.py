"""Derived presets and held-out shapes for problems without SMALL / HELD_OUT / HELD_OUT_SMALL metadata, and a
held-out shape far below the benchmark size for every problem (threat B13).

scan.py reads a problem's constants from its text, roles.py decides which are sizes, derive.py proposes
candidate shapes, far_below.py searches the far-below one with a probe it is given (all pure, no torch);
worker/shapes.py checks them by running the reference in a child process, and judging/shapes.py
(resolve) puts it together into a cached ShapePlan (plan.py).

May import: core (the probes that run references come from judging/shapes.py).
"""
