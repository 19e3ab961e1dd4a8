"""`kerneljudge bench` and `kerneljudge score` end to end on the CPU: a real loopback server speaking the
OpenAI and Anthropic protocols (tests/llm_server.py), Triton solutions run by the interpreter through the
real judge, two tiny problems written here. No network, no real key."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kerneljudge.results import verdict_rows
from kerneljudge.cli.main import main
from kerneljudge.generate.bench import Bench, BenchError, select_problems
from kerneljudge.generate.bench_settings import BenchSettings
from kerneljudge.generate.providers.types import Completion
from kerneljudge.generate.runfolder import RunFolder

from .llm_server import llm_server  # noqa: F401  (the fixture)

pytest.importorskip("openai")
pytest.importorskip("anthropic")

KEY = "sk-test-BENCH-0123456789abcdefXYZ"
HIDDEN_VALUES = ("1237", "1531", "1048583", "3001", "4099")   # held-out sizes of the two problems


def shows_hidden(text: str) -> list[str]:
    """Held-out sizes that appear in text as whole numbers (not as digits inside a float such as 0.01237)."""
    return [v for v in HIDDEN_VALUES if re.search(rf"(?<![\d.]){v}(?![\d.])", text)]

ADD_PROBLEM = '''"""Add a scaled second input: out = a + 2 * b."""
import torch
import torch.nn as nn

n = 1048576


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + 2.0 * b


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return []


# kerneljudge metadata
SMALL = {"n": 300}
HELD_OUT = [{"n": 1048583}]
HELD_OUT_SMALL = [{"n": 1237}]
'''

RELU_PROBLEM = '''"""ReLU after a shift: out = relu(x - 0.5)."""
import torch
import torch.nn as nn

rows = 4096
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x - 0.5)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


SMALL = {"rows": 5, "cols": 33}
HELD_OUT = [{"rows": 3001, "cols": 4099}]
HELD_OUT_SMALL = [{"rows": 7, "cols": 1531}]
'''

ADD_MARK = "a + 2.0 * b"          # text only the add problem's prompt holds
RELU_MARK = "torch.relu(x - 0.5)"

ADD_SOLUTION = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_scaled(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a + 2.0 * b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        _add_scaled[(triton.cdiv(n, 256),)](a, b, out, n, BLOCK=256)
        return out
'''

RELU_SOLUTION = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _shifted_relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x - 0.5, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _shifted_relu[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
        return out
'''

RELU_WRONG = RELU_SOLUTION.replace("x - 0.5", "x + 0.5")
RELU_SHAPE_SPECIALIZED = RELU_SOLUTION.replace("n = x.numel()", "n = 165")   # right only at 5 x 33
ADD_SYNTAX_ERROR = ADD_SOLUTION.replace("def forward(self, a, b):", "def forward(self, a, b)")
ADD_PLAIN_TORCH = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.add(a, b, alpha=2.0)
'''


def fenced(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code}```\n"


def good_reply(request) -> tuple:
    prompt = request.prompt
    code = ADD_SOLUTION if ADD_MARK in prompt else RELU_SOLUTION
    return ("text", "Here is a fused kernel.\n\n" + fenced(code) + "\nIt masks the tail.")


@pytest.fixture
def problems(tmp_path) -> Path:
    folder = tmp_path / "problems"
    folder.mkdir()
    (folder / "1_add_scaled.py").write_text(ADD_PROBLEM)
    (folder / "2_shifted_relu.py").write_text(RELU_PROBLEM)
    return folder


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


def bench_args(server, problems: Path, out: Path, cache_dir: str, *extra: str, model="openai:test-model") -> list[str]:
    url = server.anthropic_url if model.startswith("anthropic:") else server.openai_url
    return ["bench", "--model", model, "--base-url", url, "--problems", str(problems), "--out", str(out),
            "--device", "cpu", "--trials", "5", "--budget", "0.2", "--run-timeout", "30", "--cache-dir", cache_dir,
            *extra]


def rows_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines() if line.strip()]


def by_item(rows: list[dict]) -> dict[tuple, dict]:
    return {(r["problem_id"], r["sample"], r["turn"]): r for r in rows}


def assert_unique(rows: list[dict]) -> None:
    keys = [(r["problem_id"], r["sample"], r["turn"]) for r in rows]
    assert len(keys) == len(set(keys)), keys


# ------------------------------------------------------------------------------------------------ tests


def test_good_replies_after_429_give_correct_verdicts_and_a_score(llm_server, problems, tmp_path,  # noqa: F811
                                                                  cache_dir, capsys):
    llm_server.script(("status", 429, 0.1))        # the first request is rate limited, then answered
    llm_server.responder = good_reply
    out = tmp_path / "run"
    assert main(bench_args(llm_server, problems, out, cache_dir)) == 0
    captured = capsys.readouterr()
    assert "fast_0" in captured.out and "geomean speedup" in captured.out       # the score table
    assert "[2/2]" in captured.err and "correct" in captured.err                 # progress lines

    rows = rows_of(out)
    assert len(rows) == 2
    assert_unique(rows)
    for r in rows:
        assert r["verdict"] == "correct" and r["accepted"] is True, r["reason"]
        assert r["level"] == 0 and r["sample"] == 0 and r["turn"] == 0 and r["extraction"] == "ok"
        assert r["usage"]["prompt_tokens"] > 0 and r["usage"]["completion_tokens"] > 0
        assert r["cached"] is False
        stem = r["problem_id"]
        assert r["prompt_file"] == f"prompts/{stem}__s0_t0.json"
        assert r["reply_file"] == f"replies/{stem}__s0_t0.md"
        assert r["solution_file"] == f"solutions/{stem}__s0_t0.py"
        for key in ("prompt_file", "reply_file", "solution_file"):
            assert (out / r[key]).is_file()
        assert r["solution"] == str((out / r["solution_file"]).resolve())       # judged from a private copy
        sent = json.loads((out / r["prompt_file"]).read_text())
        assert [m["role"] for m in sent["messages"]] == ["system", "user"]
        assert not shows_hidden(sent["messages"][1]["content"])
    assert sorted(r["attempts"] for r in rows) == [1, 2]                         # the 429 was retried
    assert len(llm_server.requests) == 3

    config = json.loads((out / "config.json").read_text())
    assert config["model"] == "openai:test-model" and config["generation"]["backend"] == "triton"
    assert config["judge"]["trials"] == 5 and config["judge"]["time_budget_s"] == 0.2
    assert {p["id"] for p in config["problems"]} == {"1_add_scaled", "2_shifted_relu"}
    for path in out.rglob("*"):                                                   # the key is nowhere
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
    events = [json.loads(line)["event"] for line in (out / "events.jsonl").read_text().splitlines()]
    assert events[0] == "start" and events[-1] == "end" and events.count("verdict") == 2

    # (f) the folder read back by `kerneljudge score`: text, JSON, and against another baseline
    assert main(["score", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 verdicts over 2 problems" in text and "fast_1.5" in text and "generation: 2 replies" in text
    baseline = tmp_path / "compile_ms.json"
    baseline.write_text(json.dumps({"1_add_scaled": 1e6, "2_shifted_relu": 1e6}))
    assert main(["score", str(out), "--json", "--baseline", f"compile={baseline}"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["problems"] == 2 and summary["verdicts"] == {"correct": 2}
    assert summary["baselines"]["eager"]["fast_p"]["fast_0"]["value"] == 1.0
    assert summary["baselines"]["compile"]["fast_p"]["fast_1"]["value"] == 1.0   # 1e6 ms is slow to beat
    assert summary["baselines"]["eager"]["pass_at_k"]["1"]["value"] == 1.0
    assert json.loads((out / "summary.json").read_text())["rows"] == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"1_add_scaled": "fast"}')
    assert main(["score", str(out), "--baseline", str(bad)]) == 3
    assert main(["score", str(tmp_path / "nothing")]) == 3


def test_odd_replies_no_code_and_a_hack(llm_server, problems, tmp_path, cache_dir, capsys):  # noqa: F811
    unterminated = ("I will use a CUDA-like sketch first:\n```cuda\n__global__ void k() {}\n```\n"
                    "and here is the real file:\n```py\n" + ADD_SOLUTION)     # final fence never closed
    raw = ("Sure! Here is the kernel.\n\n" + RELU_SOLUTION + "\nThis should be faster than PyTorch.")
    replies = {  # (problem mark, request seed) -> reply; seed = --seed + sample tells the samples apart
        (ADD_MARK, 100): unterminated,
        (ADD_MARK, 101): "<think>plain torch is fastest to write</think>\n" + fenced(ADD_PLAIN_TORCH),
        (RELU_MARK, 100): "I am sorry, I cannot write kernels today. Perhaps try a vectorised approach.",
        (RELU_MARK, 101): raw,
    }

    def respond(request):
        mark = ADD_MARK if ADD_MARK in request.prompt else RELU_MARK
        return ("text", replies[(mark, request.body["seed"])])

    llm_server.responder = respond
    out = tmp_path / "run"
    assert main(bench_args(llm_server, problems, out, cache_dir, "--samples", "2", "--seed", "100",
                           "--no-timing")) == 0
    rows = by_item(rows_of(out))
    assert len(rows) == 4
    assert rows[("1_add_scaled", 0, 0)]["verdict"] == "correct", rows[("1_add_scaled", 0, 0)]["reason"]
    assert "truncated" in rows[("1_add_scaled", 0, 0)]["extraction_note"] or \
        "never closed" in rows[("1_add_scaled", 0, 0)]["extraction_note"]
    hack = rows[("1_add_scaled", 1, 0)]
    assert hack["verdict"] == "rejected" and not hack["accepted"] and hack["backend"] == "torch"
    none = rows[("2_shifted_relu", 0, 0)]
    assert none["verdict"] == "no_code" and none["extraction"] == "no_code" and none["accepted"] is False
    assert none["solution_file"] is None and none["judge_wait_s"] is None
    assert (out / none["reply_file"]).read_text() == replies[(RELU_MARK, 100)]
    assert not (out / "solutions" / "2_shifted_relu__s0_t0.py").exists()
    assert rows[("2_shifted_relu", 1, 0)]["verdict"] == "correct", rows[("2_shifted_relu", 1, 0)]["reason"]
    config = json.loads((out / "config.json").read_text())
    assert config["generation"]["temperature"] == 0.7                             # several samples
    assert {r.body["temperature"] for r in llm_server.requests} == {0.7}

    capsys.readouterr()
    assert main(["score", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verdicts"] == {"correct": 2, "no_code": 1, "rejected": 1}     # no_code is kept, as a failure
    assert summary["baselines"]["eager"]["fast_p"]["fast_0"]["value"] == 0.5
    assert summary["baselines"]["eager"]["pass_at_k"]["1"]["value"] == 0.5
    assert summary["generation"]["no_code"] == 1


def test_refinement_fixes_a_syntax_error_and_a_wrong_answer(llm_server, problems, tmp_path, cache_dir,  # noqa: F811
                                                            capsys):
    def respond(request):
        add = ADD_MARK in request.prompt
        if "Your previous solution" not in request.prompt:                      # turn 0
            return ("text", fenced(ADD_SYNTAX_ERROR if add else RELU_SHAPE_SPECIALIZED))
        return ("text", fenced(ADD_SOLUTION if add else RELU_SOLUTION))

    llm_server.responder = respond
    out = tmp_path / "run"
    # timing off: two solutions judged at once on two cores could draw a timing flag that blocks acceptance
    assert main(bench_args(llm_server, problems, out, cache_dir, "--turns", "3", "--judge-workers", "2",
                           "--no-timing")) == 0
    rows = by_item(rows_of(out))
    assert set(rows) == {("1_add_scaled", 0, 0), ("1_add_scaled", 0, 1), ("2_shifted_relu", 0, 0),
                         ("2_shifted_relu", 0, 1)}, [(k, r["verdict"], r["flags"]) for k, r in rows.items()]
    assert rows[("1_add_scaled", 0, 0)]["verdict"] == "build_error"
    wrong = rows[("2_shifted_relu", 0, 0)]
    assert wrong["verdict"] == "wrong_output" and "held-out shape" in wrong["reason"]   # the judge's own record
    assert "1531" in wrong["reason"]                                                  # names the shape ...
    for pid in ("1_add_scaled", "2_shifted_relu"):
        assert rows[(pid, 0, 1)]["verdict"] == "correct" and rows[(pid, 0, 1)]["accepted"], rows[(pid, 0, 1)]["reason"]
    assert len(llm_server.requests) == 4

    turn1 = {("add" if ADD_MARK in r.prompt else "relu"): r.prompt for r in llm_server.requests
             if "Your previous solution" in r.prompt}
    assert "def forward(self, a, b)\n" in turn1["add"]                             # the broken code is shown
    assert "does not parse: expected ':'" in turn1["add"] and "failed to build" in turn1["add"]  # the report
    assert "n = 165" in turn1["relu"] and "wrong output" in turn1["relu"]          # ... the model is not told it
    assert "at a shape not shown to you" in turn1["relu"] and "Mismatch" in turn1["relu"]
    for prompt in turn1.values():
        assert not shows_hidden(prompt)                                           # no held-out shape values
        assert "HELD_OUT" not in prompt
    saved = json.loads((out / "prompts" / "2_shifted_relu__s0_t1.json").read_text())
    assert saved["messages"][1]["content"] in turn1["relu"]

    capsys.readouterr()
    assert main(["score", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["turns"] == 2
    assert summary["baselines"]["eager"]["fast_p_by_turn"]["fast_0"] == {"0": 0.0, "1": 1.0}


def test_no_code_refinement_with_replay_provider(tmp_path, problems, cache_dir, capsys):
    # offline: the replay provider serves a scripted reply that holds no code, twice; nothing is judged
    replay = tmp_path / "replies"
    replay.mkdir()
    (replay / "replies.jsonl").write_text(json.dumps({"match": "", "text": "Let me think about it."}) + "\n")
    out = tmp_path / "run"
    args = ["bench", "--model", f"replay:{replay}", "--problems", str(problems), "--out", str(out), "--device", "cpu",
            "--problem-ids", "2_shifted_relu", "--turns", "2", "--cache-dir", cache_dir]
    assert main(args) == 0
    rows = rows_of(out)
    assert [(r["turn"], r["verdict"]) for r in rows] == [(0, "no_code"), (1, "no_code")]
    prompt = json.loads((out / "prompts" / "2_shifted_relu__s0_t1.json").read_text())["messages"][1]["content"]
    assert "no solution could be taken from the reply" in prompt and "(no code was extracted)" in prompt
    assert not (out / "cache").exists()                     # replay queries nothing, so caches nothing
    assert main(args) == 0                                   # resumed: nothing left to do
    assert len(rows_of(out)) == 2
    assert "2 from before" in capsys.readouterr().err


def test_interrupt_and_resume_repeat_nothing(llm_server, problems, tmp_path, cache_dir, capsys):  # noqa: F811
    def respond(request):
        if ADD_MARK in request.prompt:
            return ("text", fenced(ADD_SOLUTION))
        refine = "Your previous solution" in request.prompt
        return ("text", fenced(RELU_SOLUTION if refine else RELU_WRONG))

    llm_server.responder = respond
    out = tmp_path / "run"
    args = bench_args(llm_server, problems, out, cache_dir, "--turns", "2", "--no-timing")

    # run 1: only the first problem
    assert main(args + ["--limit", "1"]) == 0
    assert [(r["problem_id"], r["turn"]) for r in rows_of(out)] == [("1_add_scaled", 0)]
    assert len(llm_server.requests) == 1

    # run 2, a separate process: interrupted (Ctrl-C) while the relu trajectory's turn 1 is being judged
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    # Ctrl-C as a terminal delivers it: a test runner started in the background of a shell without job control
    # ignores SIGINT, its children inherit that, and the run then finished instead (three CI runs, 2026-12-07)
    proc = subprocess.Popen([sys.executable, "-m", "kerneljudge.cli.main", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    seen = []   # (replies stored, verdict lines) as the run went: the failure message shows them
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            cached = list((out / "cache").glob("??/*.json"))
            lines = (out / "verdicts.jsonl").read_text().count("\n") if (out / "verdicts.jsonl").exists() else 0
            if not seen or seen[-1] != (len(cached), lines):
                seen.append((len(cached), lines))
            if len(cached) == 3 and lines == 2:                # relu t1's reply is stored, its verdict is not
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (seen, err)
    assert "interrupted" in err and "resume" in err
    assert len(rows_of(out)) == 2
    assert len(llm_server.requests) == 3

    # run 3: finishes from the cache; no item judged twice, no request repeated
    assert main(args) == 0
    rows = rows_of(out)
    assert_unique(rows)
    assert sorted((r["problem_id"], r["turn"], r["verdict"]) for r in rows) == [
        ("1_add_scaled", 0, "correct"), ("2_shifted_relu", 0, "wrong_output"), ("2_shifted_relu", 1, "correct")]
    assert by_item(rows)[("2_shifted_relu", 0, 1)]["cached"] is True
    refine = [r.prompt for r in llm_server.requests if "Your previous solution" in r.prompt]
    assert len(refine) == 1 and "x + 0.5" in refine[0] and "output differs at [" in refine[0]  # a shown shape
    assert len(llm_server.requests) == 3
    prompts = [r.prompt for r in llm_server.requests]
    assert len(set(prompts)) == len(prompts)
    events = [json.loads(line)["event"] for line in (out / "events.jsonl").read_text().splitlines() if line.strip()]
    assert events.count("start") == 3 and "interrupted" in events

    # a resumed run must keep the folder's settings
    capsys.readouterr()
    assert main(args + ["--backend", "cpp"]) == 2
    assert "other settings" in capsys.readouterr().err
    assert len(llm_server.requests) == 3


def test_anthropic_protocol(llm_server, problems, tmp_path, cache_dir):  # noqa: F811
    llm_server.responder = good_reply
    out = tmp_path / "run"
    args = bench_args(llm_server, problems, out, cache_dir, "--problem-ids", "1_add_scaled",
                      model="anthropic:claude-test")
    assert main(args) == 0
    [row] = rows_of(out)
    assert row["verdict"] == "correct" and row["accepted"], row["reason"]
    [request] = llm_server.requests
    assert request.path == "/v1/messages" and request.protocol == "anthropic"
    assert request.body["system"] and request.body["messages"][0]["role"] == "user"
    assert row["usage"]["prompt_tokens"] > 0


def test_fatal_provider_errors_and_missing_key(llm_server, problems, tmp_path, cache_dir, capsys,  # noqa: F811
                                               monkeypatch):
    llm_server.responder = lambda request: ("status", 401)
    out = tmp_path / "run"
    assert main(bench_args(llm_server, problems, out, cache_dir)) == 1
    err = capsys.readouterr().err
    assert "refused" in err and "401" in err and KEY not in err
    assert not (out / "verdicts.jsonl").read_text().strip()
    assert len(llm_server.requests) <= 2                      # no retries on 401

    held = tmp_path / "held"                                  # another bench holds the folder
    held.mkdir()
    handle = RunFolder(held).lock()
    try:
        assert main(bench_args(llm_server, problems, held, cache_dir)) == 2
        assert "another kerneljudge bench is running" in capsys.readouterr().err
    finally:
        handle.close()

    monkeypatch.delenv("OPENAI_API_KEY")
    other = tmp_path / "nokey"
    assert main(bench_args(llm_server, problems, other, cache_dir)) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert not other.exists()


def test_rows_written_behind_the_runs_back_are_reported(llm_server, problems, tmp_path, cache_dir,  # noqa: F811
                                                        capsys):
    out = tmp_path / "run"
    fake = {"problem_id": "1_add_scaled", "sample": 0, "turn": 0, "verdict": "correct", "accepted": True,
            "speedup": 50.0}

    def respond(request):   # stands in for judged code that appends to the log while the run goes on
        if len(llm_server.requests) == 1:
            with (out / "verdicts.jsonl").open("a") as log:
                log.write(json.dumps(fake) + "\n")
        return ("text", "No code from me.")

    llm_server.responder = respond
    assert main(bench_args(llm_server, problems, out, cache_dir, "--concurrency", "1")) == 1
    assert "changed behind this run's back" in capsys.readouterr().err
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert any(e["event"] == "error" and e["stage"] == "log" for e in events)


def test_problem_selection():
    level1 = select_problems("suite", level=1, limit=3)
    assert len(level1) == 3 and all(p.level == 1 for p in level1)
    first = level1[0]
    assert [p.id for p in select_problems("suite", ids=[first.id])] == [first.id]
    assert [p.id for p in select_problems("suite", level=1, ids=[Path(first.path).stem])] == [first.id]
    with pytest.raises(BenchError, match="no problem with id"):
        select_problems("suite", level=1, ids=["level1/does_not_exist"])


class _CannedProvider:
    """Answers every request at once with the same good reply (no server: nothing to wait for but the loop)."""

    network = False

    def __init__(self):
        self.requests = 0

    async def complete(self, messages, **_):
        self.requests += 1
        await asyncio.sleep(0)            # let the other trajectories interleave, as real requests do
        return Completion(text=fenced(ADD_SOLUTION), model="test-model", usage={}, cost_usd=None, latency_s=0.0,
                          cached=False, raw_id=None, finish_reason="stop")

    async def aclose(self):
        pass


class _CannedJudge:
    """The add problem's reference cannot judge (degenerate); every relu solution is wrong."""

    async def judge_one(self, problem, path):
        await asyncio.sleep(0)
        base = {"accepted": False, "speedup": None, "problem": problem.path, "problem_id": problem.id, "flags": []}
        if "add_scaled" in problem.id:
            return {**base, "verdict": "unjudgeable", "reason": "the reference output is at rounding-noise level",
                    "problem_outcome": {"kind": "degenerate_reference", "reason": "noise", "figures": {"rms": 1e-9}}}
        return {**base, "verdict": "wrong_output", "reason": "output differs at index 3"}


