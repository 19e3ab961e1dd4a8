"""Clients for `kerneljudge serve` (docs/service.md): JudgeClient (blocking, standard library only) and
AsyncJudgeClient (asyncio, needs aiohttp).

    client = JudgeClient("http://127.0.0.1:8000", token=None)
    verdict = client.judge(solution_text=code, problem="level1/21_relu")      # submit, then wait
    print(verdict["verdict"], verdict["accepted"], verdict["speedup"])

    async with AsyncJudgeClient(url) as client:
        ids = await client.submit_many([{"problem": "level1/21_relu", "solution_text": code}, ...])
        verdicts = [await client.wait(i) for i in ids]

A full queue (429) is retried after the service's Retry-After hint for up to `queue_wait_s`; everything
else the service refuses raises a JudgeServiceError subclass carrying its status and message.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from typing import Any, Iterable

DEFAULT_TIMEOUT_S = 30.0


class JudgeServiceError(RuntimeError):
    """The service answered with an error (status, message), or could not be reached (status 0)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status, self.message = status, message


class BadRequestError(JudgeServiceError):
    """400: the job was refused as it is (unknown problem, bad option, ...)."""


class AuthError(JudgeServiceError):
    """401: no token, or the wrong one."""


class NotFoundError(JudgeServiceError):
    """404: no job with that id (or no such endpoint)."""


class RequestTooLargeError(JudgeServiceError):
    """413: the request is larger than the service's --max-request-bytes."""


class QueueFullError(JudgeServiceError):
    """429 for longer than queue_wait_s: the service is saturated."""

    def __init__(self, status: int, message: str, retry_after_s: float = 1.0):
        super().__init__(status, message)
        self.retry_after_s = retry_after_s


class JobTimeout(TimeoutError):
    """wait() ran out of time; the job is still queued or running on the service."""


_ERRORS = {400: BadRequestError, 401: AuthError, 404: NotFoundError, 413: RequestTooLargeError}


