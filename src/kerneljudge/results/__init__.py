"""Results people read: fast_p and its intervals (score), tables, the HTML report (report/), exports to
parquet and CSV, the comparison of two runs, and the import of Hugging Face KernelBench runs.

May import: core, suite, generate.
"""
