"""Suite lint and speed-of-light bounds.

(a) lint flags deliberately degenerate problems and passes good ones;
(b) the whole bundled suite lints clean at the small preset, with one worker process (@pytest.mark.suite,
    deselect with -m "not suite");
(c) the speed-of-light numbers match hand counts.
"""

from __future__ import annotations

import argparse
import json
import textwrap
import time
from pathlib import Path

import pytest

from kerneljudge.core.problem import ProblemError, read_problem
from kerneljudge.judging import roofline
from kerneljudge.suite import catalog
from kerneljudge.cli.suite import register
from kerneljudge.judging.lint import LintWorker, lint_many, lint_problem, slowest

HEADER = "import torch\nimport torch.nn as nn\n"


def _problem(body: str, inputs: str = "[torch.randn(batch, dim)]", init: str = "[]",
             constants: str = "batch = 16\ndim = 32\n") -> str:
    return (HEADER + constants + textwrap.dedent(body) +
            f"\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return {init}\n")


NO_PARAMS_INIT = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
"""


def _simple(forward: str, **kw: str) -> str:
    """A problem whose Model has no parameters and the given forward method."""
    return _problem(NO_PARAMS_INIT + textwrap.indent(textwrap.dedent(forward), "    "), **kw)

# name -> (file text, checks that must fail, or None for a clean problem)
CASES: dict[str, tuple[str, set[str] | None]] = {
    "good_linear_gelu": (_problem("""
        class Model(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x, y):
                return torch.nn.functional.gelu(self.proj(x)) * torch.sigmoid(y)
        """, inputs="[torch.randn(batch, dim), torch.randn(batch, dim)]", init="[dim]"), None),
    "good_softmax": (_simple("""
            def forward(self, x):
                return torch.softmax(3.0 * x, dim=-1)
        """), None),
    "good_argmax_int_output": (_simple("""
            def forward(self, x):
                return torch.argmax(x, dim=-1)
        """), None),
    "identity": (_simple("""
            def forward(self, x):
                return x.clone()
        """), {"not_passthrough"}),
    "constant_output": (_simple("""
            def forward(self, x):
                return torch.full_like(x, 3.0)
        """), {"depends_on_inputs", "constant_output_fails"}),
    "relu_of_rand": (_simple("""
            def forward(self, x):
                return torch.relu(x)
        """, inputs="[torch.rand(batch, dim)]"), {"not_passthrough"}),
    "ignores_input": (_problem("""
        class Model(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(dim))

            def forward(self, x):
                return torch.tanh(self.weight).expand(x.shape[0], -1).contiguous()
        """, init="[dim]"), {"depends_on_inputs"}),
    "ignores_second_input": (_simple("""
            def forward(self, x, y):
                return torch.tanh(x)                # y is never read
        """, inputs="[torch.randn(batch, dim), torch.randn(batch, dim)]"), {"depends_on_each_input"}),
    "nan_output": (_simple("""
            def forward(self, x):
                return torch.log(x)
        """), {"finite_fp32"}),
    "overflows_in_fp16": (_simple("""
            def forward(self, x):
                return torch.exp(12.0 * x)
        """), {"finite_fp16"}),
    "almost_always_zero": (_simple("""
            def forward(self, x):
                return torch.where(x > 5.0, x, torch.zeros_like(x))
        """), {"zero_output_fails", "constant_output_fails"}),
    "init_does_not_matter": (_problem("""
        class Model(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = nn.LayerNorm(dim)   # weight ones, bias zeros whatever the seed

            def forward(self, x):
                return self.norm(x)
        """, init="[dim]"), {"depends_on_init"}),
    "nondeterministic": (_simple("""
            def forward(self, x):
                import random
                return x * (1.0 + random.random())
        """), {"deterministic"}),
    "mutates_input": (_simple("""
            def forward(self, x):
                x.mul_(2.0)
                return torch.sin(x)
        """), {"inputs_unchanged"}),
    "stateful": (_problem("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("total", torch.zeros(dim))

            def forward(self, x):
                self.total += x.sum(dim=0)         # state carried from call to call
                return torch.tanh(x + self.total)
        """), {"deterministic"}),
    "raises": (_simple("""
            def forward(self, x):
                raise ValueError("broken reference")
        """), {"runs"}),
    "crashes_the_worker": (_simple("""
            def forward(self, x):
                import os
                os._exit(7)
        """), set()),
    "hangs": (_simple("""
            def forward(self, x):
                import time
                time.sleep(600)
        """), set()),
}
HANG_TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def tmp_results(tmp_path_factory, cache_dir):
    folder = tmp_path_factory.mktemp("lint_problems")
    # the crash and the hang go early: the worker must come back for the problems after them
    names = [n for n in CASES if n not in ("crashes_the_worker", "hangs")]
    names[2:2] = ["crashes_the_worker", "hangs"]
    paths = []
    for name in names:
        path = folder / f"{name}.py"
        path.write_text(CASES[name][0])
        paths.append(path)
    with LintWorker(cache_dir) as worker:
        results = lint_many(paths, timeout_s=HANG_TIMEOUT_S, progress=False, worker=worker)
        assert worker.starts == 3            # the first, then one after the crash and one after the hang
    return {Path(r["path"]).stem: r for r in results}


