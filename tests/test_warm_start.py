"""Solution processes forked from a warm template (judging/warm_start.py, sandbox/template.py).

A fork must look like a cold start to everything around it: its channel, its exit status and signal, its
output, its process group (kill), its box; it must hold nothing of the template's (no socket to it); and
where the template cannot serve, the process starts cold.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kerneljudge.judging import environment, warm_start
from kerneljudge.judging.child import Child
from kerneljudge.sandbox import launch, probe, spec as box_spec

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def base_env() -> dict[str, str]:
    env = environment.child_env("cpu", 1, tempfile.gettempdir())
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env["PYTHONPATH"]])  # finds tests.warm_probe
    return env


@pytest.fixture(scope="module")
def template(base_env):
    made = warm_start.Template(base_env)
    assert made.usable(), made.error
    yield made
    made.close()


def _probe(template, env, then: dict, cwd: str | None = None, spec=None) -> tuple[Child, dict]:
    child = Child("tests.warm_probe", env, cwd=cwd, template=template, spec=spec)
    reply, _ = child.request({"then": then.get("then"), **then}, timeout=120)
    return child, reply


def test_a_fork_starts_warm_with_only_its_own_descriptors(template, base_env, tmp_path):
    marker = secrets.token_hex(4)
    child, reply = _probe(template, {**base_env, "KJ_PROBE_MARKER": marker}, {"then": "exit", "code": 3},
                          cwd=str(tmp_path))
    try:
        assert child.warm and reply["torch_preloaded"]
        assert reply["marker"] == marker and reply["cwd"] == str(tmp_path)
        assert reply["pgid"] == child.proc.pid  # the group kill() ends: everything the fork starts
        kinds = {int(k): v for k, v in reply["descriptors"].items()}
        assert "socket" not in kinds.values(), kinds  # nothing leads back to the template
        assert set(kinds) <= {0, 1, 2, *reply["args"]}, kinds
        assert child.proc.wait(timeout=60) == 3
        assert child.exit_description() == "exited with status 3"
        child._drain.join(timeout=10)
        assert "probe says hello" in child.output.text()
    finally:
        child.kill()


@pytest.mark.parametrize("then, described", [("segv", "killed by SIGSEGV"), ("raise", "exited with status 1")])
def test_a_fork_ends_the_way_its_module_ended(template, base_env, then, described):
    child, _ = _probe(template, base_env, {"then": then})
    try:
        child.proc.wait(timeout=60)
        assert child.exit_description() == described
        if then == "raise":
            child._drain.join(timeout=10)
            assert "the probe raised" in child.output.text()
    finally:
        child.kill()


def test_kill_ends_a_hanging_fork(template, base_env):
    child, _ = _probe(template, base_env, {"then": "hang"})
    assert child.proc.poll() is None
    child.kill()
    assert child.proc.poll() is not None


def test_retiring_a_template_leaves_the_forks_it_made_running(base_env, capfd):
    """One fork failing its box step retires the template, but the others are other solutions' processes,
    judged right now: they die with their template, so it ends only after them (an H200 batch once lost ten
    honest solutions at once, `killed by SIGKILL` while they waited for their builds)."""
    made = warm_start.Template(base_env)
    assert made.usable(), made.error
    child, _ = _probe(made, base_env, {"then": "hang"})
    try:
        made.retire("a test retires it")
        assert "warm template was retired (a test retires it)" in capfd.readouterr().err
        with pytest.raises(warm_start.Unavailable):
            made.spawn("tests.warm_probe", base_env, None, None, 0, 1)
        assert child.proc.poll() is None and made.proc.poll() is None  # both still there
    finally:
        child.kill()
    assert made.proc.wait(timeout=30) is not None  # the last fork's end closed the template


def test_a_fork_enters_the_box(template, base_env, tmp_path):
    report = probe()
    if "userns" not in report.layers:
        pytest.skip("no user namespaces here")
    scratch = str(tmp_path / "scratch")
    box_spec.prepare_scratch(scratch)
    box = box_spec.solution_box(scratch, str(tmp_path), extra_read=[str(ROOT / "tests")])
    env = box_spec.boxed_env(base_env, scratch)
    child, reply = _probe(template, env, {"then": "exit", "code": 0}, cwd=scratch, spec=launch.make_spec(box))
    try:
        assert child.warm
        assert reply["pid"] == 2  # the box's worker under its own PID namespace's init
        assert child.proc.wait(timeout=60) == 0
    finally:
        child.kill()


def test_without_a_template_the_process_starts_cold(base_env):
    dead = warm_start.Template(base_env)
    dead.close()
    child, reply = _probe(dead, base_env, {"then": "exit", "code": 0})
    try:
        assert not child.warm and not reply["torch_preloaded"]
        assert child.proc.wait(timeout=60) == 0
    finally:
        child.kill()


def test_templates_are_shared_by_environment_but_not_by_box_folders(base_env):
    a = warm_start.template_key(box_spec.boxed_env(base_env, "/tmp/a"))
    b = warm_start.template_key(box_spec.boxed_env(base_env, "/tmp/b"))
    c = warm_start.template_key({**base_env, "CUDA_VISIBLE_DEVICES": "1"})
    assert a == b and a != c
    # every cache folder the box sets per solution (CuPy's, Helion's, the CuTe DSL's...) is left out of the key
    assert set(box_spec.SCRATCH_ENV) <= warm_start.UNKEYED


class _BrokenTemplate:
    """Forks that die before their first reply (as if the template's state were unusable)."""

    def __init__(self):
        self.retired = ""

    def spawn(self, module, env, cwd, spec, to_child_r, from_child_w):
        return subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)

    def retire(self, reason: str) -> None:
        self.retired = reason


def test_a_fork_that_fails_before_solution_code_runs_is_retried_cold(monkeypatch, cache_dir):
    from kerneljudge import Judge
    from tests.conftest import FIXTURES

    broken = _BrokenTemplate()
    monkeypatch.setattr(warm_start, "template_for", lambda env: broken)
    with Judge(device="cpu", cache_dir=cache_dir, timing=False) as judge:
        verdict = judge.judge(FIXTURES / "problems" / "row_sum.py",
                              FIXTURES / "solutions" / "correct_triton_row_sum.py")
    assert verdict.verdict == "correct", verdict.reason
    assert verdict.sandbox["started"] == "cold"
    assert "failed before any solution code ran" in broken.retired
