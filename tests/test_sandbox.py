"""The box, with real processes: what a boxed child can and cannot do (tests/sandbox_actions.py acts inside).

Every refusal is checked as a PermissionError (not a missing folder), next to an allowed action in the
same process, so a test cannot pass because the child failed for another reason.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.sandbox import BoxSpec, describe, launch, probe, spec
from kerneljudge.sandbox.probing import LAYERS

from .conftest import wait_for

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
PACKAGE = ROOT / "src" / "kerneljudge"


class Box:
    """One solution's folders, a neighbour's, and how to run sandbox_actions in the box."""

    def __init__(self, root: Path):
        self.scratch = str(root / "scratch")
        self.other = str(root / "other_scratch")
        os.makedirs(self.other)
        self.secret = os.path.join(self.other, "source.py")
        Path(self.secret).write_text("another solution's source")
        spec.prepare_scratch(self.scratch)
        self.exchange = tempfile.mkdtemp(prefix="kj-out-test-", dir="/dev/shm")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELJUDGE_")}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(TESTS)])
        env.update(TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="", **extra)
        return spec.boxed_env(env, self.scratch)

    def box(self, gpu: bool = False) -> BoxSpec:
        return spec.solution_box(self.scratch, self.exchange, extra_read=[str(TESTS)], gpu=gpu)

    def command(self, actions: list, landlock_mode: str = "start") -> list[str]:
        return launch.argv(self.box(), "sandbox_actions", [json.dumps(actions)], landlock_mode=landlock_mode)

    def run(self, actions: list, landlock_mode: str = "start", timeout: float = 180) -> list[str]:
        done = subprocess.run(self.command(actions, landlock_mode), env=self.env(), capture_output=True, text=True,
                              timeout=timeout, cwd=self.scratch)
        lines = done.stdout.strip().splitlines()
        assert lines, f"the boxed child printed nothing (status {done.returncode}): {done.stderr[-2000:]}"
        results = json.loads(lines[-1])
        assert len(results) == len(actions), done.stderr[-2000:]
        return results

    def close(self) -> None:
        shutil.rmtree(self.exchange, ignore_errors=True)


@pytest.fixture
def box(tmp_path):
    b = Box(tmp_path)
    yield b
    b.close()


def _planted(paths: list[str]) -> list[str]:
    """Paths that exist after the child ran (removed at once: the test fails, the machine stays clean)."""
    found = [p for p in paths if os.path.exists(p)]
    for p in found:
        os.unlink(p)
    return found


def test_probe_reports_every_layer_here():
    report = probe()
    assert report.complete, describe(report)
    assert report.layers == LAYERS
    assert report.landlock_abi >= 1
    assert "complete" in describe(report)


def test_writes_outside_scratch_and_exchange_are_refused(box, cache_dir):
    token = secrets.token_hex(6)
    torch_dir = os.path.dirname(__import__("torch").__file__)
    refused = [os.path.join(os.path.expanduser("~"), f".kj-planted-{token}"),
               os.path.join(cache_dir, f"planted-{token}.json"),
               os.path.join(torch_dir, f"planted_{token}.py"),
               os.path.join(PACKAGE, f"planted_{token}.py"),
               os.path.join(box.other, f"planted-{token}"),
               os.path.join("/dev/shm", f"kj-planted-{token}"),
               os.path.join("/tmp", f"kj-planted-{token}")]
    allowed = [os.path.join(box.scratch, "mine"), os.path.join(box.exchange, "out1.bin")]
    actions = [["write", p] for p in allowed + refused] + [["mkdir", os.path.join(box.other, "d")]]
    try:
        results = box.run(actions)
    finally:
        planted = _planted(refused)
    assert results[:2] == ["ok", "ok"]
    assert results[2:] == ["PermissionError"] * (len(refused) + 1)
    assert planted == []


def test_reads_of_other_folders_are_refused(box, cache_dir):
    cached = os.path.join(cache_dir, f"reference-times-{secrets.token_hex(4)}.json")
    Path(cached).write_text('{"ref_ms": 1.0}')
    with tempfile.NamedTemporaryFile("w", dir=os.path.expanduser("~"), prefix=".kj-secret-", delete=False) as f:
        f.write("home secret")
    try:
        results = box.run([["list", box.scratch], ["read", box.secret], ["list", box.other], ["read", cached],
                           ["list", cache_dir], ["read", f.name], ["list", "/dev/shm"], ["list", "/tmp"]])
    finally:
        os.unlink(cached)
        os.unlink(f.name)
    assert results[0].startswith("ok:")
    assert results[1:] == ["PermissionError"] * 7


def test_no_network_even_to_a_local_listener(box):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # control: the listener is reachable from outside the box
        results = box.run([["tcp", port]])
    assert results[0] != "ok"
    assert results[0] in ("OSError", "PermissionError", "ConnectionRefusedError", "TimeoutError")


def _daemon_pids(token: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if token.encode() in f.read().split(b"\0"):
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def test_a_setsid_daemon_dies_when_the_launcher_is_killed(box):
    token = f"kj-daemon-{secrets.token_hex(6)}"
    proc = subprocess.Popen(box.command([["daemon", token], ["sleep", 120]]), env=box.env(), cwd=box.scratch,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: _daemon_pids(token)), "the daemon never started"
        os.killpg(proc.pid, signal.SIGKILL)  # what the judge does to a child: its process group
        proc.wait(timeout=10)
        assert wait_for(lambda: not _daemon_pids(token), 10), "the daemon outlived the box"
    finally:
        for pid in _daemon_pids(token):
            os.kill(pid, signal.SIGKILL)


def test_a_daemon_dies_when_the_boxed_process_exits(box):
    token = f"kj-daemon-{secrets.token_hex(6)}"
    assert box.run([["daemon", token]]) == ["ok"]
    try:
        assert wait_for(lambda: not _daemon_pids(token), 10), "the daemon outlived the box"
    finally:
        for pid in _daemon_pids(token):
            os.kill(pid, signal.SIGKILL)


def test_control_without_the_box_the_daemon_survives(box):
    """Shows the two tests above can fail: the same child, unboxed, leaves its daemon running."""
    token = f"kj-daemon-{secrets.token_hex(6)}"
    proc = subprocess.Popen([sys.executable, "-m", "sandbox_actions", json.dumps([["daemon", token], ["sleep", 120]])],
                            env=box.env(), cwd=box.scratch, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: _daemon_pids(token))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        time.sleep(0.5)
        assert _daemon_pids(token), "expected the unboxed daemon to survive"
    finally:
        for pid in _daemon_pids(token):
            os.kill(pid, signal.SIGKILL)


def test_torch_triton_and_gcc_work_in_the_box(box):
    results = box.run([["triton", "cpu"], ["gcc", os.path.join(box.scratch, "tmp")], ["getpid", 0],
                       ["signal", os.getpid()]])
    assert results[:2] == ["ok", "ok"]
    assert results[2] == "ok:2"  # PID 1 is the box's init
    assert results[3] == "ProcessLookupError"  # the judge's processes are not even visible


def test_exit_status_signals_and_inherited_pipes_pass_through(box):
    assert subprocess.run(box.command([["exit", 7]]), env=box.env(), cwd=box.scratch).returncode == 7
    killed = subprocess.run(box.command([["selfsignal", int(signal.SIGTERM)]]), env=box.env(), cwd=box.scratch)
    assert killed.returncode == -signal.SIGTERM
    read_end, write_end = os.pipe()
    started = time.monotonic()
    proc = subprocess.Popen(box.command([["pipe", write_end]]), env=box.env(), cwd=box.scratch,
                            pass_fds=(write_end,), stdout=subprocess.DEVNULL)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 100):  # ends when the worker is gone: no other process keeps the pipe
        data += chunk
    os.close(read_end)
    assert proc.wait(timeout=30) == 0
    assert data == b"through the pipe"
    assert time.monotonic() - started < 60


def _without_network_namespace(command: list[str]) -> list[str]:
    """The same launch, in an interpreter where entering a network namespace fails with EPERM (as in a
    container that forbids it)."""
    script = ("import errno, runpy, sys; from kerneljudge.sandbox import namespaces\n"
              "def refuse(): raise OSError(errno.EPERM, 'unshare(network): Operation not permitted')\n"
              "namespaces.enter_network_namespace = refuse\n"
              "sys.argv = sys.argv[1:]; runpy.run_module('kerneljudge.sandbox.launch', run_name='__main__')")
    return [command[0], "-c", script, *command[3:]]


def test_a_missing_layer_is_skipped_and_recorded_unless_required(box):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        command = _without_network_namespace(box.command([["record", 0], ["tcp", port]]))
        done = subprocess.run(command, env=box.env(), capture_output=True, text=True, timeout=120, cwd=box.scratch)
    record, tcp = json.loads(done.stdout.strip().splitlines()[-1])
    seen = json.loads(record[3:])
    assert "netns" in seen["missing"] and "netns" not in seen["active"]
    assert {"userns", "pidns", "no_new_privs", "landlock"} <= set(seen["active"])
    assert tcp == "PermissionError"  # Landlock's own TCP rule is the second wall
    required = launch.argv(box.box(), "sandbox_actions", ["[]"], require=("netns",))
    refused = subprocess.run(_without_network_namespace(required), env=box.env(), capture_output=True, text=True,
                             timeout=120, cwd=box.scratch)
    assert refused.returncode == launch.REFUSED_EXIT and "netns" in refused.stderr


def test_landlock_applied_later_restricts_from_then_on(box):
    before, after = os.path.join(box.other, "before"), os.path.join(box.other, "after")
    try:
        results = box.run([["write", before], ["apply_pending", 0], ["write", after]], landlock_mode="later")
        assert results == ["ok", "ok", "PermissionError"]
    finally:
        _planted([before, after])


def test_default_paths_leave_out_home_tmp_and_the_cache():
    read = spec.default_read_paths()
    home, cache = os.path.expanduser("~"), default_cache_dir()
    assert sys.prefix in read and str(PACKAGE) in read
    for hidden in (home, "/tmp", "/dev/shm", cache):
        assert not [p for p in read if hidden == p or hidden.startswith(p.rstrip("/") + "/")], hidden
    assert "/dev" not in read and "/dev" not in spec.device_paths()
    solution = spec.solution_box("/s", "/dev/shm/kj-out-x", extra_read=["/p.py"])
    assert spec.exposed(solution, [cache, home + "/.ssh", "/s/a", "/p.py"]) == ["/s/a", "/p.py"]
    with pytest.raises(TypeError):
        BoxSpec(read="/usr")


def test_boxed_env_moves_every_cache_into_scratch():
    env = spec.boxed_env({"PYTHONPYCACHEPREFIX": "/x", "PATH": "/usr/bin"}, "/s")
    assert env["HOME"] == "/s" and env["TMPDIR"] == "/s/tmp" and env["PATH"] == "/usr/bin"
    for key in ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "CUDA_CACHE_PATH", "XDG_CACHE_HOME"):
        assert env[key].startswith("/s/")
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and "PYTHONPYCACHEPREFIX" not in env


# the variable each solution backend's JIT cache honours (docs/backends.md)
BACKEND_CACHES = {"cupy": "CUPY_CACHE_DIR", "numba": "NUMBA_CACHE_DIR", "helion": "HELION_CACHE_DIR",
                  "inductor (helion)": "TORCHINDUCTOR_CACHE_DIR", "cute": "CUTE_DSL_CACHE_DIR",
                  "cute dumps": "CUTE_DSL_DUMP_DIR", "tilelang": "TILELANG_CACHE_DIR",
                  "tvm-ffi (tilelang)": "TVM_FFI_CACHE_DIR"}


def test_every_backend_cache_is_a_scratch_folder_the_box_makes(tmp_path):
    """The new backends' caches point into the scratch folder, over whatever the judge's own environment
    said (a user's ~/.cupy or a shared CuTe cache), and prepare_scratch has made each folder beforehand."""
    inherited = {name: f"/home/someone/{name.lower()}" for name in BACKEND_CACHES.values()}
    scratch = tmp_path / "scratch"
    env = spec.boxed_env(inherited, str(scratch))
    spec.prepare_scratch(str(scratch))
    for backend, name in BACKEND_CACHES.items():
        assert name in spec.SCRATCH_CACHE_ENV and name in spec.SCRATCH_ENV, backend
        folder = Path(env[name])
        assert folder.is_relative_to(scratch) and folder.is_dir(), (backend, folder)
    for name, folder in spec.SCRATCH_CACHE_ENV.items():
        assert folder in spec.SCRATCH_FOLDERS and env[name] == str(scratch / folder), name


def test_a_trusted_cache_is_copied_into_scratch_without_links(tmp_path):
    template = tmp_path / "template"
    (template / "triton" / "abc").mkdir(parents=True)
    (template / "triton" / "abc" / "cuda_utils.so").write_bytes(b"trusted")
    (template / "triton" / "link").symlink_to("/etc/passwd")
    scratch = tmp_path / "scratch"
    spec.prepare_scratch(str(scratch))
    assert spec.seed_scratch_cache(str(template), str(scratch)) == 1
    copy = scratch / "cache" / "triton" / "abc" / "cuda_utils.so"
    assert copy.read_bytes() == b"trusted" and not copy.is_symlink()
    assert not (scratch / "cache" / "triton" / "link").exists()
    assert spec.seed_scratch_cache(str(tmp_path / "missing"), str(scratch)) == 0


@pytest.mark.gpu
def test_cuda_and_a_triton_kernel_run_in_the_box(tmp_path):
    """Landlock at start, before CUDA is initialised: every thread CUDA starts is inside the box."""
    b = Box(tmp_path)
    try:
        env = b.env()
        env.pop("TRITON_INTERPRET")
        env.pop("CUDA_VISIBLE_DEVICES")
        actions = [["triton", "cuda"], ["write", "/dev/shm/kj-gpu-planted"]]
        command = launch.argv(b.box(gpu=True), "sandbox_actions", [json.dumps(actions)])
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=b.scratch)
        assert json.loads(done.stdout.strip().splitlines()[-1]) == ["ok", "PermissionError"], done.stderr[-3000:]
    finally:
        _planted(["/dev/shm/kj-gpu-planted"])
        b.close()
