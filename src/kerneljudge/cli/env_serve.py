"""`kerneljudge env-serve`: the OpenEnv environment server (integrations/openenv_server.py; docs/rl.md).

    kerneljudge env-serve [--problems examples|suite|levelN|DIR|ID...] [--backend cuda] [--turns N]
                          [--host 127.0.0.1] [--port 8001] [--token-file F] [--allow-unsandboxed]
                          [--service-url URL [--service-token-file F]] [--max-sessions N] [judge options]

Binding follows `serve`'s rules (service/guard.py): loopback needs no token; any other host needs
--token-file and the judge's complete box (or --allow-unsandboxed). Exit codes: 0 after a clean stop, 2 for
bad usage, an unsafe bind or a missing extra, 3 for an unreadable token file or unknown problems.
"""

from __future__ import annotations

import argparse
import dataclasses
import socket
import sys
from pathlib import Path
from typing import Any

from kerneljudge.cli.options import ExitCode, add_judge_options, judge_options
from kerneljudge.cli.serve import read_token
from kerneljudge.service.guard import is_loopback, sandbox_gaps

# chosen per request by the judge settings (or the service), not passed through as plain options
_SET_ELSEWHERE = ("device", "policy", "numerics", "precision")


def register(subparsers: Any) -> None:
    """Add the `env-serve` subcommand to an argparse subparsers object."""
    from kerneljudge.core.types import BACKENDS

    p = subparsers.add_parser(
        "env-serve", help="serve kerneljudge as an OpenEnv RL environment (reset: a problem's prompt; step: a verdict)",
        description="An OpenEnv environment server (POST /reset, POST /step, GET /state, WebSocket /ws; see "
                    "docs/rl.md). Needs pip install 'kerneljudge[openenv]'. Binds to loopback; any other address "
                    "needs --token-file, as `serve` does.")
    p.add_argument("--problems", nargs="+", default=["examples"],
                   help="examples (default), suite, levelN, a folder, suite ids or problem files")
    p.add_argument("--backend", choices=BACKENDS, default="cuda", help="the backend the prompt asks for")
    p.add_argument("--turns", type=int, default=1, help="steps per episode before done (default 1)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8001, help="port (default 8001; 0 picks a free one)")
    p.add_argument("--token-file", default=None, help="file holding the token every request must carry")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="allow a non-loopback bind even when the judge's box is incomplete (not advised)")
    p.add_argument("--service-url", default=None, help="judge through this `kerneljudge serve` instead of here")
    p.add_argument("--service-token-file", default=None, help="the token of --service-url")
    p.add_argument("--max-sessions", type=int, default=64, help="concurrent WebSocket sessions (default 64)")
    add_judge_options(p)
    p.set_defaults(func=cmd_env_serve)


def cmd_env_serve(args: argparse.Namespace) -> int:
    def fail(message: str, code: ExitCode) -> int:
        print(f"kerneljudge env-serve: {message}", file=sys.stderr)
        return code

    try:
        import uvicorn

        from kerneljudge.integrations.episode import JudgeSettings
        from kerneljudge.integrations.openenv_server import build_app
    except ImportError as exc:
        return fail(f"needs the openenv extra ({exc}): pip install 'kerneljudge[openenv]'", ExitCode.USAGE)
    if args.turns < 1 or args.max_sessions < 1 or not 0 <= args.port <= 65535:
        return fail("--turns and --max-sessions must be at least 1, --port in 0..65535", ExitCode.USAGE)
    try:
        token = read_token(Path(args.token_file)) if args.token_file else None
        service_token = read_token(Path(args.service_token_file)) if args.service_token_file else None
    except (OSError, ValueError) as exc:
        return fail(str(exc), ExitCode.INPUT)
    refusal = bind_refusal(args.host, token, args.allow_unsandboxed)
    if refusal:
        return fail(refusal, ExitCode.USAGE)
    options = judge_options(args)
    extra = {} if args.service_url else {k: v for k, v in dataclasses.asdict(options).items()
                                         if k not in _SET_ELSEWHERE}
    settings = JudgeSettings(backend=args.backend, policy=options.policy, numerics=options.numerics,
                             precision=options.precision, service_url=args.service_url, token=service_token,
                             device=options.device, options=extra)
    try:
        app = build_app(args.problems, settings, max_turns=args.turns, token=token, max_sessions=args.max_sessions)
    except ValueError as exc:
        return fail(str(exc), ExitCode.INPUT)
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)     # connections made from the announcement on wait in the backlog until uvicorn serves
    url = f"http://{args.host}:{sock.getsockname()[1]}"
    catalog = app.state.kerneljudge_catalog
    inner = getattr(app, "app", app)

    async def announce() -> None:       # once uvicorn accepts connections (tests and scripts wait for it)
        print(f"kerneljudge env-serve: listening on {url} ({len(catalog.problems)} problem(s), "
              f"{args.turns} turn(s), auth {'on' if token else 'off'})", file=sys.stderr, flush=True)

    inner.router.on_startup.append(announce)
    try:
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    finally:
        catalog.judge.close()
    return ExitCode.OK


def bind_refusal(host: str, token: str | None, allow_unsandboxed: bool) -> str | None:
    """Why binding `host` is refused under `serve`'s rules, or None (a warning is printed where it applies)."""
    if is_loopback(host):
        return None
    if token is None:
        return f"--host {host} is reachable from other machines: give --token-file"
    gaps = sandbox_gaps()
    if gaps and not allow_unsandboxed:
        return (f"refusing --host {host}: solutions would run outside a complete box ({'; '.join(gaps)}). "
                "Bind to 127.0.0.1, or pass --allow-unsandboxed to accept the risk.")
    if gaps:
        print(f"kerneljudge env-serve: WARNING: serving {host} without a complete box: {'; '.join(gaps)}",
              file=sys.stderr)
    return None
