"""Model providers against a real HTTP server on 127.0.0.1 (tests/llm_server.py): no network, no real key."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from email.utils import formatdate

import pytest

from kerneljudge.generate.providers.cache import CompletionCache, request_key
from kerneljudge.generate.providers.pricing import estimate_cost
from kerneljudge.generate.providers.registry import get_provider
from kerneljudge.generate.providers.retry import parse_retry_after
from kerneljudge.generate.providers.types import (
    Completion, ProviderConfigError, ProviderExhaustedError, ProviderRequestError,
)
from kerneljudge.generate.providers.replay import ReplayMissError, replay_key

from .llm_server import LLMServer, llm_server  # noqa: F401  (the fixture)

pytest.importorskip("openai")
pytest.importorskip("anthropic")

OPENAI_KEY = "sk-test-OPENAI-0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-0123456789abcdef"
CHAT = [{"role": "system", "content": "You write CUDA kernels."},
        {"role": "user", "content": "Rewrite Model with a fused kernel."}]
FAST = {"backoff_base": 0.001, "backoff_max": 0.01}   # retries without real waiting


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


def make(server: LLMServer, protocol: str, model: str | None = None, **options):
    if protocol == "openai":
        return get_provider(f"openai:{model or 'gpt-4o-mini'}", base_url=server.openai_url, **{**FAST, **options})
    return get_provider(f"anthropic:{model or 'claude-sonnet-4-test'}", base_url=server.anthropic_url,
                        **{**FAST, **options})


def run(coro):
    return asyncio.run(coro)


async def complete_and_close(provider, messages=CHAT, **kwargs) -> Completion:
    try:
        return await provider.complete(messages, **kwargs)
    finally:
        await provider.aclose()


# ---------------------------------------------------------------------------------------- round trips


def test_openai_round_trip(llm_server):
    llm_server.require_key = OPENAI_KEY
    llm_server.script(("text", "```python\nprint(1)\n```"))
    c = run(complete_and_close(make(llm_server, "openai"), temperature=0.7, max_tokens=123, seed=5))
    assert c.text == "```python\nprint(1)\n```"
    assert c.model == "gpt-4o-mini" and not c.cached and c.attempts == 1 and c.finish_reason == "stop"
    assert c.usage == {"prompt_tokens": 10, "completion_tokens": 3}
    assert c.cost_usd == pytest.approx((10 * 0.15 + 3 * 0.60) / 1e6)
    assert c.raw_id.startswith("chatcmpl-") and c.latency_s > 0
    [req] = llm_server.requests
    assert req.path == "/v1/chat/completions"
    assert req.body["messages"] == CHAT and req.body["model"] == "gpt-4o-mini"
    assert req.body["temperature"] == 0.7 and req.body["max_tokens"] == 123 and req.body["seed"] == 5


def test_anthropic_round_trip_system_field_and_truncation(llm_server):
    llm_server.require_key = ANTHROPIC_KEY
    llm_server.script(("text", "hello from claude"), ("truncated", "def kern"))
    provider = make(llm_server, "anthropic")

    async def go():
        try:
            return [await provider.complete(CHAT, max_tokens=77), await provider.complete(CHAT[1:])]
        finally:
            await provider.aclose()

    first, second = run(go())
    assert first.text == "hello from claude" and first.finish_reason == "stop" and not first.truncated
    assert first.usage == {"prompt_tokens": 10, "completion_tokens": 3}
    assert first.cost_usd == pytest.approx((10 * 3 + 3 * 15) / 1e6)
    assert second.text == "def kern" and second.finish_reason == "length" and second.truncated
    req = llm_server.requests[0]
    assert req.path == "/v1/messages"
    assert req.body["system"] == "You write CUDA kernels."
    assert req.body["messages"] == [CHAT[1]] and req.body["max_tokens"] == 77
    assert "system" not in llm_server.requests[1].body


@pytest.mark.parametrize("send", [None, True, False])
def test_anthropic_temperature_follows_the_sdk_or_the_option(llm_server, send):
    import inspect

    import anthropic

    sdk_takes_it = "temperature" in inspect.signature(anthropic.AsyncAnthropic(api_key="x").messages.create).parameters
    run(complete_and_close(make(llm_server, "anthropic", send_temperature=send), temperature=0.6, seed=3))
    body = llm_server.requests[0].body
    expected = sdk_takes_it if send is None else send
    assert ("temperature" in body) == expected and body.get("temperature", 0.6) == 0.6
    assert "seed" not in body


def test_usage_and_cost_totals(llm_server):
    llm_server.script(("status", 500), ("text", "one two"), ("text", "three"))
    provider = make(llm_server, "openai")

    async def go():
        try:
            await provider.complete(CHAT)
            await provider.complete(CHAT[1:])
        finally:
            await provider.aclose()

    run(go())
    stats = provider.stats
    assert stats["calls"] == 2 and stats["requests"] == 3 and stats["failed_calls"] == 0
    assert stats["prompt_tokens"] == 10 + 6 and stats["completion_tokens"] == 3
    assert stats["cost_usd"] == pytest.approx((16 * 0.15 + 3 * 0.60) / 1e6)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_empty_reply_is_empty_text(llm_server, protocol):
    llm_server.script(("empty",))
    c = run(complete_and_close(make(llm_server, protocol)))
    assert c.text == "" and c.usage["completion_tokens"] == 0


def test_reasoning_models_get_max_completion_tokens_and_no_temperature(llm_server):
    run(complete_and_close(make(llm_server, "openai", "o3-mini"), temperature=0.5, max_tokens=99))
    body = llm_server.requests[0].body
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body and "temperature" not in body


# --------------------------------------------------------------------------------------------- retries


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_429_then_success_honours_retry_after(llm_server, protocol):
    llm_server.script(("status", 429, 0.4), ("text", "after the rate limit"))
    c = run(complete_and_close(make(llm_server, protocol)))
    assert c.text == "after the rate limit" and c.attempts == 2
    first, second = llm_server.requests
    assert second.started - first.finished >= 0.38   # the backoff alone would be ~1 ms


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_server_errors_are_retried(llm_server, protocol):
    llm_server.script(("status", 500), ("status", 503), ("status", 529), ("text", "fine now"))
    c = run(complete_and_close(make(llm_server, protocol)))
    assert c.text == "fine now" and c.attempts == 4 and len(llm_server.requests) == 4


def test_dropped_connection_and_malformed_body_are_retried(llm_server):
    llm_server.script(("hang_up",), ("raw", 200, "this is not json", "text/plain"), ("text", "recovered"))
    c = run(complete_and_close(make(llm_server, "openai")))
    assert c.text == "recovered" and c.attempts == 3


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_timeout_on_slow_reply_then_success(llm_server, protocol):
    llm_server.script(("sleep", 1.5, "too late"), ("text", "quick"))
    start = time.monotonic()
    c = run(complete_and_close(make(llm_server, protocol, timeout=0.3)))
    assert c.text == "quick" and c.attempts == 2
    assert time.monotonic() - start < 1.3


def test_max_attempts_exhausted_is_a_clear_error(llm_server):
    llm_server.script(*[("status", 500)] * 5)
    with pytest.raises(ProviderExhaustedError) as info:
        run(complete_and_close(make(llm_server, "openai", max_attempts=3)))
    assert "gave up after 3 attempts" in str(info.value) and "HTTP 500" in str(info.value)
    assert info.value.attempts == 3 and info.value.last_error.status == 500
    assert len(llm_server.requests) == 3


def test_retry_after_beyond_the_limit_gives_up_at_once(llm_server):
    llm_server.script(("status", 429, 3600))
    with pytest.raises(ProviderExhaustedError, match="retry after 3600"):
        run(complete_and_close(make(llm_server, "openai", max_retry_after=60)))
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("status", [400, 404])
def test_client_errors_are_not_retried(llm_server, status):
    llm_server.script(("status", status), ("text", "never sent"))
    with pytest.raises(ProviderRequestError) as info:
        run(complete_and_close(make(llm_server, "anthropic")))
    assert info.value.status == status and len(llm_server.requests) == 1


def test_concurrency_limit_holds(llm_server):
    llm_server.responder = lambda req: ("sleep", 0.25, "done")
    provider = make(llm_server, "openai", concurrency=3)

    async def go():
        try:
            msgs = [[{"role": "user", "content": f"problem {i}"}] for i in range(9)]
            return await asyncio.gather(*(provider.complete(m) for m in msgs))
        finally:
            await provider.aclose()

    results = run(go())
    assert [c.text for c in results] == ["done"] * 9
    assert llm_server.max_in_flight == 3


# ----------------------------------------------------------------------------------------------- cache


def test_disk_cache_answers_a_repeated_request(llm_server, tmp_path):
    llm_server.responder = lambda req: ("text", f"reply {len(llm_server.requests)}")
    cache = tmp_path / "cache"

    async def go():
        provider = make(llm_server, "openai", cache_dir=cache)
        try:
            a = await provider.complete(CHAT, temperature=0.8, seed=1)
            b = await provider.complete(CHAT, temperature=0.8, seed=1)
            c = await provider.complete(CHAT, temperature=0.8, seed=1, sample=1)
            d = await provider.complete(CHAT, temperature=0.2, seed=1)
            return a, b, c, d
        finally:
            await provider.aclose()

    a, b, c, d = run(go())
    assert len(llm_server.requests) == 3
    assert b.text == a.text and b.cached and not a.cached and b.usage == a.usage and b.cost_usd == a.cost_usd
    assert c.text != a.text and d.text not in (a.text, c.text)
    assert len(CompletionCache(cache)) == 3
    assert not list(cache.rglob("*.tmp"))
    # a re-run (a new provider, a new event loop) never re-queries
    again = run(complete_and_close(make(llm_server, "openai", cache_dir=cache), temperature=0.8, seed=1))
    assert again.text == a.text and again.cached and len(llm_server.requests) == 3
    # concurrent identical calls share one request
    llm_server.reset()
    provider = make(llm_server, "openai", cache_dir=cache)

    async def same_twice():
        try:
            return await asyncio.gather(*(provider.complete([{"role": "user", "content": "x"}]) for _ in range(4)))
        finally:
            await provider.aclose()

    texts = {r.text for r in run(same_twice())}
    assert len(texts) == 1 and len(llm_server.requests) == 1


def test_cache_key_covers_the_full_request():
    base = dict(temperature=0.0, max_tokens=10, seed=None, sample=0)
    key = request_key("openai", "m", CHAT, **base)
    assert key == request_key("openai", "m", [dict(m) for m in CHAT], **base)
    variants = [
        request_key("anthropic", "m", CHAT, **base), request_key("openai", "m2", CHAT, **base),
        request_key("openai", "m", CHAT[1:], **base),
        request_key("openai", "m", [CHAT[0], {"role": "user", "content": "other"}], **base),
        request_key("openai", "m", CHAT, **{**base, "temperature": 0.1}),
        request_key("openai", "m", CHAT, **{**base, "max_tokens": 11}),
        request_key("openai", "m", CHAT, **{**base, "seed": 0}),
        request_key("openai", "m", CHAT, **{**base, "sample": 1}),
    ]
    assert len({key, *variants}) == 1 + len(variants)


def test_errors_are_not_cached(llm_server, tmp_path):
    llm_server.script(("status", 400), ("text", "second try works"))
    with pytest.raises(ProviderRequestError):
        run(complete_and_close(make(llm_server, "openai", cache_dir=tmp_path)))
    assert len(CompletionCache(tmp_path)) == 0
    assert run(complete_and_close(make(llm_server, "openai", cache_dir=tmp_path))).text == "second try works"


# ---------------------------------------------------------------------------------------------- replay


def test_replay_serves_a_recorded_cache_folder_offline(llm_server, tmp_path):
    llm_server.script(("text", "recorded reply"))
    recorded = run(complete_and_close(make(llm_server, "anthropic", cache_dir=tmp_path), sample=2))
    llm_server.stop()                                   # nothing to talk to any more
    replay = get_provider(f"replay:{tmp_path}")
    c = run(replay.complete(CHAT, sample=2))
    assert c.text == "recorded reply" and c.cached and c.usage == recorded.usage
    with pytest.raises(ReplayMissError) as info:
        run(replay.complete(CHAT, sample=3))
    assert info.value.key == replay_key(CHAT, sample=3) and info.value.key in str(info.value)
    with pytest.raises(ReplayMissError):
        run(get_provider(f"replay:{tmp_path}", model="some-other-model").complete(CHAT, sample=2))


def test_replay_scripted_replies_and_key_files(tmp_path):
    (tmp_path / "turn1.txt").write_text("```python\nfixed\n```")
    rules = [
        {"match": "class Matmul", "text": "```python\nbroken\n```"},
        {"match": "class Matmul", "file": "turn1.txt"},
        {"match": "class Matmul", "sample": 1, "text": "sample one", "finish_reason": "length"},
        {"match": "", "text": "fallback"},
    ]
    (tmp_path / "replies.jsonl").write_text("\n".join(json.dumps(r) for r in rules) + "\n\n")
    exact = [{"role": "user", "content": "exact request"}]
    (tmp_path / f"{replay_key(exact, max_tokens=50)}.txt").write_text("from the key file")
    provider = get_provider(f"replay:{tmp_path}")
    prompt = [{"role": "user", "content": "Problem:\nclass Matmul(nn.Module): ..."}]

    async def go():
        out = [await provider.complete(prompt) for _ in range(3)]           # turns 0, 1, then repeats 1
        out.append(await provider.complete(prompt, sample=1))
        out.append(await provider.complete([{"role": "user", "content": "class Conv"}]))
        out.append(await provider.complete(exact, max_tokens=50))
        return out

    texts = [c.text for c in run(go())]
    assert texts == ["```python\nbroken\n```", "```python\nfixed\n```", "```python\nfixed\n```",
                     "sample one", "fallback", "from the key file"]
    assert run(provider.complete(prompt, sample=1)).finish_reason == "length"


def test_replay_config_errors(tmp_path):
    with pytest.raises(ProviderConfigError, match="does not exist"):
        get_provider(f"replay:{tmp_path / 'missing'}")
    (tmp_path / "replies.jsonl").write_text('{"match": "x"}\n')
    with pytest.raises(ProviderConfigError, match="replies.jsonl:1"):
        get_provider(f"replay:{tmp_path}")


# ----------------------------------------------------------------------------------- configuration


def test_missing_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        get_provider("openai:gpt-4o", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        get_provider("anthropic:claude-sonnet-4-5")
    monkeypatch.setenv("MY_VLLM_KEY", "EMPTY")
    assert get_provider("openai:local", api_key_env="MY_VLLM_KEY", base_url="http://127.0.0.1:9/v1").model == "local"


def test_bad_specs_and_options():
    with pytest.raises(ProviderConfigError, match="NAME:MODEL"):
        get_provider("gpt-4o")
    with pytest.raises(ProviderConfigError, match="unknown provider 'nope'"):
        get_provider("nope:model")
    with pytest.raises(ProviderConfigError, match="bad option"):
        get_provider("openai:gpt-4o", colour="blue")


def test_missing_sdk_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)     # makes `import openai` fail
    with pytest.raises(ProviderConfigError, match=r"pip install kerneljudge\[openai\]"):
        get_provider("openai:gpt-4o")
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ProviderConfigError, match=r"pip install kerneljudge\[anthropic\]"):
        get_provider("anthropic:claude-sonnet-4-5")


def test_modules_import_no_sdk():
    modules = ["types", "per_loop", "keys", "pricing", "retry", "cache", "registry", "replay", "openai", "anthropic"]
    code = ("import sys, " + ", ".join(f"kerneljudge.generate.providers.{m}" for m in modules) + "; "
            "assert 'openai' not in sys.modules and 'anthropic' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_prices_and_retry_after_parsing():
    assert estimate_cost("gpt-4o-mini-2024-07-18", {"prompt_tokens": 1_000_000, "completion_tokens": 0}) == 0.15
    assert estimate_cost("gpt-4o", {"prompt_tokens": 0, "completion_tokens": 1_000_000}) == 10.0
    assert estimate_cost("openai/gpt-4o", {"prompt_tokens": 1_000_000, "completion_tokens": 0}) == 2.5
    assert estimate_cost("Qwen/Qwen2.5-Coder-32B", {"prompt_tokens": 5, "completion_tokens": 5}) is None
    assert estimate_cost("mine", {"prompt_tokens": 2_000_000}, prices={"mine": (1.0, 2.0)}) == 2.0
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert 50 < parse_retry_after({"retry-after": formatdate(time.time() + 60, usegmt=True)}) <= 60
    assert parse_retry_after({"retry-after": "soon"}) is None and parse_retry_after({}) is None


# ------------------------------------------------------------------------------------------------ keys


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_key_never_appears_in_errors_logs_or_cache(llm_server, protocol, tmp_path, caplog):
    key = OPENAI_KEY if protocol == "openai" else ANTHROPIC_KEY
    caplog.set_level(logging.DEBUG)
    echo = f"Incorrect API key provided: {key}"          # servers do echo keys back
    llm_server.script(("status", 500, None, echo), ("text", "ok 1"), ("status", 401, None, echo))
    provider = make(llm_server, protocol, cache_dir=tmp_path / "cache")

    async def go():
        try:
            ok = await provider.complete(CHAT)
            with pytest.raises(ProviderRequestError) as info:
                await provider.complete(CHAT, sample=1)
            return ok, info.value
        finally:
            await provider.aclose()

    ok, error = run(go())
    assert ok.text == "ok 1" and ok.attempts == 2
    assert llm_server.requests[0].headers.get("authorization", "").endswith(key) or \
        llm_server.requests[0].headers.get("x-api-key") == key      # the key did reach the server
    assert error.status == 401 and "***" in str(error) and "check the key in" in str(error)
    text_seen = [str(error), repr(error), repr(provider), caplog.text]
    text_seen += [r.getMessage() for r in caplog.records]
    text_seen += [p.read_text() for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert any("retrying" in t for t in text_seen)
    for text in text_seen:
        assert key not in text and key[-8:] not in text
