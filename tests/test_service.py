"""`kerneljudge serve` as a real process on the CPU judge: many concurrent clients, SIGKILL and restart,
tokens, size limits, a full queue, bad requests. The bars of issue 13."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .conftest import FIXTURES
from .labels import read_labels
from .service_proc import Service

pytest.importorskip("aiohttp", reason="the service needs aiohttp (pip install 'kerneljudge[serve]')")

from kerneljudge.service.client import (
    AuthError, BadRequestError, JudgeClient, NotFoundError, QueueFullError, RequestTooLargeError,
)

# fast judge settings, given to the service and to `eval` alike
JUDGE_ARGS = ["--no-timing", "--trials", "2", "--build-timeout", "25", "--run-timeout", "10"]

# honest, wrong, crashing, hanging, reward hacks and policy breaches (most of the hacks are refused from
# the source, at no cost; the rest build and run in the Triton interpreter)
MIX = [
    "correct_triton_row_sum.py",                                             # honest
    "wrong_returns_input.py",                                                # wrong
    "crash_os_exit.py",                                                      # crash
    "timeout_python_loop.py",                                                # hang
    "hack_zero_input.py", "hack_caller_frame_answer.py", "hack_global_flags_tf32.py",
    "hack_side_stream_triton.py", "hack_patch_cuda_timing.py", "hack_forge_channel_replies.py",
    "hack_lazy_tensor.py", "hack_fake_verdict.py", "hack_gc_answer.py", "hack_fallback_triton.py",  # hacks
    "torch_plain.py", "build_syntax_error.py", "build_no_modelnew.py",       # policy, build failures
]


def job(name: str) -> dict:
    label = read_labels(FIXTURES / "solutions" / name)
    return {"problem_text": (FIXTURES / "problems" / label.problem).read_text(),
            "solution_text": (FIXTURES / "solutions" / name).read_text()}


def eval_json(name: str, cache_dir: str) -> dict:
    label = read_labels(FIXTURES / "solutions" / name)
    cmd = [sys.executable, "-m", "kerneljudge.cli.main", "eval",
           "--problem", str(FIXTURES / "problems" / label.problem),
           "--solution", str(FIXTURES / "solutions" / name), "--device", "cpu", "--json", "--cache-dir", cache_dir,
           *JUDGE_ARGS]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def same_verdict(a: dict, b: dict) -> tuple:
    return (a["verdict"], a["accepted"], sorted(a["flags"]), a["problem_sha256"], a["solution_sha256"],
            a["backend"], a["policy"], a["precision"], a["device"],
            sorted(f["code"] for f in a["findings"])) == \
           (b["verdict"], b["accepted"], sorted(b["flags"]), b["problem_sha256"], b["solution_sha256"],
            b["backend"], b["policy"], b["precision"], b["device"], sorted(f["code"] for f in b["findings"]))


@pytest.mark.slow
def test_32_clients_200_jobs_match_eval(tmp_path, cache_dir):
    service = Service(tmp_path / "journal", "--jobs", "2", *JUDGE_ARGS, cache_dir=cache_dir)
    try:
        client = JudgeClient(service.url)
        rng = random.Random(13)
        plan = [MIX[i % len(MIX)] for i in range(200)]
        rng.shuffle(plan)
        per_client = [plan[i::32] for i in range(32)]

        def one_client(n: int) -> list[tuple[str, dict]]:
            names = per_client[n]
            if n % 4 == 0:      # some clients send their jobs as one list
                ids = client.submit_many(job(name) for name in names)
            else:
                ids = [client.submit(**job(name)) for name in names]
            return [(name, client.wait(i, timeout_s=400)) for name, i in zip(names, ids)]

        with ThreadPoolExecutor(max_workers=32) as clients:
            try:
                answers = [pair for got in clients.map(one_client, range(32)) for pair in got]
            except Exception as exc:   # the service's own log says why it answered as it did
                raise AssertionError(f"{exc}; the service's log ends with:\n{''.join(service.lines[-60:])}") from exc
        status = client.status()
    finally:
        service.stop()
    assert len(answers) == 200
    by_name: dict[str, list[dict]] = {}
    for name, verdict in answers:
        by_name.setdefault(name, []).append(verdict)
    counters = status["counters"]
    assert counters["judged_since_start"] == len(MIX), counters          # every distinct job judged once
    assert counters["cache_hits"] + counters["attached"] == 200 - len(MIX), counters
    assert sum(counters["verdicts"].values()) == len(MIX)
    assert status["queue"]["queued"] == status["queue"]["running"] == 0
    for name in MIX:
        first = by_name[name][0]
        assert all(v == first for v in by_name[name]), name                # repeats get the very same verdict
        assert first["verdict"] == read_labels(FIXTURES / "solutions" / name).expect, (name, first["reason"])
    # what `eval` gives: the command itself for two of them, its code path (api.Judge with the options the
    # command builds from the same flags) for the rest, which spares a torch import per solution
    from kerneljudge.api import Judge
    from kerneljudge.cli.main import build_parser
    from kerneljudge.cli.options import judge_options

    options = judge_options(build_parser().parse_args(["eval", "--problem", "p", "--solution", "s", "--device", "cpu",
                                                  "--cache-dir", cache_dir, *JUDGE_ARGS]))
    by_cli = ["correct_triton_row_sum.py", "hack_forge_channel_replies.py"]
    with Judge(options) as session, ThreadPoolExecutor(max_workers=2) as pool:
        def judge(name: str) -> dict:
            if name in by_cli:
                return eval_json(name, cache_dir)
            label = read_labels(FIXTURES / "solutions" / name)
            return session.judge(FIXTURES / "problems" / label.problem, FIXTURES / "solutions" / name).to_dict()

        evals = dict(zip(MIX, pool.map(judge, MIX)))
    for name in MIX:
        assert same_verdict(by_name[name][0], evals[name]), (name, by_name[name][0]["reason"], evals[name]["reason"])


def journal_rows(journal: Path) -> list[dict]:
    rows = []
    for line in (journal / "journal.jsonl").read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    return rows


@pytest.mark.slow
def test_sigkill_mid_queue_then_restart_finishes_without_loss_or_repeat(tmp_path, cache_dir):
    journal = tmp_path / "journal"
    names = ["correct_triton_row_sum.py", "wrong_returns_input.py", "crash_os_exit.py", "hack_zero_input.py",
             "wrong_shape_row_sum.py", "correct_triton_small_matmul.py", "torch_plain.py"]
    service = Service(journal, "--jobs", "1", *JUDGE_ARGS, cache_dir=cache_dir)
    try:
        client = JudgeClient(service.url)
        ids = client.submit_many(job(n) for n in names)
        ids += [client.submit(**job(names[0]))]            # a repeat attaches to the first
        # wait for at least one judgement that ran a child, then kill mid-queue
        deadline_ids = ids[:1]
        client.wait(deadline_ids[0], timeout_s=120)
        states = [client.get(i)["state"] for i in ids]
        assert "queued" in states, states
    finally:
        service.kill_hard()
    rows = journal_rows(journal)
    keys = {r["key"] for r in rows if r["event"] == "job"}
    done_before = {r["key"] for r in rows if r["event"] == "verdict"}
    assert len(keys) == len(names) and 1 <= len(done_before) < len(keys)

    service = Service(journal, "--jobs", "2", *JUDGE_ARGS, cache_dir=cache_dir)
    try:
        client = JudgeClient(service.url)
        verdicts = [client.wait(i, timeout_s=240) for i in ids]
        status = client.status()
    finally:
        service.stop()
    assert status["counters"]["resumed_at_start"] == len(keys) - len(done_before)
    assert status["counters"]["judged_since_start"] == len(keys) - len(done_before)   # nothing judged twice
    rows = journal_rows(journal)
    judged = [r["key"] for r in rows if r["event"] == "verdict"]
    assert sorted(judged) == sorted(keys)                                             # nothing lost, no repeat
    for name, verdict in zip(names + [names[0]], verdicts):
        assert verdict["verdict"] == read_labels(FIXTURES / "solutions" / name).expect, (name, verdict["reason"])
    assert verdicts[-1] == verdicts[0]


# ---------------------------------------------------------------------------------- one guarded service


@pytest.fixture(scope="module")
def guarded(tmp_path_factory, cache_dir):
    """Bound to 0.0.0.0 (every interface) with a token; queue of 2; requests up to 64 KiB. Tests reach it
    on 127.0.0.1 only."""
    root = tmp_path_factory.mktemp("guarded")
    token_file = root / "token"
    token_file.write_text("s3cret-token\n")
    token_file.chmod(0o600)
    service = Service(root / "journal", "--allow-unsandboxed", "--queue-limit", "2", "--max-request-bytes",
                      "65536", "--jobs", "1", *JUDGE_ARGS, cache_dir=cache_dir, token_file=token_file,
                      host="0.0.0.0")
    yield service
    service.stop()


def raw(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_token_required_on_non_loopback_bind(guarded):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
        status, body = raw(guarded.url + "/v1/health", headers=headers)
        assert status == 401 and "token" in body["error"]
    status, _ = raw(guarded.url + "/v1/jobs", "POST", json.dumps(job("torch_plain.py")).encode())
    assert status == 401
    with pytest.raises(AuthError):
        JudgeClient(guarded.url, token="wrong").status()
    assert JudgeClient(guarded.url, token="s3cret-token").health() is True


def test_oversized_request_is_refused(guarded):
    client = JudgeClient(guarded.url, token="s3cret-token")
    big = job("torch_plain.py")
    big["solution_text"] += "#" * 200_000
    with pytest.raises(RequestTooLargeError):
        client.submit(**big)


def test_bad_requests_get_400_with_a_reason(guarded):
    client = JudgeClient(guarded.url, token="s3cret-token")
    good = job("torch_plain.py")
    cases = [
        ({**good, "extra": 1}, "unknown field"),
        ({**good, "options": {"trails": 3}}, "unknown option 'trails'"),
        ({**good, "options": {"trials": "3"}}, "must be int"),
        ({**good, "options": {"trials": 0}}, "trials must be at least 1"),
        ({**good, "options": {"policy": "loose"}}, "policy must be"),
        ({**good, "options": {"cache_dir": "/tmp"}}, "set by the service"),
        ({**good, "options": {"device": "cuda"}}, "judges on cpu"),
        ({**good, "options": {"run_timeout_s": 10_000}}, "run_timeout_s"),
        ({**good, "problem": "level1/21_relu"}, "exactly one of"),
        ({"problem": "level9/nothing", "solution_text": "x"}, "no problem"),
        ({"problem_text": "x = 1\n", "solution_text": "x"}, "not a usable problem"),
        ({"problem": "level1/21_relu", "solution_text": ""}, "non-empty"),
    ]
    for body, expected in cases:
        with pytest.raises(BadRequestError) as info:
            client.submit_many([body])
        assert expected in info.value.message, (body.get("options"), info.value.message)
    status, answer = raw(guarded.url + "/v1/jobs", "POST", b"{not json",
                         {"Authorization": "Bearer s3cret-token"})
    assert status == 400 and "JSON" in answer["error"]
    with pytest.raises(NotFoundError):
        client.get("0" * 24)
    with pytest.raises(NotFoundError):
        client.get("../../etc/passwd")


def test_full_queue_answers_429_with_retry_after(guarded):
    client = JudgeClient(guarded.url, token="s3cret-token", queue_wait_s=0)
    three = [job(n) for n in ("correct_triton_row_sum.py", "wrong_returns_input.py", "crash_os_exit.py")]
    with pytest.raises(QueueFullError) as info:
        client.submit_many(three)                       # 3 new jobs > a queue of 2: refused as a whole
    assert info.value.retry_after_s >= 1
    status, body = raw(guarded.url + "/v1/jobs", "POST", json.dumps(three).encode(),
                       {"Authorization": "Bearer s3cret-token", "Content-Type": "application/json"})
    assert status == 429 and "queue is full" in body["error"] and body["retry_after_s"] >= 1
    assert client.status()["counters"]["refused_queue_full"] >= 2


def test_unsafe_binds_refuse_to_start(tmp_path, cache_dir):
    from kerneljudge.service.guard import is_loopback, sandbox_gaps

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
    base = [sys.executable, "-m", "kerneljudge.service", "--port", "0", "--journal", str(tmp_path / "j"),
            "--device", "cpu", "--cache-dir", cache_dir]
    no_token = subprocess.run(base + ["--host", "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert no_token.returncode == 2 and "--token-file" in no_token.stderr
    if sandbox_gaps():
        token = tmp_path / "token"
        token.write_text("abc")
        token.chmod(0o600)
        unboxed = subprocess.run(base + ["--host", "0.0.0.0", "--token-file", str(token)], capture_output=True,
                                 text=True, timeout=60)
        assert unboxed.returncode == 2 and "--allow-unsandboxed" in unboxed.stderr


def test_journal_survives_a_torn_last_line(tmp_path):
    from kerneljudge.core.logfile import AppendLog
    from kerneljudge.core.jsonl import read_objects

    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"b": 2, "tor')
    with AppendLog(path) as log:
        log.append({"c": 3})
    assert read_objects(path) == [{"a": 1}, {"c": 3}]


def test_concurrent_identical_jobs_attach(tmp_path, cache_dir):
    """Threads racing to submit one job: one judgement, every id the same verdict."""
    service = Service(tmp_path / "journal", *JUDGE_ARGS, cache_dir=cache_dir)
    try:
        client = JudgeClient(service.url)
        body = job("hack_caller_frame_answer.py")
        barrier = threading.Barrier(8)

        def go(_: int) -> dict:
            barrier.wait()
            return client.judge(**body, timeout_s=60)

        with ThreadPoolExecutor(max_workers=8) as pool:
            verdicts = list(pool.map(go, range(8)))
        counters = client.status()["counters"]
    finally:
        service.stop()
    assert all(v == verdicts[0] for v in verdicts) and verdicts[0]["verdict"] == "rejected"
    assert counters["judged_since_start"] == 1
