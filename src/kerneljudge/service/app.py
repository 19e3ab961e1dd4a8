"""The HTTP side of `kerneljudge serve` (aiohttp): routes, token check, size limit, error bodies.

    POST /v1/jobs         one job object -> 202 {"id"}; a list of them -> 202 {"ids": [...]}
    GET  /v1/jobs/{id}    -> 200 {"id", "state": "queued"|"running"|"done", "verdict": {...} | null}
                             (?wait=S: held until done or S seconds, at most 60)
    GET  /v1/health       -> 200 {"ok": true}
    GET  /v1/status       -> 200 {"queue", "device", "devices", "counters"}

Every error is JSON {"error": "..."}: 400 bad request, 401 no or wrong token, 404 unknown id or route,
413 request too large, 429 queue full (with Retry-After), 500 a bug in the service.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
from typing import Any, Awaitable, Callable

from aiohttp import web

from kerneljudge.core.types import JudgeOptions
from kerneljudge.service.intake import BadRequest, parse_item
from kerneljudge.service.jobs import JobStore, QueueFull

MAX_JOBS_PER_REQUEST = 1000
MAX_WAIT_S = 60.0
log = logging.getLogger("kerneljudge.service")
_ID = re.compile(r"^[0-9a-f]{24}$")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> web.Response:
    return web.json_response({"error": message, **extra}, status=status, headers=headers)


def build_app(store: JobStore, defaults: JudgeOptions, token: str | None, max_request_bytes: int) -> web.Application:
    app = web.Application(client_max_size=max_request_bytes,
                          middlewares=[_errors_middleware(max_request_bytes), _auth_middleware(token)])
    app["store"] = store
    app["defaults"] = defaults
    app.router.add_post("/v1/jobs", post_jobs)
    app.router.add_get("/v1/jobs/{job_id}", get_job)
    app.router.add_get("/v1/health", health)
    app.router.add_get("/v1/status", status)
    return app


def _auth_middleware(token: str | None):
    expected = f"Bearer {token}".encode() if token else None

    @web.middleware
    async def auth(request: web.Request, handler: Handler) -> web.StreamResponse:
        if expected is not None:
            given = request.headers.get("Authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, expected):   # constant time in the token's content
                return error(401, "missing or wrong token: send Authorization: Bearer TOKEN",
                             headers={"WWW-Authenticate": "Bearer"})
        return await handler(request)

    return auth


def _errors_middleware(max_request_bytes: int):
    @web.middleware
    async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return error(413, f"request too large: at most {max_request_bytes} bytes (--max-request-bytes)")
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return error(exc.status, exc.reason or "error", headers={k: v for k, v in exc.headers.items()
                                                                     if k.lower() == "allow"})
        except BadRequest as exc:
            return error(400, str(exc))
        except QueueFull as exc:
            return error(429, str(exc), headers={"Retry-After": str(exc.retry_after_s)},
                         retry_after_s=exc.retry_after_s)
        except Exception:   # a bug here: logged, answered as JSON, the service keeps going
            log.exception("kerneljudge serve: internal error on %s %s", request.method, request.path)
            return error(500, "internal error in the judge service (see its log)")

    return errors


async def post_jobs(request: web.Request) -> web.Response:
    store: JobStore = request.app["store"]
    body = await request.read()        # past client_max_size: HTTPRequestEntityTooLarge -> 413
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the body must be JSON: a job object or a list of job objects") from None
    single = isinstance(payload, dict)
    items = [payload] if single else payload
    if not isinstance(items, list) or not items:
        raise BadRequest("the body must be a job object or a non-empty list of job objects")
    if len(items) > MAX_JOBS_PER_REQUEST:
        raise BadRequest(f"at most {MAX_JOBS_PER_REQUEST} jobs per request; got {len(items)}")
    defaults: JudgeOptions = request.app["defaults"]
    loop = asyncio.get_running_loop()

    def accept() -> list[str]:        # file writes and fsync: off the event loop
        specs = [parse_item(item, defaults, store.device, "the job" if single else f"job {i}")
                 for i, item in enumerate(items)]
        return store.submit(specs)

    ids = await loop.run_in_executor(None, accept)
    return web.json_response({"id": ids[0]} if single else {"ids": ids}, status=202)


async def get_job(request: web.Request) -> web.Response:
    """?wait=S (at most 60): answer as soon as the job is done, or after S seconds (a long poll)."""
    job_id = request.match_info["job_id"]
    store: JobStore = request.app["store"]
    found = store.get(job_id) if _ID.match(job_id) else None
    if found is None:
        return error(404, f"no job with id {job_id!r}")
    try:
        wait_s = min(MAX_WAIT_S, max(0.0, float(request.query.get("wait", 0))))
    except ValueError:
        raise BadRequest("wait must be a number of seconds") from None
    deadline = asyncio.get_running_loop().time() + wait_s
    while found["state"] != "done" and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
        found = store.get(job_id) or found
    return web.json_response(found)


async def health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


async def status(request: web.Request) -> web.Response:
    return web.json_response(request.app["store"].status())
