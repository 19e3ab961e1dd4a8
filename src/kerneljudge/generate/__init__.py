"""Generation: drive language models to write kernels (providers, prompts, extraction, strategies).

May import: core, analysis, api, judging, suite.
"""
