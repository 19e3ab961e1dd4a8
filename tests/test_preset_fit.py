"""A preset fitted to the device's memory (issue 31, item 7): kerneljudge.shapes.fit, its wiring into the shape
plan and the verdict, and --device-memory.

The search is tested with a stand-in probe (pure); the judge end to end on the CPU, where the meta-device
estimate needs no memory: upstream's 4096 x 393216 ReLU (6.4 GB of input, about 84 GiB of judgement) under
a 1 GiB device is judged at a fitted preset, flagged, with its sizes in the verdict and its held-out shapes
derived from it.
"""

from __future__ import annotations

import argparse
import math

import pytest

from kerneljudge import Judge, JudgeOptions
from kerneljudge.cli.options import add_judge_options, judge_options, memory_size
from kerneljudge.core.problem import read_problem
from kerneljudge.judging import shapes as S
from kerneljudge.judging.device.turns import judgement_memory_budget
from kerneljudge.service.intake import BadRequest, parse_options
from kerneljudge.shapes import alignment as A
from kerneljudge.shapes import derive as D
from kerneljudge.shapes import roles as R
from kerneljudge.shapes.fit import fit_overrides
from kerneljudge.shapes.plan import PlanError, ShapePlan
from kerneljudge.shapes.scan import scan_text

from .conftest import FIXTURES

RELU = FIXTURES / "problems" / "upstream" / "relu_4096x393216.py"
RELU_TRITON = FIXTURES / "solutions" / "upstream" / "relu_triton.py"


def _derivation(text: str) -> D.Derivation:
    scan = scan_text(text)
    return D.Derivation(scan, R.classify(scan))


class StandIn:
    """A probe that sizes a model of `batch x height x width` floats (width x width weights), and rejects
    the sizes in `rejects` (constant name -> values); it records every probe."""

    def __init__(self, d: D.Derivation, rejects: dict[str, set[int]] | None = None):
        self.env, self.rejects, self.calls = dict(d.env), rejects or {}, []

    def __call__(self, overrides, flops=True, activations=False, **_):
        self.calls.append(dict(overrides))
        sizes = {**self.env, **overrides}
        if any(sizes.get(k) in v for k, v in self.rejects.items()):
            return {"ok": False, "error": "rejected"}
        data = 4 * sizes.get("batch", 1) * sizes["height"] * sizes["width"]
        return {"ok": True, "input_bytes": [data], "param_bytes": 4 * sizes["width"] ** 2,
                "activation_bytes": data if activations else 0}


def _need(result):
    return 2 * result["param_bytes"] + 14 * max(sum(result["input_bytes"]), result.get("activation_bytes", 0))


TEXT = "batch = 64\nheight = 3072\nwidth = 3072\nprint(batch, height, width)\n"   # equal: one group


def test_nothing_to_fit_when_the_default_fits():
    d = _derivation(TEXT)
    probe = StandIn(d)
    base = probe({}, activations=True)
    assert fit_overrides(d, base, _need(base), _need, probe, []) is None and len(probe.calls) == 1


@pytest.mark.parametrize("budget_gib", [16, 8, 1, 0.05])
def test_a_fitted_preset_fits_and_keeps_alignment_and_relations(budget_gib):
    d = _derivation(TEXT)
    probe = StandIn(d)
    base = probe({}, activations=True)
    budget = int(budget_gib * (1 << 30))
    notes: list[str] = []
    record, result = fit_overrides(d, base, budget, _need, probe, notes)
    fitted = record["overrides"]
    assert record["need_bytes"] == _need(result) <= budget < record["base_need_bytes"] == _need(base)
    assert record["budget_bytes"] == budget and fitted.get("height") == fitted.get("width")   # equal stay equal
    assert A.is_power_of_two(fitted.get("batch", 64)) and fitted.get("height", 3072) % 128 == 0
    assert any(n.startswith("fitted ") for n in notes)
    # the largest shape that fits: one more halving would not have been needed
    assert _need(result) * 16 > budget or fitted.get("batch", 64) <= D.BATCH_FLOOR


def test_a_size_the_reference_rejects_is_left_alone():
    d = _derivation(TEXT)
    probe = StandIn(d, rejects={"height": {1536}})   # the reference needs a height of at least 3072
    base = probe({}, activations=True)
    record, _ = fit_overrides(d, base, 1 << 30, _need, probe, [])
    assert "height" not in record["overrides"] and record["overrides"]["batch"] < 64