@pytest.mark.parametrize("name", list(CASES))
def test_lint_flags_degenerate_problems(name, tmp_results):
    result = tmp_results[name]
    expected = CASES[name][1]
    detail = json.dumps(result, indent=1, default=str)
    if expected is None:
        assert not result["degenerate"], detail
        assert result["reasons"] == [], detail
        assert all(result["checks"].values()), detail
        return
    assert result["degenerate"], detail
    assert result["reasons"], detail
    failed = {name for name, ok in result["checks"].items() if not ok}
    assert expected <= failed, detail
    if name == "crashes_the_worker":
        assert "died" in result["reasons"][0] and "status 7" in result["reasons"][0], detail
    if name == "hangs":
        assert "timed out" in result["reasons"][0], detail


def test_lint_result_shape_and_skips(tmp_results):
    good = tmp_results["good_softmax"]
    assert set(good) >= {"problem", "degenerate", "reasons", "checks", "skipped", "seconds"}
    assert good["problem"] == "good_softmax"
    assert "depends_on_init" not in good["checks"]           # no parameters: skipped, not passed
    assert any(s.startswith("depends_on_init") for s in good["skipped"])
    assert tmp_results["good_linear_gelu"]["checks"]["depends_on_init"] is True
    assert tmp_results["good_linear_gelu"]["checks"]["depends_on_each_input"] is True


def test_lint_problem_single_and_unreadable(tmp_path, cache_dir):
    path = tmp_path / "identity.py"
    path.write_text(CASES["identity"][0])
    result = lint_problem(path, preset="small", timeout_s=60, cache_dir=cache_dir)
    assert result["degenerate"] and result["checks"]["not_passthrough"] is False
    bad = tmp_path / "not_a_problem.py"
    bad.write_text("x = 1\n")
    with pytest.raises(ProblemError):
        lint_problem(bad, cache_dir=cache_dir)


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kerneljudge")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_lint_command(tmp_path, cache_dir, capsys):
    path = tmp_path / "constant.py"
    path.write_text(CASES["constant_output"][0])
    assert _cli(["lint", "--problem", str(path), "--json", "--cache-dir", cache_dir]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"problem", "degenerate", "reasons", "checks"}
    assert out["degenerate"] is True and out["checks"]["depends_on_inputs"] is False
    assert _cli(["lint", "--problem", str(tmp_path / "missing.py"), "--cache-dir", cache_dir]) == 3
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    assert _cli(["lint", "--problem", str(broken), "--cache-dir", cache_dir]) == 3
    with pytest.raises(SystemExit):
        _cli(["lint"])                       # --problem or --suite is required


# --------------------------------------------------------------------------------------- whole suite


