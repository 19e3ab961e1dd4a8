"""Results people look at: the HTML report (`kerneljudge report`) and the pieces it is made of.

    curves.py     fast_p curves from score.summary
    plots.py      matplotlib figures as SVG data URIs
    tables.py     summary tables;  problems.py  the per-verdict table and details
    sections.py   figure sections and the comparison;  build.py  the page;  html.py  escaping helpers

Run folders and JSONL logs are read by results/runs.py; the command is in cli/results.py.

May import: core, results, suite, generate.
"""