def _canned_bench(problems: Path, out: Path, turns: int, lines: list):
    settings = BenchSettings(model="openai:test-model", problems=str(problems), out=str(out), samples=2, turns=turns,
                             device="cpu", backend="triton")
    bench = Bench(settings, say=lines.append)
    bench.folder.create()
    return bench


def test_an_unjudgeable_problem_is_asked_for_no_more_turns(problems, tmp_path):
    lines: list[str] = []
    out = tmp_path / "run"
    bench = _canned_bench(problems, out, 3, lines)
    plans, _ = bench.plan({})
    bench.planned = sum(3 - start for _, _, start, _ in plans)
    provider = _CannedProvider()
    asyncio.run(bench._main(provider, _CannedJudge(), plans))
    rows = rows_of(out)
    add = sorted((r["sample"], r["turn"]) for r in rows if "add_scaled" in r["problem_id"])
    relu = sorted((r["sample"], r["turn"]) for r in rows if "shifted_relu" in r["problem_id"])
    assert add == [(0, 0), (1, 0)]                      # each trajectory's first turn, then none
    assert relu == [(s, t) for s in range(2) for t in range(3)]
    assert provider.requests == 8 and bench.planned == bench.finished == 8
    stopped = [e for e in map(json.loads, (out / "events.jsonl").read_text().splitlines()) if e["event"] == "stopped"]
    assert sorted(e["sample"] for e in stopped) == [0, 1]
    assert all(e["why"] == "unjudgeable" and e["turn"] == 1 and e["turns_not_asked"] == 2
               and e["problem_outcome"]["kind"] == "degenerate_reference" for e in stopped)
    assert sum("no more turns, the problem cannot judge (degenerate_reference" in line for line in lines) == 2
    assert any("unjudgeable (degenerate_reference) - the reference output" in line for line in lines)
    assert verdict_rows.left_out(rows) == {"rows": 2, "problems": 1, "by_kind": {"degenerate_reference": 2}}
    # resumed with more turns: only the judgeable problem's trajectories go on
    again = _canned_bench(problems, out, 4, [])
    plans, skipped = again.plan({(r["problem_id"], r["sample"], r["turn"]): r for r in rows})
    assert skipped == 8 and sorted((p.id, s, t) for p, s, t, _ in plans) == [
        (pid, s, 3) for pid in {r["problem_id"] for r in rows if "relu" in r["problem_id"]} for s in range(2)]
    assert list(again.unjudgeable) == [next(r["problem_id"] for r in rows if "add_scaled" in r["problem_id"])]
