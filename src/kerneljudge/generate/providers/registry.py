"""The registry of model providers: a spec such as ``openai:MODEL`` becomes a provider, wrapped for retries
and caching. One small async interface from chat messages to text, usage and cost (types.py).

    from kerneljudge.generate.providers.registry import get_provider

    provider = get_provider("openai:gpt-4o-mini", cache_dir="runs/cache", concurrency=8)
    completion = await provider.complete([{"role": "user", "content": "Write a kernel"}], temperature=0.0)
    print(completion.text, completion.usage, completion.cost_usd, completion.cached)

Specs (``get_provider``):

- ``openai:MODEL``     any OpenAI-compatible chat-completions server (OpenAI, vLLM, SGLang, ...) through the
  ``openai`` SDK. Key from ``OPENAI_API_KEY``; base URL from the ``base_url=`` option, else
  ``OPENAI_BASE_URL``, else OpenAI's. Needs ``pip install kerneljudge[openai]``.
- ``anthropic:MODEL``  Anthropic's messages API through the ``anthropic`` SDK. Key from
  ``ANTHROPIC_API_KEY``; base URL from ``base_url=``, else ``ANTHROPIC_BASE_URL``. Needs
  ``pip install kerneljudge[anthropic]``.
- ``replay:FOLDER``    recorded replies served from a folder, offline (see ``replay.py`` for the format).

Every network provider is wrapped in ``ReliableProvider`` (``retry.py``: retries with exponential backoff
and jitter on 429, 408/409, 5xx, timeouts and dropped connections, honouring ``Retry-After``; a concurrency
limit; a per-call timeout) and, with ``cache_dir=``, in ``CachedProvider`` (``cache.py``) so that a re-run
never re-queries a model.

API keys are read from the environment when a provider is built and redacted from every message
(``keys.py``); prices are in ``pricing.py``.

No SDK is imported by this module: ``get_provider`` imports a provider's module only when it is chosen,
so a missing optional SDK fails only then, naming the extra to install.
"""

from __future__ import annotations

import importlib
from typing import Any

from kerneljudge.generate.providers.cache import CachedProvider
from kerneljudge.generate.providers.retry import ReliableProvider
from kerneljudge.generate.providers.types import Provider, ProviderConfigError


# registry name -> ("module:Class", the pip extra its SDK comes with, or None)
PROVIDERS: dict[str, tuple[str, str | None]] = {
    "openai": ("kerneljudge.generate.providers.openai:OpenAIProvider", "openai"),
    "anthropic": ("kerneljudge.generate.providers.anthropic:AnthropicProvider", "anthropic"),
    "replay": ("kerneljudge.generate.providers.replay:ReplayProvider", None),
}

# options consumed by the wrappers; everything else goes to the provider class
RELIABLE_OPTIONS = ("max_attempts", "concurrency", "timeout", "backoff_base", "backoff_max", "max_retry_after")


def register_provider(name: str, target: str, extra: str | None = None) -> None:
    """Add a provider: ``target`` is ``"package.module:Class"``, imported only when chosen."""
    PROVIDERS[name] = (target, extra)


def parse_spec(spec: str) -> tuple[str, str]:
    name, sep, model = spec.partition(":")
    if not sep or not name or not model:
        raise ProviderConfigError(
            f"bad provider spec {spec!r}: expected NAME:MODEL, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, "
            f"replay:FOLDER (known names: {', '.join(sorted(PROVIDERS))})")
    if name not in PROVIDERS:
        raise ProviderConfigError(f"unknown provider {name!r} in {spec!r}; known: {', '.join(sorted(PROVIDERS))}")
    return name, model


def load_provider_class(name: str):
    target, extra = PROVIDERS[name]
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
        require = getattr(cls, "require_sdk", None)
        if require is not None:
            require()
    except ImportError as err:
        install = f"pip install kerneljudge[{extra}]" if extra else "check the installation"
        raise ProviderConfigError(f"the {name} provider needs a package that is not installed "
                                  f"({err.name or err}): {install}") from err
    return cls


def get_provider(spec: str, **options: Any) -> Provider:
    """Build a provider from ``"openai:MODEL"``, ``"anthropic:MODEL"`` or ``"replay:FOLDER"``.

    Options: ``cache_dir`` (disk cache, see cache.py; ignored by replay, which queries nothing);
    ``max_attempts`` (6), ``concurrency`` (8), ``timeout`` (600 s per call), ``backoff_base`` (1 s),
    ``backoff_max`` (60 s), ``max_retry_after`` (300 s) for the retry wrapper; the rest go to the provider
    class: ``base_url``, ``api_key_env``, ``prices``, ``extra_body``, ``send_temperature`` (both),
    ``token_param`` (openai), ``model`` (replay: only entries recorded for that model).

    The result is ``CachedProvider(ReliableProvider(OpenAIProvider(...)))`` (without the outer layer when
    there is no cache_dir); each layer has ``name``, ``model``, ``spec``, ``complete`` and ``aclose``, and
    ``stats`` (calls, requests, failed_calls, tokens, cost_usd, cache hits/misses) from the wrappers.
    """
    name, model = parse_spec(spec)
    cls = load_provider_class(name)
    cache_dir = options.pop("cache_dir", None)
    reliable = {k: options.pop(k) for k in RELIABLE_OPTIONS if k in options}
    if getattr(cls, "network", True) and "timeout" in reliable and reliable["timeout"] is not None:
        options.setdefault("timeout", float(reliable["timeout"]) + 5.0)  # the SDK's own backstop
    try:
        provider = cls(model, **options)
    except TypeError as err:
        raise ProviderConfigError(f"bad option for the {name} provider: {err}") from err
    if getattr(cls, "network", True):
        provider = ReliableProvider(provider, **reliable)
    elif reliable:
        raise ProviderConfigError(f"the {name} provider takes no retry options: {sorted(reliable)}")
    if cache_dir is not None and getattr(cls, "network", True):
        provider = CachedProvider(provider, cache_dir)
    return provider


__all__ = ["PROVIDERS", "RELIABLE_OPTIONS", "get_provider", "load_provider_class", "parse_spec", "register_provider"]
