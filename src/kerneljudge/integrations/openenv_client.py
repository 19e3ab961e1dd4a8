"""The OpenEnv client of the kerneljudge environment server (openenv_server.py): OpenEnv's EnvClient over its
WebSocket, typed with this server's action and observation, and sending the server's token when it has one.

    async with KernelEnvClient("http://127.0.0.1:8001", token=None) as env:
        first = await env.reset(problem_id="level1/21_relu")    # first.observation.prompt: the chat messages
        result = await env.step(KernelAction(code=reply))        # .observation.verdict, .reward, .done
    env = KernelEnvClient(url).sync()                            # the same, blocking
"""

from __future__ import annotations

from typing import Any, Dict

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from kerneljudge.integrations.openenv_server import KernelAction, KernelObservation, KernelState


class KernelEnvClient(EnvClient[KernelAction, KernelObservation, KernelState]):
    def __init__(self, base_url: str, token: str | None = None, **kwargs: Any):
        super().__init__(base_url, **kwargs)
        object.__setattr__(self, "_token", token)   # EnvClient guards its attributes

    async def connect(self) -> "KernelEnvClient":
        if self._token is None or self._ws is not None:
            return await super().connect()
        from websockets.asyncio.client import connect as ws_connect

        # EnvClient's own connect sends no headers: the token travels as serve's clients send it
        self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size,
                                    additional_headers={"Authorization": f"Bearer {self._token}"})
        return self

    def _step_payload(self, action: KernelAction) -> Dict[str, Any]:
        return action.model_dump(exclude={"metadata"}, exclude_none=True)

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[KernelObservation]:
        observation = KernelObservation(**payload.get("observation", {}), reward=payload.get("reward"),
                                        done=bool(payload.get("done")))
        return StepResult(observation=observation, reward=payload.get("reward"), done=bool(payload.get("done")))

    def _parse_state(self, payload: Dict[str, Any]) -> KernelState:
        return KernelState(**payload)
