"""The command-line contract: one JSON object on stdout with --json, exit codes, run + resume."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from .conftest import FIXTURES

PROBLEM = FIXTURES / "problems" / "scale_relu.py"
TORCH_SOLUTION = FIXTURES / "solutions" / "torch_plain.py"
WRONG = FIXTURES / "solutions" / "wrong_returns_input.py"


def kj(*args, cache_dir):
    cmd = [sys.executable, "-m", "kerneljudge.cli.main", *args, "--cache-dir", cache_dir, "--budget", "0.2"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_eval_json_is_exactly_one_object(cache_dir):
    proc = kj("eval", "--problem", str(PROBLEM), "--solution", str(TORCH_SOLUTION), "--device", "cpu",
              "--policy", "lenient", "--json", cache_dir=cache_dir)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1
    v = json.loads(lines[0])
    for field in ("verdict", "accepted", "speedup", "ref_ms", "sol_ms", "sol_timing", "flags", "reason",
                  "error_excerpt", "device_name", "versions", "problem_sha256", "solution_sha256"):
        assert field in v
    assert v["verdict"] == "correct" and v["accepted"] is True and v["speedup"] > 0


def test_eval_wrong_solution_still_exits_zero(cache_dir):
    proc = kj("eval", "--problem", str(PROBLEM), "--solution", str(WRONG), "--device", "cpu", "--json",
              "--no-timing", cache_dir=cache_dir)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] in ("wrong_output", "rejected")


def test_bad_usage_and_missing_files(cache_dir, tmp_path):
    assert kj("eval", "--problem", str(PROBLEM), cache_dir=cache_dir).returncode == 2
    assert kj("eval", "--problem", str(PROBLEM), "--solution", str(WRONG), "--precision", "fp8",
              cache_dir=cache_dir).returncode == 2
    missing = kj("eval", "--problem", str(tmp_path / "nope.py"), "--solution", str(WRONG), cache_dir=cache_dir)
    assert missing.returncode == 3 and "does not exist" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("this is not python(\n")
    bad = kj("eval", "--problem", str(broken), "--solution", str(WRONG), cache_dir=cache_dir)
    assert bad.returncode == 3 and "not valid Python" in bad.stderr


def test_run_appends_and_resumes(cache_dir, tmp_path):
    problems = tmp_path / "problems"
    solutions = tmp_path / "solutions"
    problems.mkdir()
    solutions.mkdir()
    shutil.copy(PROBLEM, problems / "scale_relu.py")
    shutil.copy(TORCH_SOLUTION, solutions / "scale_relu__torch.py")
    shutil.copy(WRONG, solutions / "scale_relu__zeros.py")
    (solutions / "unrelated.py").write_text("x = 1\n")
    out = tmp_path / "run.jsonl"
    args = ("run", "--problems", str(problems), "--solutions", str(solutions), "--out", str(out),
            "--device", "cpu", "--policy", "lenient", "--no-timing")
    first = kj(*args, cache_dir=cache_dir)
    assert first.returncode == 0, first.stderr
    assert "skipped unrelated.py" in first.stderr
    assert "fast_0=0.50" in first.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["verdict"] for r in rows) == ["correct", "wrong_output"]
    # a torn last line (a crash mid-write) must not break the resume
    with out.open("a") as f:
        f.write('{"verdict": "corr')
    second = kj(*args, cache_dir=cache_dir)
    assert second.returncode == 0, second.stderr
    assert "2 verdict(s) already in" in second.stderr
    assert "fast_0=0.50" in second.stdout