def test_sizes_the_reference_ties_together_are_halved_together():
    # upstream's HingeLoss: labels of batch_size broadcast against rows of input_shape, so the two must be equal
    d = _derivation("batch_size = 4096\nwidth = 4096\nprint(batch_size, width)\n")

    def probe(overrides, flops=True, activations=False):
        sizes = {**d.env, **overrides}
        if sizes["batch_size"] != sizes["width"]:
            return {"ok": False, "error": "the size of tensor a must match the size of tensor b"}
        data = 4 * sizes["batch_size"] * sizes["width"]
        return {"ok": True, "input_bytes": [data], "param_bytes": 0, "activation_bytes": data}

    base = probe({}, activations=True)
    record, _ = fit_overrides(d, base, _need(base) // 10, _need, probe, [])
    assert record["overrides"] == {"batch_size": 1024, "width": 1024}


def test_when_nothing_fits_the_smallest_accepted_is_used_and_the_note_says_so():
    d = _derivation("height = 1000\nwidth = 1000\nprint(height, width)\n")
    probe = StandIn(d)
    base = probe({}, activations=True)
    notes: list[str] = []
    record, _ = fit_overrides(d, base, 1, _need, probe, notes)
    assert record["need_bytes"] > record["budget_bytes"] == 1
    assert record["overrides"]["height"] % 8 == 0   # 1000 = 8 x 125 keeps its factor 8 all the way down
    assert "still over" in notes[-1]


def test_aligned_half():
    assert [A.aligned_half(4096, v) for v in (4096, 2048, 2)] == [2048, 1024, 2]
    assert A.aligned_half(393216, 393216) == 196608 and A.aligned_half(393216, 128) == 128
    assert A.aligned_half(1000, 1000) == 496 and A.aligned_half(768, 768, 12) == 384


def test_memory_sizes_and_the_option():
    assert memory_size("24GiB") == memory_size("24G") == memory_size("24gb") == 24 << 30
    assert memory_size("24000MiB") == 24000 << 20 and memory_size("1073741824") == 1 << 30
    for bad in ("24X", "", "-1G", "GiB"):
        with pytest.raises(argparse.ArgumentTypeError):
            memory_size(bad)
    parser = argparse.ArgumentParser()
    add_judge_options(parser)
    assert judge_options(parser.parse_args([])).device_memory is None
    assert judge_options(parser.parse_args(["--device-memory", "24GiB"])).device_memory == 24 << 30
    with pytest.raises(SystemExit):
        parser.parse_args(["--device-memory", "512MiB"])   # under the 1 GiB JudgeOptions allows
    with pytest.raises(BadRequest, match="set by the service"):   # a job cannot change the service's devices
        parse_options({"device_memory": 1 << 30}, JudgeOptions(device="cpu"), "cpu")


def test_plan_validation_of_fitted():
    good = ShapePlan(fitted={"overrides": {"n": 4}, "need_bytes": 10, "budget_bytes": 20, "base_need_bytes": 40})
    assert ShapePlan.from_json(good.to_json()) == good
    older = {k: v for k, v in ShapePlan().to_dict().items() if k != "fitted"}   # a plan cached before the field
    assert ShapePlan.from_dict(older).fitted == {}
    for bad in ({"overrides": {"n": "4"}, "need_bytes": 1, "budget_bytes": 2}, {"overrides": {"n": 4}}, [1]):
        with pytest.raises(PlanError):
            ShapePlan.from_dict({**ShapePlan().to_dict(), "fitted": bad})


def test_the_plan_fits_only_under_a_budget(cache_dir):
    problem = read_problem(RELU)
    assert S.resolve(problem, cache_dir).fitted == {}
    budget = judgement_memory_budget(1 << 30)
    plan = S.resolve(problem, cache_dir, memory_budget=budget)
    fitted = plan.fitted["overrides"]
    assert plan.fitted["need_bytes"] <= budget < plan.fitted["base_need_bytes"]
    assert A.is_power_of_two(fitted["batch_size"]) and fitted["dim"] % 128 == 0
    # the held-out shapes are derived from the fitted preset: near it, aligned with it, no larger
    elements = fitted["batch_size"] * fitted["dim"]
    for variant in plan.held_out:
        assert variant != fitted and variant["batch_size"] * variant["dim"] <= elements, variant
        assert A.is_power_of_two(variant["batch_size"]) and variant["dim"] % 128 == 0, variant
    assert plan.far_below["held_out"]["base_input_elements"] == elements
    assert math.prod(plan.held_out[plan.far_below["held_out"]["index"]].values()) * 10 <= elements


def test_a_judgement_that_cannot_fit_is_judged_at_the_fitted_preset(cache_dir):
    options = JudgeOptions(device="cpu", preset="default", device_memory=1 << 30, timing=False, trials=2,
                           run_timeout_s=240, cache_dir=cache_dir)
    with Judge(options) as judge:
        verdict = judge.judge(RELU, RELU_TRITON)
    detail = f"{verdict.verdict}: {verdict.reason} flags={verdict.flags}"
    assert verdict.verdict == "correct" and verdict.accepted, detail
    assert "preset_fitted" in verdict.flags and verdict.preset == "fitted", detail
    fitted = verdict.shapes["fitted"]
    assert verdict.shapes["preset"] == fitted["overrides"]
    assert fitted["need_bytes"] <= fitted["budget_bytes"] == judgement_memory_budget(1 << 30)
    assert fitted["base_need_bytes"] >= 14 * 4096 * 393216 * 4   # fourteen 6.4 GB inputs' worth
    assert verdict.shapes["held_out"] and verdict.shapes["far_below"] is not None
    assert all(v["batch_size"] * v["dim"] <= fitted["overrides"]["batch_size"] * fitted["overrides"]["dim"]
               for v in verdict.shapes["held_out"])
