"""OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, any server speaking that protocol).

    get_provider("openai:gpt-4o")                                             # OpenAI
    get_provider("openai:Qwen/Qwen2.5-Coder-32B-Instruct", base_url="http://127.0.0.1:8000/v1")  # vLLM

Key from OPENAI_API_KEY (or the variable named by ``api_key_env=``); a local server that checks no key
still needs a non-empty value, e.g. ``OPENAI_API_KEY=EMPTY``. Base URL from ``base_url=``, else
OPENAI_BASE_URL, else OpenAI's. The SDK's own retries are off: ReliableProvider retries.

Reasoning models (o1, o3, o4, gpt-5 ...) take ``max_completion_tokens`` and no temperature; that is
chosen from the model name, or set ``token_param="max_tokens"|"max_completion_tokens"`` and
``send_temperature=True|False`` yourself.
"""

from __future__ import annotations

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

REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def _is_reasoning(model: str) -> bool:
    base = model.rsplit("/", 1)[-1]
    return base.startswith(REASONING_PREFIXES)


class OpenAIProvider:
    """One model behind an OpenAI-compatible ``/chat/completions`` endpoint (async SDK client)."""

    name = "openai"
    network = True

    @staticmethod
    def require_sdk() -> None:
        import openai  # noqa: F401

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float | None = 600.0, prices: Mapping[str, tuple[float, float]] | None = None,
                 token_param: str | None = None, send_temperature: bool | None = None,
                 extra_body: Mapping[str, Any] | None = None):
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.api_key_env = api_key_env
        self._key = read_key(api_key_env, "openai",
                             " (a local vLLM/SGLang server accepts any non-empty value, e.g. EMPTY)")
        self._secrets = (self._key,)
        self.timeout = timeout
        self.prices = dict(prices or {})
        reasoning = _is_reasoning(model)
        self.token_param = token_param or ("max_completion_tokens" if reasoning else "max_tokens")
        if self.token_param not in ("max_tokens", "max_completion_tokens"):
            raise ProviderConfigError(f"token_param must be max_tokens or max_completion_tokens, got {token_param!r}")
        self.send_temperature = (not reasoning) if send_temperature is None else bool(send_temperature)
        self.extra_body = dict(extra_body or {})
        self._client = PerLoop(self._make_client)

    def __repr__(self) -> str:
        return f"OpenAIProvider(model={self.model!r}, base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"

    def _make_client(self):
        import openai

        return openai.AsyncOpenAI(api_key=self._key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    async def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 4096,
                       seed: int | None = None, sample: int = 0) -> Completion:
        import openai

        request: dict[str, Any] = {"model": self.model, "messages": check_messages(messages),
                                   self.token_param: max_tokens}
        if self.send_temperature:
            request["temperature"] = temperature
        if seed is not None:
            request["seed"] = seed
        if self.extra_body:
            request["extra_body"] = self.extra_body
        client = self._client.get()
        start = time.perf_counter()
        try:
            response = await client.chat.completions.create(**request)
        except openai.APIStatusError as err:
            raise status_error(err.status_code, redact(str(err), self._secrets), err.response.headers,
                               provider=f"openai:{self.model}", key_env=self.api_key_env) from None
        except openai.APITimeoutError:
            raise TransientProviderError(f"openai:{self.model}: the SDK timed out after {self.timeout} s") from None
        except openai.APIConnectionError as err:
            raise TransientProviderError(f"openai:{self.model}: connection error: "
                                         f"{redact(str(err), self._secrets)}") from None
        except openai.APIResponseValidationError as err:
            raise TransientProviderError(f"openai:{self.model}: malformed response: "
                                         f"{redact(str(err), self._secrets)}") from None
        latency = time.perf_counter() - start
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise TransientProviderError(f"openai:{self.model}: the response has no choices")
        choice = choices[0]
        text = getattr(choice.message, "content", None) or ""
        finish = getattr(choice, "finish_reason", None)
        usage_obj = getattr(response, "usage", None)
        usage = {"prompt_tokens": int(getattr(usage_obj, "prompt_tokens", 0) or 0),
                 "completion_tokens": int(getattr(usage_obj, "completion_tokens", 0) or 0)}
        model = getattr(response, "model", None) or self.model
        return Completion(text=text, model=model, usage=usage, cost_usd=estimate_cost(self.model, usage, self.prices),
                          latency_s=latency, cached=False, raw_id=getattr(response, "id", None),
                          finish_reason=finish)

    async def aclose(self) -> None:
        client = self._client.peek()
        self._client.clear()
        if client is not None:
            try:
                await client.close()
            except RuntimeError:  # its loop is gone already
                pass


__all__ = ["OpenAIProvider"]
