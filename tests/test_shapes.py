"""Derived small presets and held-out shapes (kerneljudge.shapes, judging/shapes.py, worker/shapes.py).

The upstream-format problems under fixtures/problems/upstream/ carry no kerneljudge metadata; plans for them
are derived once per test session and held-out mode (aligned, the default, and general) with real probe child
processes, then checked against the rules: held-out sizes keeping the benchmark sizes' alignment (aligned) or
not multiples of 8 nor of the original (general), memory no larger than the benchmark shape, axis and kernel
constants unchanged, the small preset inside its budgets, the reference running at every returned shape, and
one held-out shape far below the benchmark size in every list (threat B13). The aligned rule's pure functions
are tested in test_shapes_aligned.py.
"""

from __future__ import annotations

import argparse
import io
import math
import shutil
from contextlib import redirect_stdout

import pytest

from kerneljudge.judging import shapes as S
from kerneljudge.core.problem import read_problem
from kerneljudge.shapes import alignment as A
from kerneljudge.shapes import derive as D
from kerneljudge.shapes import roles as R
from kerneljudge.cli.shapes import register
from kerneljudge.shapes.plan import ShapePlan
from kerneljudge.shapes.scan import scan_text
from kerneljudge.suite import catalog

from .conftest import FIXTURES, ROOT

UPSTREAM = FIXTURES / "problems" / "upstream"
DERIVABLE = ["relu_4096x393216", "softmax_axis", "matmul_mkn", "conv2d_strided", "layernorm_3d",
             "multihead_attention", "sum_reduction", "hadamard_pow2", "conv2d_grouped"]
MODES = ("aligned", "general")
KEPT = {"softmax_axis": {"dim": 1}, "sum_reduction": {"dim": 1},
        "conv2d_strided": {"kernel_size": 3, "stride": 2, "padding": 1}, "multihead_attention": {"num_heads": 12},
        "conv2d_grouped": {"kernel_size": 3, "groups": 6}}


def _roles(name: str) -> tuple[dict[str, R.Role], dict[str, int]]:
    scan = scan_text((UPSTREAM / f"{name}.py").read_text())
    return R.classify(scan), {n: c.value for n, c in scan.constants.items()}


@pytest.fixture(scope="module")
def shape_cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("shape-cache"))


@pytest.fixture(scope="module")
def plans(shape_cache) -> dict[str, dict[str, ShapePlan]]:
    """plans[mode][name] for both modes that derive held-out shapes."""
    problems = [read_problem(UPSTREAM / f"{n}.py") for n in DERIVABLE]
    return {mode: dict(zip(DERIVABLE, S.resolve_many(problems, shape_cache, timeout_s=120, mode=mode)))
            for mode in MODES}


@pytest.fixture(scope="module")
def prober(shape_cache):
    """A separate probe child, to re-run the reference at the shapes a plan returned."""
    with S.ShapeWorker(shape_cache) as worker:
        def probe(name: str, overrides: dict, cpu: bool = False) -> dict:
            return worker.request({"cmd": "probe", "problem_path": str(UPSTREAM / f"{name}.py"),
                                   "overrides": overrides, "cpu": cpu, "cpu_max_bytes": S.CPU_PROBE_MAX_BYTES},
                                  120)
        yield probe


def _total(result: dict) -> int:
    return sum(result["input_bytes"]) + result["param_bytes"] + sum(result["output_bytes"])


def _elements(result: dict) -> int:
    return sum(math.prod(shape) for shape in result["input_shapes"])


def _sizes(value) -> list[int]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _follows_rule(mode: str, old: int, new: int, divisor: int) -> bool:
    """A held-out size of `old` by the mode's rule: aligned keeps its alignment; general is not a multiple of 8
    (unless the divisor is) nor of the original."""
    if mode == "aligned":
        return A.keeps_alignment(old, new, divisor)
    return new % old != 0 and new % divisor == 0 and (new % 8 != 0 or divisor % 8 == 0)


# ------------------------------------------------------------------------------------------ pure rules


@pytest.mark.parametrize("name,kept", sorted(KEPT.items()))
def test_axis_kernel_and_head_constants_are_kept(name, kept):
    roles, _ = _roles(name)
    for constant in kept:
        assert roles[constant].kind == R.KEEP, roles[constant]