@pytest.mark.suite
def test_whole_suite_lints_clean(cache_dir, capsys):
    problems = catalog.list_problems()
    levels = {p.level for p in problems}
    assert {1, 2, 3} <= levels
    if catalog.transformers_available() and catalog.problem_files(4):
        assert 4 in levels
    started = time.monotonic()
    with LintWorker(cache_dir) as worker:
        results = lint_many(problems, preset="small", timeout_s=120, progress=False, worker=worker)
        starts = worker.starts
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"\nlinted {len(results)} suite problems in {elapsed:.1f} s with {starts} worker process(es); "
              "slowest:")
        for pid, seconds in slowest(results, 10):
            print(f"  {seconds:7.2f} s  {pid}")
    bad = {r["problem"]: r["reasons"] for r in results if r["degenerate"]}
    assert not bad, "degenerate suite problems:\n" + "\n".join(f"  {k}: {v}" for k, v in bad.items())
    assert starts == 1


def test_catalog_lists_the_suite():
    root = catalog.suite_root()
    assert (root / "level1").is_dir()
    problems = catalog.list_problems(level=1)
    assert problems and all(p.level == 1 for p in problems)
    numbers = [p.number for p in problems]
    assert numbers == sorted(numbers)
    assert isinstance(catalog.transformers_available(), bool)


def test_catalog_skips_level4_without_transformers(monkeypatch):
    import io

    if not catalog.problem_files(4):
        pytest.skip("no level 4 problems bundled")
    monkeypatch.setattr(catalog, "transformers_available", lambda: False)
    messages = io.StringIO()
    problems = catalog.list_problems(messages=messages)
    assert problems and all(p.level != 4 for p in problems)
    assert "skipping level 4" in messages.getvalue() and "transformers" in messages.getvalue()


# ----------------------------------------------------------------------------------- speed of light


def test_h200_spec():
    spec = roofline.H200
    measured = roofline.read_ceilings(roofline.H200_CEILINGS) if roofline.H200_CEILINGS.exists() else {}
    for key in roofline.CEILING_FIELDS:
        if measured.get(key) is not None:   # the packaged measurement wins, and says where it came from
            assert getattr(spec, key) == measured[key]
            assert spec.source[key].startswith("measured ") and "H200" in spec.source[key]
        else:
            assert getattr(spec, key) == roofline.H200_DATASHEET[key]
            assert spec.source[key].startswith("datasheet")
    assert spec.peak_flops("fp32") == spec.fp32_flops and spec.peak_flops("fp32", tf32=True) == spec.tf32_flops
    assert spec.peak_flops("bf16") == spec.bf16_flops and spec.peak_flops("fp16") == spec.fp16_flops


def test_spec_from_measured_ceilings(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"gpu": "NVIDIA H200", "date": "2026-12-01T10:00:00+00:00", "driver": "580.1",
                                "torch": "2.11", "memory_bandwidth": 4.2e12, "bf16_flops": 8e14}))
    spec = roofline.spec_from("NVIDIA H200", roofline.H200_DATASHEET, roofline.read_ceilings(path))
    assert spec.memory_bandwidth == 4.2e12 and spec.bf16_flops == 8e14
    assert spec.fp32_flops == roofline.H200_DATASHEET["fp32_flops"] and spec.source["fp32_flops"] == "datasheet"
    assert spec.source["memory_bandwidth"] == "measured 2026-12-01 on NVIDIA H200, driver 580.1, torch 2.11"
    path.write_text(json.dumps({"gpu": "NVIDIA H200", "fp32_flops": -1}))
    with pytest.raises(roofline.CeilingsError):
        roofline.read_ceilings(path)
    assert roofline._packaged_ceilings(path, "H200") is None          # unusable: warned, datasheet kept
    path.write_text(json.dumps({"gpu": "NVIDIA A100", "fp32_flops": 1e13}))
    assert roofline._packaged_ceilings(path, "H200") is None          # another GPU's numbers are not the H200's