def job_object(solution_text: str, problem: str | None = None, problem_text: str | None = None,
               options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON object of one job: exactly one of problem (a suite id) and problem_text."""
    if (problem is None) == (problem_text is None):
        raise ValueError("give exactly one of problem (a suite id) and problem_text")
    job: dict[str, Any] = {"solution_text": solution_text}
    job["problem" if problem is not None else "problem_text"] = problem if problem is not None else problem_text
    if options:
        job["options"] = dict(options)
    return job


def _raise_for(status: int, body: bytes, headers: Any) -> None:
    try:
        message = str(json.loads(body).get("error", ""))
    except (ValueError, AttributeError):
        message = body[:300].decode("utf-8", "replace")
    if status == 429:
        raise QueueFullError(status, message, _retry_after(headers))
    raise _ERRORS.get(status, JudgeServiceError)(status, message or "error")


def _retry_after(headers: Any) -> float:
    try:
        return max(0.1, float(headers.get("Retry-After", 1)))
    except (TypeError, ValueError):
        return 1.0


def _hold(deadline: float | None, request_timeout_s: float) -> float:
    """How long to ask the service to hold a GET (a long poll): until the deadline, within the request's own
    timeout, at most 20 s a request."""
    hold = min(20.0, max(0.0, request_timeout_s - 5.0))
    if deadline is not None:
        hold = min(hold, max(0.0, deadline - time.monotonic()))
    return hold


class _Settings:
    """Where the service is and how long to wait for it (shared by both clients)."""

    def __init__(self, url: str = "http://127.0.0.1:8000", token: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, queue_wait_s: float = 600.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.queue_wait_s = queue_wait_s


class JudgeClient(_Settings):
    """Blocking client (urllib). Thread-safe: every call is its own request."""

    def _request(self, method: str, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            _raise_for(exc.code, exc.read(), exc.headers)
        except (urllib.error.URLError, OSError) as exc:
            raise JudgeServiceError(0, f"cannot reach the judge service at {self.url}: {exc}") from None

    def _post_jobs(self, payload: Any) -> Any:
        deadline = time.monotonic() + self.queue_wait_s
        while True:
            try:
                return self._request("POST", "/v1/jobs", payload)
            except QueueFullError as exc:
                if time.monotonic() + exc.retry_after_s > deadline:
                    raise
                time.sleep(exc.retry_after_s)

    def submit(self, solution_text: str, problem: str | None = None, problem_text: str | None = None,
               options: dict[str, Any] | None = None) -> str:
        """Queue one job; returns its id."""
        return self._post_jobs(job_object(solution_text, problem, problem_text, options))["id"]

    def submit_many(self, jobs: Iterable[dict[str, Any]]) -> list[str]:
        """Queue job objects (see job_object) in one request, all or none; returns their ids in order."""
        return self._post_jobs(list(jobs))["ids"]

    def get(self, job_id: str) -> dict[str, Any]:
        """{"id", "state": "queued"|"running"|"done", "verdict": {...} | None}"""
        return self._request("GET", f"/v1/jobs/{job_id}")

    def wait(self, job_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """Wait (long polls of up to 20 s) until the job is done; returns its verdict. Raises JobTimeout."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            hold = _hold(deadline, self.timeout_s)
            job = self._request("GET", f"/v1/jobs/{job_id}?wait={hold:.2f}")
            if job["state"] == "done":
                return job["verdict"]
            if deadline is not None and time.monotonic() >= deadline:
                raise JobTimeout(f"job {job_id} is still {job['state']} after {timeout_s:g} s")

    def judge(self, solution_text: str, problem: str | None = None, problem_text: str | None = None,
              options: dict[str, Any] | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        """Submit one job and wait for its verdict."""
        return self.wait(self.submit(solution_text, problem, problem_text, options), timeout_s)

    def health(self) -> bool:
        return bool(self._request("GET", "/v1/health").get("ok"))

    def status(self) -> dict[str, Any]:
        return self._request("GET", "/v1/status")


class AsyncJudgeClient(_Settings):
    """asyncio client (aiohttp); use `async with`, or call close()."""

    def __init__(self, url: str = "http://127.0.0.1:8000", token: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, queue_wait_s: float = 600.0):
        super().__init__(url, token, timeout_s, queue_wait_s)
        self._session: Any = None

    async def __aenter__(self) -> "AsyncJudgeClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _open(self) -> Any:
        if self._session is None:
            import aiohttp

            headers = {"Accept": "application/json"}
            if self.token:
                headers["Authorization"] = f"Bearer {self.token}"
            self._session = aiohttp.ClientSession(headers=headers,
                                                  timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        return self._session

    async def _request(self, method: str, path: str, payload: Any = None) -> Any:
        import aiohttp

        session = self._open()
        try:
            async with session.request(method, self.url + path, json=payload) as response:
                body = await response.read()
                if response.status >= 400:
                    _raise_for(response.status, body, response.headers)
                return json.loads(body)
        except (aiohttp.ClientConnectionError, asyncio.TimeoutError) as exc:
            raise JudgeServiceError(0, f"cannot reach the judge service at {self.url}: {exc!r}") from None

    async def _post_jobs(self, payload: Any) -> Any:
        deadline = time.monotonic() + self.queue_wait_s
        while True:
            try:
                return await self._request("POST", "/v1/jobs", payload)
            except QueueFullError as exc:
                if time.monotonic() + exc.retry_after_s > deadline:
                    raise
                await asyncio.sleep(exc.retry_after_s)

    async def submit(self, solution_text: str, problem: str | None = None, problem_text: str | None = None,
                     options: dict[str, Any] | None = None) -> str:
        return (await self._post_jobs(job_object(solution_text, problem, problem_text, options)))["id"]

    async def submit_many(self, jobs: Iterable[dict[str, Any]]) -> list[str]:
        return (await self._post_jobs(list(jobs)))["ids"]

    async def get(self, job_id: str) -> dict[str, Any]:
        return await self._request("GET", f"/v1/jobs/{job_id}")

    async def wait(self, job_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            hold = _hold(deadline, self.timeout_s)
            job = await self._request("GET", f"/v1/jobs/{job_id}?wait={hold:.2f}")
            if job["state"] == "done":
                return job["verdict"]
            if deadline is not None and time.monotonic() >= deadline:
                raise JobTimeout(f"job {job_id} is still {job['state']} after {timeout_s:g} s")

    async def judge(self, solution_text: str, problem: str | None = None, problem_text: str | None = None,
                    options: dict[str, Any] | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        return await self.wait(await self.submit(solution_text, problem, problem_text, options), timeout_s)

    async def health(self) -> bool:
        return bool((await self._request("GET", "/v1/health")).get("ok"))

    async def status(self) -> dict[str, Any]:
        return await self._request("GET", "/v1/status")


__all__ = ["JudgeClient", "AsyncJudgeClient", "job_object", "JudgeServiceError", "BadRequestError", "AuthError",
           "NotFoundError", "RequestTooLargeError", "QueueFullError", "JobTimeout"]
