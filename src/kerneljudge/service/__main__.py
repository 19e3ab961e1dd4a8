"""`python -m kerneljudge.service [options]`: the same as `kerneljudge serve [options]`."""

from __future__ import annotations

import argparse
import sys

from kerneljudge.cli.serve import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kerneljudge")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
