"""Anthropic's messages API through the ``anthropic`` SDK.

    get_provider("anthropic:claude-sonnet-4-5")

Key from ANTHROPIC_API_KEY (or the variable named by ``api_key_env=``); base URL from ``base_url=``, else
ANTHROPIC_BASE_URL, else Anthropic's. System messages are joined and sent as the ``system`` field; the
rest go as ``messages``. ``seed`` is not part of this API and is ignored (it still separates cache
entries). Temperature: recent SDKs (API version 2026-10-21, anthropic 2.x) no longer have a
``temperature`` parameter, older ones do. By default (``send_temperature=None``) it is sent when the
installed SDK's ``messages.create`` takes it and left out otherwise; ``True`` sends it anyway (as an extra
body field), ``False`` never sends it. The SDK's own retries are off: ReliableProvider retries.
"""

from __future__ import annotations

import inspect
import os
import time
from typing import Any, Mapping, Sequence

from kerneljudge.generate.providers.keys import read_key, redact
from kerneljudge.generate.providers.per_loop import PerLoop
from kerneljudge.generate.providers.pricing import estimate_cost
from kerneljudge.generate.providers.retry import status_error
from kerneljudge.generate.providers.types import (
    Completion, Message, ProviderConfigError, TransientProviderError, check_messages,
)

# Anthropic's stop reasons, in the words the rest of kerneljudge uses
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def _takes_temperature(client) -> bool:
    try:
        return "temperature" in inspect.signature(client.messages.create).parameters
    except (TypeError, ValueError):
        return False


class AnthropicProvider:
    """One Claude model behind ``/v1/messages`` (async SDK client)."""

    name = "anthropic"
    network = True

    @staticmethod
    def require_sdk() -> None:
        import anthropic  # noqa: F401

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "ANTHROPIC_API_KEY",
                 timeout: float | None = 600.0, prices: Mapping[str, tuple[float, float]] | None = None,
                 send_temperature: bool | None = None, extra_body: Mapping[str, Any] | None = None):
        self.model = model
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.api_key_env = api_key_env
        self._key = read_key(api_key_env, "anthropic")
        self._secrets = (self._key,)
        self.timeout = timeout
        self.prices = dict(prices or {})
        self.send_temperature = send_temperature
        self.extra_body = dict(extra_body or {})
        self._client = PerLoop(self._make_client)

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"

    def _make_client(self):
        import anthropic

        kwargs: dict[str, Any] = {"api_key": self._key, "max_retries": 0}
        if self.base_url:
            kwargs["base_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return anthropic.AsyncAnthropic(**kwargs)

    @staticmethod
    def split_system(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, str]]]:
        """(the system prompt or None, the user/assistant turns)."""
        checked = check_messages(messages)
        system = [m["content"] for m in checked if m["role"] == "system"]
        turns = [m for m in checked if m["role"] != "system"]
        if not turns:
            raise ProviderConfigError("the anthropic provider needs at least one user message")
        return ("\n\n".join(system) if system else None), turns

    async def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 4096,
                       seed: int | None = None, sample: int = 0) -> Completion:
        import anthropic

        system, turns = self.split_system(messages)
        request: dict[str, Any] = {"model": self.model, "messages": turns, "max_tokens": max_tokens}
        if system is not None:
            request["system"] = system
        client = self._client.get()
        body = dict(self.extra_body)
        if self.send_temperature is None and _takes_temperature(client):
            request["temperature"] = temperature
        elif self.send_temperature:
            body.setdefault("temperature", temperature)
        if body:
            request["extra_body"] = body
        start = time.perf_counter()
        try:
            response = await client.messages.create(**request)
        except anthropic.APIStatusError as err:
            raise status_error(err.status_code, redact(str(err), self._secrets), err.response.headers,
                               provider=f"anthropic:{self.model}", key_env=self.api_key_env) from None
        except anthropic.APITimeoutError:
            raise TransientProviderError(f"anthropic:{self.model}: the SDK timed out after {self.timeout} s") from None
        except anthropic.APIConnectionError as err:
            raise TransientProviderError(f"anthropic:{self.model}: connection error: "
                                         f"{redact(str(err), self._secrets)}") from None
        except anthropic.APIResponseValidationError as err:
            raise TransientProviderError(f"anthropic:{self.model}: malformed response: "
                                         f"{redact(str(err), self._secrets)}") from None
        latency = time.perf_counter() - start
        text = "".join(getattr(block, "text", "") or "" for block in (getattr(response, "content", None) or [])
                       if getattr(block, "type", None) == "text")
        usage_obj = getattr(response, "usage", None)
        prompt = sum(int(getattr(usage_obj, k, 0) or 0)
                     for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        usage = {"prompt_tokens": prompt, "completion_tokens": int(getattr(usage_obj, "output_tokens", 0) or 0)}
        stop = getattr(response, "stop_reason", None)
        return Completion(text=text, model=getattr(response, "model", None) or self.model, usage=usage,
                          cost_usd=estimate_cost(self.model, usage, self.prices), latency_s=latency, cached=False,
                          raw_id=getattr(response, "id", None), finish_reason=FINISH.get(stop, stop))

    async def aclose(self) -> None:
        client = self._client.peek()
        self._client.clear()
        if client is not None:
            try:
                await client.close()
            except RuntimeError:
                pass


__all__ = ["AnthropicProvider"]
