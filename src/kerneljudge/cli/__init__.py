"""The command line: one module per command group (main: eval, run, examples; suite: lint, suite; shapes;
generate: bench, score; results: report, export, compare, import-hf; serve; env_serve: env-serve) and options.py
with the exit codes and the judge options they share.

May import: every other package (the command line is the top layer).
"""
