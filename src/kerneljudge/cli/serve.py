"""`kerneljudge serve`: the judge as a long-running HTTP service (docs/service.md).

    kerneljudge serve [--host 127.0.0.1] [--port 8000] [--token-file F] [--journal DIR] [--queue-limit N]
                      [--max-request-bytes N] [--jobs N] [--gpus 0,1] [--executor local|ray] [judge options]

Exit codes: 0 after a clean stop (SIGINT/SIGTERM), 2 for bad usage or an unsafe bind, 3 for an
unreadable token file.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import stat
import sys
from pathlib import Path
from typing import Any

from kerneljudge.cli.options import ExitCode, add_judge_options, judge_options
from kerneljudge.service.guard import is_loopback, sandbox_gaps


def register(subparsers: Any) -> None:
    """Add the `serve` subcommand to an argparse subparsers object."""
    from kerneljudge.judging.executors.base import add_executor_arguments

    p = subparsers.add_parser(
        "serve", help="judge solutions sent over HTTP (for RL reward loops and many clients)",
        description="A judge service: POST /v1/jobs, GET /v1/jobs/ID, GET /v1/health, GET /v1/status (see "
                    "docs/service.md). Accepted jobs and verdicts are journalled, so a restart on the same "
                    "--journal resumes the queue. The judge options below are the defaults (and the upper "
                    "limits) of every job. Binds to loopback; any other address needs --token-file.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--token-file", default=None,
                   help="file holding the API token; clients send Authorization: Bearer TOKEN "
                        "(required for a non-loopback --host)")
    p.add_argument("--journal", default="kerneljudge-journal",
                   help="folder for the job journal and job texts (default ./kerneljudge-journal)")
    p.add_argument("--queue-limit", type=int, default=256,
                   help="jobs waiting or running before new ones get 429 (default 256)")
    p.add_argument("--max-request-bytes", type=int, default=4 << 20,
                   help="largest request body accepted, else 413 (default 4 MiB)")
    p.add_argument("--jobs", type=int, default=None,
                   help="solutions in flight at once (builds overlap; default: cores on a GPU machine, 2 on CPU)")
    p.add_argument("--gpus", default=None, metavar="0,1,...",
                   help="GPU ids to judge on, one lane each (default: every visible GPU)")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="allow a non-loopback bind even when the judge's box is incomplete (not advised)")
    add_executor_arguments(p)
    add_judge_options(p)
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from aiohttp import web  # noqa: F401
    except ImportError:
        print("kerneljudge serve needs aiohttp: pip install 'kerneljudge[serve]'", file=sys.stderr)
        return ExitCode.USAGE
    problem = _check_args(args)
    if problem:
        print(f"kerneljudge serve: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    token = None
    if args.token_file:
        try:
            token = read_token(Path(args.token_file))
        except (OSError, ValueError) as exc:
            print(f"kerneljudge serve: {exc}", file=sys.stderr)
            return ExitCode.INPUT
    if not is_loopback(args.host):
        if token is None:
            print(f"kerneljudge serve: --host {args.host} is reachable from other machines: give --token-file",
                  file=sys.stderr)
            return ExitCode.USAGE
        gaps = sandbox_gaps()
        if gaps and not args.allow_unsandboxed:
            print(f"kerneljudge serve: refusing --host {args.host}: solutions would run outside a complete box "
                  f"({'; '.join(gaps)}). Bind to 127.0.0.1, or pass --allow-unsandboxed to accept the risk.",
                  file=sys.stderr)
            return ExitCode.USAGE
        if gaps:
            print(f"kerneljudge serve: WARNING: serving {args.host} without a complete box: {'; '.join(gaps)}",
                  file=sys.stderr)
    options = judge_options(args)
    return asyncio.run(_serve(args, options, token))


def _check_args(args: argparse.Namespace) -> str | None:
    if not 0 <= args.port <= 65535:
        return "--port must be in 0..65535"
    if args.queue_limit < 1:
        return "--queue-limit must be at least 1"
    if args.max_request_bytes < 1024:
        return "--max-request-bytes must be at least 1024"
    if args.jobs is not None and args.jobs < 1:
        return "--jobs must be at least 1"
    return None


def read_token(path: Path) -> str:
    """The token in a file (surrounding whitespace dropped); refuses an empty one."""
    token = path.read_text(encoding="utf-8").strip()
    if not token or any(c.isspace() for c in token):
        raise ValueError(f"token file {path} must hold one token (no spaces)")
    if os.stat(path).st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        print(f"kerneljudge serve: WARNING: token file {path} is readable by other users (chmod 600 it)",
              file=sys.stderr)
    return token


async def _serve(args: argparse.Namespace, options: Any, token: str | None) -> int:
    from aiohttp import web

    from kerneljudge.judging.executors.base import open_executor
    from kerneljudge.service.app import build_app
    from kerneljudge.service.jobs import JobStore

    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()] if args.gpus else None
    executor = open_executor(args.executor, options, workers=args.jobs, address=args.address, gpus=gpus)
    defaults = dataclasses.replace(options, device=executor.device)
    store = JobStore(args.journal, executor, defaults, args.queue_limit)
    executor.warm(defaults)
    runner = web.AppRunner(build_app(store, defaults, token, args.max_request_bytes), access_log=None)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await runner.setup()
        site = web.TCPSite(runner, args.host, args.port)
        await site.start()
        where = ", ".join(_url(a) for a in runner.addresses)
        lanes = ", ".join(lane["device"] for lane in executor.status().get("lanes", []))
        print(f"kerneljudge serve: listening on {where} (judging on {lanes}; journal {store.root}; "
              f"{store.resumed} job(s) resumed; auth {'on' if token else 'off'})", file=sys.stderr, flush=True)
        await stop.wait()
        print("kerneljudge serve: stopping (accepted jobs without a verdict resume on restart)",
              file=sys.stderr, flush=True)
    finally:
        await runner.cleanup()
        store.close()
    return 0


def _url(address: Any) -> str:
    host, port = address[0], address[1]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
