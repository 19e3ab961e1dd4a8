"""Results people read: what a verdict row says and fast_p over rows (verdict_rows), over samples and turns
(trajectory_scores), bootstrap intervals, the summary and its table (score), tables, the HTML report
(report/), exports to parquet and CSV, the comparison of two runs, and the import of Hugging Face KernelBench
runs.

May import: core, suite, generate.
"""
