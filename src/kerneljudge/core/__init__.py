"""Plain data and helpers every other package uses: verdict and option types, problem files, the parent-child
channel, JSONL, paths of the package data, progress, sampling statistics.

May import: nothing else of kerneljudge (core is the bottom layer).
"""