@pytest.mark.parametrize("value,divisor", [(4096, 1), (393216, 1), (4095, 1), (768, 12), (512, 8), (16, 1), (3, 1)])
def test_nearby_values(value, divisor):
    for up in (False, True):
        new = D.nearby(value, divisor, up=up)
        assert new is not None and (new > value if up else new < value)
        assert new % divisor == 0 and new % value != 0
        assert new % 8 != 0 or divisor % 8 == 0
    assert D.nearby(2, 1) is None   # nothing below 2 is a usable size


def test_far_below_values_are_odd_units_above_the_floor():
    assert D.far_below_value(32768, 1, 90, "odd") == 363          # 364.1 rounded down to an odd number
    assert D.far_below_value(768, 12, 10, "odd") == 60            # 5 units of 12: still a multiple of the heads
    assert D.far_below_value(4, 1, 100, "odd") == D.FAR_BELOW_FLOOR
    assert D.far_below_value(3, 1, 100, "odd") == 3               # at the floor already
    assert D.far_below_value(64, 1, 3, "even") == 18              # twice an odd number
    assert D.far_below_value(224, 1, 4, "power-of-two factors kept") == 48   # 3 x 16, 224 = 14 x 16
    for value, divisor in ((4096, 1), (393216, 1), (1000, 8), (96, 6), (50, 2)):
        for scale in (1.5, 3.0, 17.0, 1e6):
            new = D.far_below_value(value, divisor, scale, "odd")
            assert new < value and new % divisor == 0 and (new // divisor) % 2 == 1
            assert new % 8 != 0 or divisor % 8 == 0


def test_shrunk_keeps_equal_sizes_equal_and_divisors():
    scan = scan_text("batch_size = 32768\ninput_shape = (32768,)\nx = (batch_size, input_shape)\n")
    d = D.Derivation(scan, R.classify(scan))
    overrides = d.shrunk(90.0, "odd")
    assert overrides == {"batch_size": 363, "input_shape": (363,)}   # a broadcast that ties them keeps working
    scan = scan_text((UPSTREAM / "conv2d_grouped.py").read_text())
    d = D.Derivation(scan, R.classify(scan))
    for scale in (2.0, 7.0, 1000.0):
        overrides = d.shrunk(scale, "odd")
        assert overrides["in_channels"] % 6 == 0 and overrides["out_channels"] % 6 == 0
        assert overrides["height"] == overrides["width"] and overrides["height"] % 2 == 1
    assert d.top_scale() == pytest.approx(max(16 / 3, 96 / 6, 192 / 6, 128 / 3))


@pytest.mark.parametrize("name", DERIVABLE)
def test_candidates_follow_the_rules(name):
    roles, values = _roles(name)
    d = D.Derivation(scan_text((UPSTREAM / f"{name}.py").read_text()), roles, mode=D.GENERAL)
    variants = d.held_out()
    assert variants and variants[0].label.startswith("mixed")
    for variant in variants:
        for constant, new in variant.overrides.items():
            role, old = roles[constant], values[constant]
            assert role.kind in (R.BATCH, R.FEATURE), f"{constant} is {role.kind}, must not change"
            assert new != old and new % old != 0 and new % role.divisor == 0
            assert new % 8 != 0 or role.divisor % 8 == 0 or "power-of-two" in variant.label


# -------------------------------------------------------------------------------- derived, real probes


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", DERIVABLE)
def test_derived_plan_shapes(plans, prober, name, mode):
    plan = plans[mode][name]
    roles, values = _roles(name)
    assert plan.source == {"small": "derived", "held_out": "derived", "held_out_small": "derived"}, plan.notes
    assert plan.held_out and plan.held_out_small
    for kept, value in KEPT.get(name, {}).items():
        assert all(kept not in v for v in [plan.small] + plan.held_out + plan.held_out_small)
        assert values[kept] == value
    default = prober(name, {})
    for variant in plan.held_out:
        for constant, new in variant.items():
            assert _follows_rule(mode, values[constant], new, roles[constant].divisor), (constant, new)
        result = prober(name, variant)   # the reference accepts it (on the meta device) ...
        assert result["ok"], result
        assert result["structure"] == default["structure"]
        assert _total(result) <= _total(default)   # ... and it needs no more memory
    small = prober(name, plan.small, cpu=True)   # a real CPU forward, timed
    assert small["ok"], small
    assert max(small["input_bytes"]) <= D.SMALL_INPUT_BYTES
    assert sum(small["input_bytes"]) + sum(small["output_bytes"]) <= D.SMALL_IO_BYTES
    assert small["param_bytes"] <= D.SMALL_PARAM_BYTES and small["flops"] <= D.SMALL_FLOPS
    assert small["cpu_seconds"] < 1.0 and plan.measured["small"]["cpu_seconds"] <= D.SMALL_CPU_SECONDS
    for variant in plan.held_out_small:
        result = prober(name, variant, cpu=True)
        assert result["ok"] and _total(result) <= _total(small), result
    # one variant of each list is far below its base shape (the last, appended, unless a nearby aligned one
    # already is: halving four sizes gives 16x fewer elements), and the reference runs there for real
    for preset, base in (("held_out", default), ("held_out_small", small)):
        variants, far = getattr(plan, preset), plan.far_below[preset]
        assert far["source"] == "derived", plan.notes
        assert far["index"] == len(variants) - 1 or mode == "aligned", plan.notes
        result = prober(name, variants[far["index"]], cpu=True)
        assert result["ok"] and result["structure"] == default["structure"], result
        assert far["input_elements"] == _elements(result) and _elements(result) * 10 <= _elements(base)


@pytest.mark.parametrize("mode,side", [("aligned", 256), ("general", 361)])
def test_a_loss_over_32768_x_32768_gets_a_far_below_shape(shape_cache, prober, mode, side):
    # upstream HingeLoss's layout: the labels broadcast along the scores' last axis, so the two sizes are tied
    plan = S.resolve(read_problem(UPSTREAM / "hinge_loss_32768.py"), shape_cache, use_cache=False, mode=mode)
    far = plan.far_below["held_out"]
    variant = plan.held_out[far["index"]]
    assert far["source"] == "derived" and far["base_input_elements"] == 32768 * 32768 + 32768
    assert far["input_elements"] * 100 <= far["base_input_elements"]
    assert {size for value in variant.values() for size in _sizes(value)} == {side}, variant
    result = prober("hinge_loss_32768", variant, cpu=True)
    assert result["ok"] and _elements(result) == far["input_elements"], result


@pytest.mark.parametrize("mode", MODES)
def test_grouped_conv_far_below_keeps_channels_divisible(plans, mode):
    plan = plans[mode]["conv2d_grouped"]
    _, values = _roles("conv2d_grouped")
    for preset in ("held_out", "held_out_small"):
        variant = getattr(plan, preset)[plan.far_below[preset]["index"]]
        assert variant.get("in_channels", 96) % 6 == 0 and variant.get("out_channels", 192) % 6 == 0, variant
        if mode == "general":
            assert all(v % 8 for v in variant.values()), variant
    for variant in plan.held_out:   # aligned: 96 = 32 x 3 channels in 6 groups move in steps of lcm(32, 6) = 96
        assert all(_follows_rule(mode, values[k], v, 6 if "channels" in k else 1) for k, v in variant.items())


@pytest.mark.parametrize("mode,mixed", [("aligned", {"batch_size": 2048, "dim": 393344}),
                                        ("general", {"batch_size": 4095, "dim": 393217})])
def test_relu_small_preset_is_cpu_sized(plans, mode, mixed):
    plan = plans[mode]["relu_4096x393216"]
    assert plan.small["batch_size"] * plan.small["dim"] * 4 <= D.SMALL_INPUT_BYTES
    assert plan.held_out[0] == mixed   # wider rows (393344 = 3073 x 128), fewer of them


@pytest.mark.parametrize("mode", MODES)
def test_multihead_attention_keeps_embed_dim_divisible(plans, mode):
    plan = plans[mode]["multihead_attention"]
    for variant in [plan.small] + plan.held_out + plan.held_out_small:
        assert variant.get("embed_dim", 768) % 12 == 0


def test_reference_that_rejects_most_variants(plans):
    plan = plans["general"]["hadamard_pow2"]
    assert plan.held_out[0] == {"batch_size": 4095}   # every width that is not a power of two is refused
    assert plan.held_out[-1] == {"batch_size": 3}     # far below: the width left alone, the batch shrunk
    assert sum("power-of-two width" in n and "dropped" in n for n in plan.notes) >= 3
    assert all(v.get("dim", 65536) & (v.get("dim", 65536) - 1) == 0 for v in [plan.small] + plan.held_out_small)
    # the aligned rule keeps a power of two a power of two: the width changes too
    aligned = plans["aligned"]["hadamard_pow2"]
    assert aligned.held_out[0] == {"batch_size": 2048, "dim": 131072}
    assert all(A.is_power_of_two(v.get("dim", 65536)) for v in aligned.held_out + aligned.held_out_small)


def test_cache_is_used_without_a_child(plans, shape_cache):
    problem = read_problem(UPSTREAM / "layernorm_3d.py")
    with S.ShapeWorker(shape_cache) as worker:
        again = S.resolve(problem, shape_cache, worker=worker)
        assert worker.starts == 0
    assert again == plans["aligned"]["layernorm_3d"]
    assert ShapePlan.from_json(again.to_json()) == again


def test_metadata_is_kept_and_a_far_below_shape_appended(shape_cache):
    for path in (ROOT / "src/kerneljudge/data/problems/level1/47_sum_dim.py", FIXTURES / "problems" / "row_sum.py",
                 ROOT / "src/kerneljudge/data/problems/level1/108_softmax_temperature.py"):
        problem = read_problem(path)
        plan = S.resolve(problem, shape_cache, use_cache=False)
        assert plan.source == {"small": "metadata", "held_out": "metadata", "held_out_small": "metadata"}
        assert plan.small == problem.metadata["SMALL"]
        listed = problem.metadata["HELD_OUT_SMALL"]
        assert plan.held_out_small[:len(listed)] == listed
        # none of the listed variants is 10x smaller than its base shape: a derived one comes last
        for preset in ("held_out", "held_out_small"):
            far = plan.far_below[preset]
            assert far["source"] == "derived" and far["index"] == len(getattr(plan, preset)) - 1, plan.notes
            assert far["input_elements"] * 10 <= far["base_input_elements"]
        with S.ShapeWorker(shape_cache) as worker:   # probed once, then cached like a derived plan
            assert S.resolve(problem, shape_cache, worker=worker) == plan and worker.starts == 0
    # Problem.metadata misses `128256 + 1`; the plan evaluates it from the text
    assert plan.held_out[:1] == [{"batch_size": 1531, "vocab": 128257}]


def test_a_listed_variant_far_below_is_used_as_it_is(tmp_path, shape_cache):
    text = (UPSTREAM / "relu_4096x393216.py").read_text() + (
        '\nSMALL = {"batch_size": 8, "dim": 1000}\n'
        'HELD_OUT = [{"batch_size": 4095, "dim": 393217}, {"batch_size": 3, "dim": 1001}]\n'
        'HELD_OUT_SMALL = [{"batch_size": 3, "dim": 7}]\n')
    (tmp_path / "relu_listed_small.py").write_text(text)
    problem = read_problem(tmp_path / "relu_listed_small.py")
    plan = S.resolve(problem, shape_cache, use_cache=False)
    assert plan.held_out == problem.metadata["HELD_OUT"] and plan.held_out_small == problem.metadata["HELD_OUT_SMALL"]
    assert plan.far_below["held_out"] == {"index": 1, "source": "metadata", "input_elements": 3003,
                                          "base_input_elements": 4096 * 393216}
    assert plan.far_below["held_out_small"]["index"] == 0 and plan.far_below["held_out_small"]["source"] == "metadata"


@pytest.mark.suite
def test_every_bundled_problem_gets_a_far_below_shape(tmp_path_factory):
    problems = catalog.list_problems()
    plans = S.resolve_many(problems, str(tmp_path_factory.mktemp("suite-shapes")), timeout_s=120)
    unsized, short = [], []
    for problem, plan in zip(problems, plans):
        for preset, key in (("held_out", "HELD_OUT"), ("held_out_small", "HELD_OUT_SMALL")):
            assert len(getattr(plan, preset)) >= len(problem.metadata.get(key) or []), problem.id   # all kept
        far = plan.far_below.get("held_out")
        if far is None:
            unsized.append(problem.id)
            assert any("could not be checked at its default shape" in n for n in plan.notes), (problem.id, plan.notes)
            continue
        if far["input_elements"] * 10 > far["base_input_elements"]:
            # aligned sizes the reference rejects (swin's 56 = 8 x 7 must stay a multiple of its window of 7,
            # which only 56 is of the multiples of 8 below it): the smallest it accepts, and the note says so
            short.append(problem.id)
            assert any("far below" in n and "the smallest accepted" in n for n in plan.notes), (problem.id, far)
            assert far["input_elements"] < far["base_input_elements"], (problem.id, far)
        small = plan.far_below.get("held_out_small")
        assert small is None or small["input_elements"] < small["base_input_elements"], (problem.id, small)
    # only references whose inputs need data (.item() in get_inputs) cannot be sized at the default shape
    assert len(unsized) <= 3, unsized
    assert len(short) <= 2, short   # 2026-12-07, aligned rule: level3/29_swin_window_attention (8x) only


def test_partial_metadata_is_completed(tmp_path, shape_cache):
    text = (UPSTREAM / "relu_4096x393216.py").read_text() + '\nSMALL = {"batch_size": 8, "dim": 1000}\n'
    (tmp_path / "relu_small_only.py").write_text(text)
    plan = S.resolve(read_problem(tmp_path / "relu_small_only.py"), shape_cache, use_cache=False, mode="general")
    assert plan.source == {"small": "metadata", "held_out": "derived", "held_out_small": "derived"}
    assert plan.small == {"batch_size": 8, "dim": 1000}
    assert plan.held_out_small[0] == {"batch_size": 7, "dim": 1001}   # derived from SMALL, not from the default
    aligned = S.resolve(read_problem(tmp_path / "relu_small_only.py"), shape_cache, use_cache=False)
    assert aligned.held_out_small[0] == {"batch_size": 4, "dim": 1016}   # 1000 = 8 x 125 -> 8 x 127


def test_no_constants_gives_an_empty_plan_without_a_child(shape_cache):
    with S.ShapeWorker(shape_cache) as worker:
        plan = S.resolve(read_problem(UPSTREAM / "no_constants.py"), shape_cache, worker=worker)
        assert worker.starts == 0
    assert plan.source == {"small": "none", "held_out": "none", "held_out_small": "none"}
    assert plan.small == {} and not plan.held_out and "no module-level integer size constants" in plan.notes[0]


def test_crashing_probe_gives_an_empty_plan_and_is_not_cached(shape_cache):
    problem = read_problem(UPSTREAM / "crash_probe.py")
    for _ in range(2):
        with S.ShapeWorker(shape_cache) as worker:
            plan = S.resolve(problem, shape_cache, worker=worker)
            assert worker.starts == 1   # the second call probes again: a failure is not cached
        assert plan.source == {"small": "none", "held_out": "none", "held_out_small": "none"}
        assert not plan.held_out and "probe failed" in plan.notes[0] and "status 17" in plan.notes[0]


def test_hanging_probe_times_out_into_an_empty_plan(tmp_path, shape_cache):
    text = (UPSTREAM / "relu_4096x393216.py").read_text().replace(
        "def get_inputs():\n", "def get_inputs():\n    import time\n    time.sleep(600)\n")
    (tmp_path / "relu_hangs.py").write_text(text)
    plan = S.resolve(read_problem(tmp_path / "relu_hangs.py"), shape_cache, timeout_s=3, use_cache=False)
    assert plan.source["held_out"] == "none" and "timed out after 3 s" in plan.notes[0]


def test_shapes_command(plans, shape_cache, tmp_path):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    copy = tmp_path / "layernorm_3d.py"
    shutil.copy(UPSTREAM / "layernorm_3d.py", copy)   # same text, so the cached plan serves it
    for extra in (["--json"], []):
        args = parser.parse_args(["shapes", "--problem", str(copy), "--cache-dir", shape_cache] + extra)
        out = io.StringIO()
        with redirect_stdout(out):
            assert args.func(args) == 0
        if extra:
            assert ShapePlan.from_json(out.getvalue()) == plans["aligned"]["layernorm_3d"]
        else:
            assert "held_out_small  derived" in out.getvalue() and "CPU forward" in out.getvalue()
            assert out.getvalue().count("<- far below (derived)") == 2
    for mode in ("general", "none"):
        args = parser.parse_args(["shapes", "--problem", str(copy), "--cache-dir", shape_cache, "--held-out", mode,
                                  "--json"])
        out = io.StringIO()
        with redirect_stdout(out):
            assert args.func(args) == 0
        plan = ShapePlan.from_json(out.getvalue())
        if mode == "general":
            assert plan == plans["general"]["layernorm_3d"]
        else:   # upstream's semantics: the small preset only, the notes say why
            assert plan.small == plans["aligned"]["layernorm_3d"].small and plan.source["held_out"] == "none"
            assert not plan.held_out and not plan.held_out_small and not plan.far_below
            assert any("held-out shapes: none" in n for n in plan.notes)
    args = parser.parse_args(["shapes", "--problem", str(tmp_path / "missing.py")])
    assert args.func(args) == 3
