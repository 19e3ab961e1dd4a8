"""The comparison maths both sides of the trust boundary use: error classes, rounding bounds of an arithmetic
chain, reduced-precision allowances, and the (fused) comparison of a solution's output with the reference's.
Pure functions of tensors and numbers: nothing here starts a process or reads a solution.

May import: core.
"""
