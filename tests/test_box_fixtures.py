"""Solutions that attack the judge from inside their box (issue 10), judged for real on the CPU.

Each fixture in tests/fixtures/solutions/box/ is an honest Triton kernel that, at import, tries one route out
of its box: poisoning cached times, planting a module in the judge's package, writing into build folders,
reading the solutions next to it, opening a TCP connection, leaving a daemon behind. An attack that
succeeds doubles the solution's answer, so its verdict shows it; the test also looks at the places it
aimed for. Judged under lenient, so that the static checker (which refuses some of these under strict)
does not keep them from running. Every verdict must be what the honest kernel deserves: correct.
"""

from __future__ import annotations

import json
import os
import pwd
import socket
import threading
from pathlib import Path

import pytest

from kerneljudge import Judge, JudgeOptions
from kerneljudge.sandbox import probe

from .conftest import FIXTURES

BOX = FIXTURES / "solutions" / "box"
PROBLEM = FIXTURES / "problems" / "scale_relu.py"
PLANTED = "kj_box_escape_planted"

pytestmark = pytest.mark.skipif(not probe().complete, reason="the box is incomplete on this machine: "
                                f"{', '.join(probe().missing)}")


@pytest.fixture(scope="module")
def judge(cache_dir):
    with Judge(JudgeOptions(device="cpu", policy="lenient", trials=3, time_budget_s=0.2, run_timeout_s=60,
                            cache_dir=cache_dir)) as session:
        yield session


def _correct(judge, name: str):
    verdict = judge.judge(PROBLEM, BOX / name)
    assert verdict.verdict == "correct" and verdict.accepted, f"{verdict.verdict}: {verdict.reason}"
    assert "unsandboxed" not in verdict.flags
    assert set(verdict.sandbox["layers"]) >= {"userns", "netns", "pidns", "landlock", "no_new_privs"}
    return verdict


def test_honest_control(judge):
    _correct(judge, "honest_control.py")


def test_cached_times_cannot_be_poisoned(judge, tmp_path):
    home_cache = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "kj-box-test"
    home_cache.mkdir(parents=True, exist_ok=True)
    planted = [home_cache / "times.json", Path(f"/tmp/kj-box-test-{os.getpid()}.json")]
    for path in planted:
        path.write_text(json.dumps({"median_ms": 1.0}))
    try:
        _correct(judge, "cache_poisoning.py")
        for path in planted:
            assert json.loads(path.read_text()) == {"median_ms": 1.0}, path
    finally:
        for path in planted:
            path.unlink(missing_ok=True)


def test_the_judges_package_cannot_be_written(judge):
    import torch

    import kerneljudge

    _correct(judge, "write_judge_package.py")
    for folder in (Path(kerneljudge.__file__).parent, Path(torch.__file__).parent.parent):
        assert not (folder / f"{PLANTED}.py").exists(), folder


def test_build_folders_and_caches_cannot_be_written(judge, cache_dir):
    _correct(judge, "write_build_folders.py")
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    for root in (Path(cache_dir), home / ".cache" / "kerneljudge", Path("/tmp"), Path("/dev/shm")):
        found = [p for p in root.glob(f"**/{PLANTED}.so")] if root.exists() else []
        assert not found, found


def test_other_solutions_cannot_be_read(judge):
    _correct(judge, "read_other_solutions.py")


def test_no_network(judge):
    accepted: list[bytes] = []
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 47563))
        server.listen()
        server.settimeout(0.2)

        def listen(stop: threading.Event) -> None:
            while not stop.is_set():
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                with conn:
                    accepted.append(conn.recv(64))

        stop = threading.Event()
        listener = threading.Thread(target=listen, args=(stop,), daemon=True)
        listener.start()
        try:
            _correct(judge, "tcp_connect.py")
        finally:
            stop.set()
            listener.join(timeout=5)
    assert accepted == []


def test_nothing_the_solution_starts_outlives_it(judge):
    _correct(judge, "daemon_outlives.py")
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"kj-box-escape-daemon" in (entry / "cmdline").read_bytes():
                alive.append(int(entry.name))
        except OSError:
            pass
    assert alive == []
