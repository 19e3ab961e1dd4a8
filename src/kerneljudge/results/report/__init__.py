"""Results people look at: the HTML report (`kerneljudge report`) and the pieces it is made of.

    runs.py       read run folders and JSONL logs, and the solutions' source
    curves.py     fast_p curves from score.summary
    plots.py      matplotlib figures as SVG data URIs
    tables.py     summary tables;  problems.py  the per-verdict table and details
    sections.py   figure sections and the comparison;  build.py  the page;  html.py  escaping helpers
    commands.py   the CLI: report (and the registration of export, compare, import-hf)
"""
