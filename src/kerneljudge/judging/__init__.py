"""The trusted orchestrator: everything that judges a solution without ever running its code in this process.
It lints and prepares references, builds extensions (build/), starts boxed child processes that run the
worker/ modules, decides correctness and timing from their replies, and schedules many solutions on local or
Ray executors (executors/). Solution code only ever runs in those children.

May import: core, numerics, analysis, sandbox, shapes. Never worker (workers are started by module name).
"""