def test_sol_square_matmul_by_hand(cache_dir, tmp_path):
    problem = read_problem(catalog.suite_root() / "level1" / "1_square_matmul.py")
    n = problem.constants["N"]
    row = roofline.sol_problem(problem, cache_dir=str(tmp_path), use_cache=False)
    flops = 2 * n * n * n
    nbytes = 3 * n * n * 4                                   # A and B read, C written, fp32
    assert row["flops"] == flops
    assert row["bytes"] == nbytes
    assert row["input_bytes"] == 2 * n * n * 4 and row["param_bytes"] == 0 and row["output_bytes"] == n * n * 4
    assert row["sol_s"] == pytest.approx(max(flops / roofline.H200.fp32_flops, nbytes / roofline.H200.memory_bandwidth))
    assert row["bound_by"] == "compute"
    assert row["intensity"] == pytest.approx(flops / nbytes)
    # counting happens once; the bound for another precision reuses the counts
    counts = roofline.measure(problem, cache_dir=str(tmp_path))
    assert counts["cached"] is True
    bf16 = roofline.bound(counts, roofline.H200, "bf16")
    assert bf16["bytes"] == nbytes // 2
    assert bf16["sol_s"] == pytest.approx(max(flops / roofline.H200.bf16_flops,
                                              nbytes / 2 / roofline.H200.memory_bandwidth))


def test_sol_causal_attention_counts_only_the_unmasked_products(tmp_path):
    problem = read_problem(catalog.suite_root() / "level1" / "100_causal_attention.py")
    c = problem.constants
    b, h, s, d = c["batch_size"], c["num_heads"], c["seq_len"], c["head_dim"]
    counts = roofline.measure(problem, cache_dir=str(tmp_path), use_cache=False)
    dense = 2 * (2 * b * h * s * s * d)                        # q @ k^T and p @ v, every product
    kept = s * (s + 1) // 2 / (s * s)                          # row i keeps keys 0..i
    assert counts["flops_by_op"]["bmm"] == dense
    assert counts["flops"] == pytest.approx(dense * kept, rel=1e-9)


def test_sol_linear_with_params_and_data_dependent(tmp_path):
    linear = tmp_path / "linear.py"
    linear.write_text(_problem("""
        class Model(nn.Module):
            def __init__(self, dim, out):
                super().__init__()
                self.proj = nn.Linear(dim, out)

            def forward(self, x):
                return torch.relu(self.proj(x))
        """, init="[dim, out]", constants="batch = 8192\ndim = 16384\nout = 4096\n"))
    dynamic = tmp_path / "dynamic.py"
    dynamic.write_text(_simple("""
        def forward(self, x):
            return x[torch.nonzero(x > 0, as_tuple=True)]
        """))
    row, dyn = roofline.sol_many([linear, dynamic], cache_dir=str(tmp_path), use_cache=False)   # one worker

    b, k, m = 8192, 16384, 4096
    assert row["flops"] == 2 * b * k * m                    # the bias add and relu count zero
    assert row["bytes"] == 4 * (b * k + k * m + m + b * m)
    assert row["param_bytes"] == 4 * (k * m + m)
    assert row["notes"] == []

    assert dyn["flops"] is None and any("flops unknown" in n for n in dyn["notes"])
    assert dyn["bytes"] == 16 * 32 * 4 and dyn["bound_by"] == "memory"


def test_suite_command(cache_dir, capsys):
    assert _cli(["suite", "--level", "1", "--json", "--cache-dir", cache_dir]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == len(catalog.problem_files(1))
    square = next(r for r in rows if r["problem"] == "level1/1_square_matmul")
    assert square["flops"] == 2 * 4096 ** 3 and square["sol_ms"] > 0
    assert {"problem", "level", "category", "flops", "bytes", "intensity", "sol_ms"} <= set(square)
    assert _cli(["suite", "--level", "1", "--cache-dir", cache_dir]) == 0   # table, from the cached counts
    table = capsys.readouterr().out
    assert "level1/1_square_matmul" in table and "SOL ms" in table
