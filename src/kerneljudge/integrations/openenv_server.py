"""An OpenEnv environment server (Meta / Hugging Face OpenEnv, `pip install 'kerneljudge[openenv]'`):
reset picks a problem and returns its prompt, step judges a solution.

    from kerneljudge.integrations.openenv_server import build_app
    app = build_app("examples", JudgeSettings(backend="cuda"), max_turns=4)   # a FastAPI app (create_app)
    # or: kerneljudge env-serve --problems examples --backend cuda --turns 4 [--port 8001]

Protocol (OpenEnv's): POST /reset {"problem_id"?: ID, "seed"?: N} and POST /step {"action": {"code": TEXT,
"problem_id"?: ID}} over plain HTTP, where every request is its own episode (a step names its problem, else the
server's first one); a WebSocket session at /ws (OpenEnv's EnvClient, openenv_client.KernelEnvClient) keeps
one episode across reset and steps, each session its own environment. reset without problem_id draws one at
random (seeded by `seed`). An observation carries the prompt (reset), the verdict, its reason and the
judge's feedback (bench's refinement prompt, to send as the next user message); reward is episode.RL_SHAPING's
(0 unless accepted), and done is true once a solution is accepted or `max_turns` steps were taken.

Sessions share one judge (a running `kerneljudge serve`, or a local judging pool whose solutions run in
child processes), so concurrent sessions queue for the device as `serve`'s clients do. A token, when given,
is required on every request and WebSocket (Authorization: Bearer TOKEN, compared in constant time), as
`serve` requires it: cli/env_serve.py enforces serve's binding rules (service/guard.py).
"""

from __future__ import annotations

import hmac
import json
import random
from typing import Any, Optional, Sequence

from fastapi import HTTPException
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from kerneljudge.integrations.episode import (
    JudgeSettings, feedback_message, first_messages, judge_reply, open_judge, summary,
)
from kerneljudge.integrations.problems import ProblemRef, resolve_problems
from kerneljudge.service.reward import KernelReward


class KernelAction(Action):
    code: str = Field(..., description="the model's reply or a solution file: the code is taken out as bench does")
    problem_id: Optional[str] = Field(None, description="the problem, for a step without a reset (plain HTTP)")


class KernelObservation(Observation):
    problem_id: str = ""
    prompt: list[dict[str, str]] = Field(default_factory=list, description="chat messages (after reset)")
    verdict: Optional[str] = None           # the judge's verdict of the last step (no_code when none was found)
    accepted: bool = False
    reason: Optional[str] = None
    speedup: Optional[float] = None
    flags: list[str] = Field(default_factory=list)
    feedback: Optional[str] = None          # the refinement prompt, when the solution was not accepted
    turn: int = 0                           # steps taken in this episode


class KernelState(State):
    problem_id: Optional[str] = None
    accepted: bool = False
    verdicts: list[dict[str, Any]] = Field(default_factory=list)


class KernelCatalog:
    """What every session shares: the problems, the judge and the settings."""

    def __init__(self, problems: Sequence[ProblemRef], judge: KernelReward, settings: JudgeSettings,
                 max_turns: int = 1):
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.problems = list(problems)
        self.by_id = {p.id: p for p in self.problems}
        self.by_id.update({p.name: p for p in self.problems if p.name not in self.by_id})
        self.judge = judge
        self.settings = settings
        self.max_turns = max_turns

    def find(self, problem_id: str) -> ProblemRef:
        if problem_id not in self.by_id:      # the caller's mistake: 400 over HTTP, an error message on a session
            raise HTTPException(400, f"unknown problem {problem_id!r}; this server has {len(self.problems)}: "
                             f"{', '.join(p.name for p in self.problems[:20])}")
        return self.by_id[problem_id]


class KernelEnvironment(Environment[KernelAction, KernelObservation, KernelState]):
    """One episode of one session: a problem, then judged steps until accepted or out of turns."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, catalog: KernelCatalog):
        super().__init__()
        self.catalog = catalog
        self._problem: ProblemRef | None = None
        self._state = KernelState()

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              problem_id: Optional[str] = None, **kwargs: Any) -> KernelObservation:
        if problem_id is not None:
            problem = self.catalog.find(problem_id)
        else:
            problem = random.Random(seed).choice(self.catalog.problems)
        self._problem = problem
        self._state = KernelState(episode_id=episode_id, problem_id=problem.id)
        return KernelObservation(problem_id=problem.id, prompt=first_messages(problem, self.catalog.settings))

    def step(self, action: KernelAction, timeout_s: Optional[float] = None, **kwargs: Any) -> KernelObservation:
        if action.problem_id is not None and (self._problem is None or action.problem_id != self._problem.id):
            self.reset(problem_id=action.problem_id)
        elif self._problem is None:                  # a plain HTTP step: the episode starts here
            self.reset(problem_id=self.catalog.problems[0].id)
        problem = self._problem
        result = judge_reply(self.catalog.judge, problem, action.code)
        entry = summary(result)
        self._state.step_count += 1
        self._state.accepted = entry["accepted"]
        self._state.verdicts.append(entry)
        done = entry["accepted"] or self._state.step_count >= self.catalog.max_turns
        feedback = None
        if not entry["accepted"]:
            feedback = feedback_message(problem, self.catalog.settings, result)["content"]
        speedup = entry["speedup"] if isinstance(entry["speedup"], (int, float)) else None
        return KernelObservation(problem_id=problem.id, verdict=entry["verdict"], accepted=entry["accepted"],
                                 reason=entry["reason"], speedup=speedup, flags=entry["flags"], feedback=feedback,
                                 turn=self._state.step_count, reward=entry["reward"], done=done)

    @property
    def state(self) -> KernelState:
        return self._state


def build_app(problems: str | Sequence[str], settings: JudgeSettings, max_turns: int = 1,
              token: str | None = None, max_sessions: int = 64) -> Any:
    """The OpenEnv FastAPI app (create_app) over the problems, judged as `settings` says; with `token`, every
    request and WebSocket must carry it."""
    catalog = KernelCatalog(resolve_problems(problems), open_judge(settings), settings, max_turns)
    app = create_app(lambda: KernelEnvironment(catalog), KernelAction, KernelObservation, env_name="kerneljudge",
                     max_concurrent_envs=max_sessions)
    app.state.kerneljudge_catalog = catalog
    return BearerToken(app, token) if token else app


class BearerToken:
    """ASGI wrapper: every HTTP request and WebSocket must carry `Authorization: Bearer TOKEN` (serve's rule)."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    def __getattr__(self, name: str) -> Any:      # app.state and friends stay reachable
        return getattr(self.app, name)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            sent = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(sent, self.expected):
                await refuse(scope, send)
                return
        await self.app(scope, receive, send)


async def refuse(scope: dict, send: Any) -> None:
    if scope["type"] == "websocket":          # closing before accept answers the handshake with 403
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps({"error": "missing or wrong token (Authorization: Bearer TOKEN)"}).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
    await send({"type": "http.response.body", "body": body})
