"""The trusted builder, with real boxed builds.

Most builds here are a one-line C function without torch's headers (a few seconds each); one test builds a
real torch extension through the solution-side wrapper, as a solution's load_inline would.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kerneljudge.judging.build.request import MAX_SOURCE_BYTES, BuildRefused, validate
from kerneljudge.judging.build.store import Builder
from kerneljudge.worker import builds

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

TINY = {"kind": "inline", "name": "kj_twice", "cpp_sources": ['extern "C" int kj_twice(int x) { return 2 * x; }'],
        "no_implicit_headers": True, "is_python_module": False}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELJUDGE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    return Builder(str(tmp_path_factory.mktemp("builds")), _env())


@pytest.fixture(scope="module")
def tiny(builder):
    result = builder.build(TINY, 300)
    assert result.ok, result.log
    return result


def _writable(path: str) -> bool:
    return bool(os.lstat(path).st_mode & 0o222)


def test_builds_once_then_reuses_a_read_only_folder(builder, tiny, tmp_path):
    started = builder.builds_started
    again = builder.build(dict(TINY), 300)
    assert again.ok and again.reused and again.key == tiny.key and again.sha256 == tiny.sha256
    assert builder.builds_started == started  # no process was started for it
    folder = os.path.join(builder.root, tiny.key)
    for root, dirs, files in os.walk(folder):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            assert not _writable(name), name
    copy = builder.copy_into(tiny, str(tmp_path))
    assert os.path.dirname(os.path.dirname(copy)) == str(tmp_path) and copy != tiny.so_path
    assert ctypes.CDLL(copy).kj_twice(21) == 42


def test_a_changed_build_is_never_reused(builder, tiny, tmp_path):
    key = dict(TINY, extra_cflags=["-DKJ_TAMPER_TEST"])
    first = builder.build(key, 300)
    assert first.ok and not first.reused
    os.chmod(first.so_path, 0o700)
    with open(first.so_path, "ab") as f:
        f.write(b"planted")
    with pytest.raises(OSError):
        builder.copy_into(first, str(tmp_path))  # the copy checks the bytes against the build's hash
    started = builder.builds_started
    second = builder.build(key, 300)
    assert second.ok and not second.reused and builder.builds_started == started + 1
    assert second.sha256 == first.sha256


def test_a_compile_error_comes_back_as_text_and_is_remembered(builder):
    broken = dict(TINY, name="kj_broken", cpp_sources=["this is not C++"])
    failed = builder.build(broken, 300)
    assert not failed.ok and not failed.reused
    assert "error" in failed.log and "this is not C++" in failed.log
    assert not failed.log.startswith("Error building extension")  # the solution side adds torch's prefix
    started = builder.builds_started
    again = builder.build(broken, 300)
    assert not again.ok and again.reused and builder.builds_started == started
    assert "failed to build before" in again.log and "this is not C++" in again.log


@pytest.mark.parametrize("change, why", [
    ({"name": 123}, "name"), ({"name": "../x"}, "identifier"), ({"cpp_sources": "int x;"}, "cpp_sources"),
    ({"cpp_sources": ["x" * (MAX_SOURCE_BYTES + 1)]}, "MB"), ({"extra_cflags": ["-O2\nrule x"]}, "one line"),
    ({"extra_cflags": [1]}, "string"), ({"with_cuda": "yes"}, "with_cuda"), ({"build_directory": "/tmp"}, "unknown"),
    ({"kind": "shell"}, "kind"), ({"functions": {"a b": "x"}}, "identifier"), ({"cpp_sources": ["a\x00b"]}, "NUL"),
])
def test_malformed_requests_are_refused(builder, change, why):
    started = builder.builds_started
    with pytest.raises(BuildRefused, match=why):
        builder.build({**TINY, **change}, 60)
    assert builder.builds_started == started
    with pytest.raises(BuildRefused, match="name"):
        validate({"kind": "files", "name": "x", "sources": [{"name": "../evil.cpp", "text": ""}]})


def test_a_malicious_wrapper_flag_cannot_write_outside_its_folder(builder, tiny, cache_dir):
    """-wrapper runs every compiler step under a program of the solution's choice: here /bin/sh running
    the source itself (a shell script that is also valid C++), which tries to write elsewhere."""
    token = secrets.token_hex(6)
    other = os.path.join(builder.root, tiny.key, "build")
    targets = [os.path.join(other, f"planted-{token}"), os.path.join(os.path.expanduser("~"), f".kj-planted-{token}"),
               os.path.join(cache_dir, f"planted-{token}"), os.path.join(builder.root, f"{tiny.key}.json")]
    script = "\n".join(["#if 0", *(f"echo planted > {t}" for t in targets), f"cp /dev/null {tiny.so_path}",
                        "echo ran > ran.txt", 'exec "$@"', "#endif",
                        'extern "C" int kj_wrapped() { return 7; }'])
    request = {**TINY, "name": "kj_wrapped", "cpp_sources": [script], "extra_cflags": ["-wrapper", "/bin/sh,main.cpp"]}
    marker_before = Path(targets[-1]).read_text()
    try:
        result = builder.build(request, 300)
    finally:
        planted = [t for t in targets[:-1] if os.path.exists(t)]
        for t in planted:
            os.unlink(t)
    assert result.ok, result.log  # the wrapper ran (ran.txt below) and exec'd the real compiler
    assert os.path.exists(os.path.join(builder.root, result.key, "build", "ran.txt"))
    assert planted == []
    assert Path(targets[-1]).read_text() == marker_before
    assert builder.build(TINY, 300).reused  # the other build is untouched (its hash still matches)


def _build_processes(folder: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if folder.encode() in f.read():
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def test_a_judge_killed_mid_build_leaves_debris_that_is_wiped_and_built_once_by_two_threads(builder):
    request = dict(TINY, extra_cflags=["-DKJ_KILLED_BUILD"])
    key = builder.key(validate(request))
    folder = os.path.join(builder.root, key)
    script = ("import json, os; from kerneljudge.judging.build.store import Builder; "
              f"Builder({builder.root!r}, dict(os.environ)).build(json.loads({json.dumps(request)!r}), 300)")
    judge = subprocess.Popen([sys.executable, "-c", script], env=_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and judge.poll() is None and not _build_processes(folder):
            time.sleep(0.05)
        assert _build_processes(folder), "the build never started"
    finally:
        os.killpg(judge.pid, signal.SIGKILL)
        judge.wait()
    deadline = time.monotonic() + 20  # the launcher dies with the judge, the PID namespace with it
    while time.monotonic() < deadline and _build_processes(folder):
        time.sleep(0.1)
    assert not _build_processes(folder), "the build outlived the judge that started it"
    assert os.path.isdir(folder) and not os.path.exists(os.path.join(builder.root, f"{key}.json"))
    junk = os.path.join(folder, "build", "junk")
    os.makedirs(junk, exist_ok=True)
    os.chmod(junk, stat.S_IRUSR | stat.S_IXUSR)
    started = builder.builds_started
    results = []
    threads = [threading.Thread(target=lambda: results.append(builder.build(request, 300))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.ok for r in results) and sorted(r.reused for r in results) == [False, True]
    assert builder.builds_started == started + 1
    assert not os.path.exists(junk)


def test_the_solution_side_wrapper_builds_through_the_judge(builder, tmp_path, monkeypatch):
    """load_inline in a solution becomes a request; the extension comes back as a module, as with torch."""
    import torch
    import torch.utils.cpp_extension as cpp_extension

    monkeypatch.setattr(cpp_extension, "load_inline", cpp_extension.load_inline)  # restored after the test
    monkeypatch.setattr(cpp_extension, "load", cpp_extension.load)
    requests = []

    def request_build(request):
        requests.append(request)
        result = builder.build(json.loads(json.dumps(request)), 600)  # what crosses the channel: JSON
        if not result.ok:
            raise builds.BuildFailed(result.log)
        return builder.copy_into(result, str(tmp_path))

    builds.install(request_build)
    source = "torch::Tensor kj_add_one(torch::Tensor x) { return x + 1; }"
    module = cpp_extension.load_inline(name="kj_wrapper_test", cpp_sources=source, functions=["kj_add_one"],
                                       verbose=True, build_directory="/ignored")
    assert torch.equal(module.kj_add_one(torch.zeros(3)), torch.ones(3))
    assert requests[0]["functions"] == {"kj_add_one": "kj_add_one"} and "build_directory" not in requests[0]
    with pytest.raises(RuntimeError, match=r"(?s)Error building extension 'kj_broken': .*error"):
        cpp_extension.load_inline(name="kj_broken", cpp_sources=["this is not C++"], no_implicit_headers=True,
                                  is_python_module=False)
    file = tmp_path / "twice.cpp"
    file.write_text(TINY["cpp_sources"][0])
    path = cpp_extension.load(name="kj_twice", sources=[str(file)], is_python_module=False)
    assert ctypes.CDLL(path).kj_twice(4) == 8
    assert requests[-1]["sources"] == [{"name": "twice.cpp", "text": TINY["cpp_sources"][0]}]
    with pytest.raises(TypeError):
        cpp_extension.load_inline("kj_x", ["int x;"], not_an_argument=1)


def test_a_build_started_beside_running_ones_runs_at_a_lower_priority(tmp_path, monkeypatch):
    """The first builds of a wave keep nice 10 and finish first; each started beside n running builds gets
    10 + n (at most 19); once they end, the next build is back at 10."""
    builder = Builder(str(tmp_path / "builds"), _env(), cores=tuple(range(12)))   # 12 build slots
    release, seen = threading.Event(), []

    def run(key, request, deadline, nice):
        seen.append(nice)
        release.wait(30)
        return builder._failure(key, request, "not built (test)", 0.0)

    monkeypatch.setattr(builder, "_run", run)
    requests = [{**TINY, "name": f"kj_wave{i}", "cpp_sources": [f'extern "C" int kj_wave{i}(void) {{ return {i}; }}']}
                for i in range(12)]
    threads = []
    for i, request in enumerate(requests[:11]):
        threads.append(threading.Thread(target=builder.build, args=(request, 60)))
        threads[-1].start()
        deadline = time.monotonic() + 20
        while len(seen) < i + 1 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert seen == [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 19]
    release.set()
    for t in threads:
        t.join(30)
    builder.build(requests[11], 60)
    assert seen[-1] == 10
