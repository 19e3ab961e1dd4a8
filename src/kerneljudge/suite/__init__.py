"""The bundled problem suite's code: listing its problems (catalog), the measured H200 baseline tables and the
runner that measures them. The problem files themselves are data (kerneljudge/data/problems/).

May import: core, judging.
"""
