"""Shape rules as pure functions (no probe child): reading constants, their roles, plan validation, and the
aligned held-out rule (kerneljudge.shapes.alignment, and derive.py in mode `aligned`).

A held-out size keeps what the benchmark size gives a kernel to rely on: a power of two stays a power of two,
other sizes keep their power-of-two factor up to 128, relations between sizes hold; but every size changes,
so a hard-coded size still meets another. The held-out modes reach the options, the cache key and the CLI.
The general rule's pure functions and every derivation with real probes are in test_shapes.py.
"""

from __future__ import annotations

import argparse
import json

import pytest

from kerneljudge.cli.options import add_judge_options, judge_options
from kerneljudge.core.types import HELD_OUT_MODES, JudgeOptions
from kerneljudge.judging.shape_cache import cache_key
from kerneljudge.service.intake import BadRequest, parse_options
from kerneljudge.shapes import alignment as A
from kerneljudge.shapes import derive as D
from kerneljudge.shapes import roles as R
from kerneljudge.shapes.plan import PlanError, ShapePlan
from kerneljudge.shapes.scan import scan_text

from .conftest import FIXTURES

UPSTREAM = FIXTURES / "problems" / "upstream"
POWERS = [1 << k for k in range(1, 21)]
OTHERS = [(1000, 1), (4095, 1), (393216, 1), (1088, 64), (24, 1), (1792, 1), (768, 12), (96, 6), (192, 6), (10, 1)]


def _valuation(value: int) -> int:
    return (value & -value).bit_length() - 1


def _roles(name: str) -> tuple[dict[str, R.Role], dict[str, int]]:
    scan = scan_text((UPSTREAM / f"{name}.py").read_text())
    return R.classify(scan), {n: c.value for n, c in scan.constants.items()}


def _derivation(text: str, mode: str = D.ALIGNED) -> D.Derivation:
    scan = scan_text(text)
    return D.Derivation(scan, R.classify(scan), mode=mode)


def test_scan_reads_arithmetic_tuple_and_annotated_constants():
    scan = scan_text("M = 1024 * 2\nK = M // 2 + 1\nh, w = 32, 48\nd: int = 7\nshape = (M, 3)\nx = foo()\n"
                     "HELD_OUT = [{'M': 4096 + 1}]\n")
    values = {n: c.value for n, c in scan.constants.items()}
    assert values == {"M": 2048, "K": 1025, "h": 32, "w": 48, "d": 7, "shape": (2048, 3)}
    assert scan.constants["K"].deps == ("M",) and scan.constants["M"].deps == ()
    assert scan.others["HELD_OUT"] == [{"M": 4097}]


def test_sizes_and_divisors():
    roles, _ = _roles("multihead_attention")
    assert roles["batch_size"].kind == R.BATCH and roles["seq_len"].kind == R.FEATURE
    assert roles["embed_dim"].divisor == 12 and roles["seq_len"].divisor == 1 and roles["batch_size"].divisor == 1
    roles, _ = _roles("matmul_mkn")
    assert {n: r.kind for n, r in roles.items()} == {"M": R.FEATURE, "K": R.FEATURE, "N": R.FEATURE}
    assert not R.sizes(R.classify(scan_text((UPSTREAM / "no_constants.py").read_text())))
    # a width that is a multiple of a per-head size moves with it
    kinds = R.classify(scan_text("d_model = 1024\nhead_size = 64\nseq_len = 2048\nx = (d_model, head_size, seq_len)\n"))
    assert kinds["d_model"].kind == R.DEPENDENT and kinds["d_model"].expr == "head_size * 16"
    assert kinds["seq_len"].kind == R.FEATURE   # a multiple of head_size by coincidence only
    # a lowercase k is a top-k count, an uppercase K a matmul size; a small depth is a layer count
    kinds = R.classify(scan_text("k = 50\nK = 4096\ndepth = 6\nx = (k, K, depth)\n"))
    assert (kinds["k"].kind, kinds["K"].kind, kinds["depth"].kind) == (R.KEEP, R.FEATURE, R.KEEP)


def test_plan_validation():
    good = ShapePlan(small={"n": 4}, held_out=[{"n": 7}], source={"small": "derived", "held_out": "derived",
                                                                   "held_out_small": "none"})
    assert ShapePlan.from_dict(json.loads(good.to_json())) == good
    with_far = ShapePlan.from_dict({**good.to_dict(), "far_below": {"held_out": {"index": 0, "source": "derived"}}})
    assert with_far.far_below_for(False) == {"index": 0, "source": "derived"} and with_far.far_below_for(True) is None
    for bad in ({**good.to_dict(), "small": {"n": "4"}}, {**good.to_dict(), "source": {"small": "guessed"}},
                {**good.to_dict(), "held_out": {"n": 7}}, [1, 2],
                {**good.to_dict(), "far_below": {"held_out": {"index": 1, "source": "derived"}}},
                {**good.to_dict(), "far_below": {"held_out_small": {"index": 0, "source": "derived"}}},
                {**good.to_dict(), "far_below": {"held_out": {"index": 0, "source": "guessed"}}}):
        with pytest.raises(PlanError):
            ShapePlan.from_dict(bad)


@pytest.mark.parametrize("value", POWERS)
def test_a_power_of_two_stays_a_power_of_two(value):
    down, up = A.aligned_nearby(value), A.aligned_nearby(value, up=True)
    assert up == 2 * value and A.is_power_of_two(up)
    assert down == (value // 2 if value >= 4 else None)
    assert A.aligned_nearby(value, limit=value // 5) in (None, *POWERS)
    for scale in (1.5, 3.0, 16.0, 1000.0, 1e9):
        far = D.far_below_value(value, 1, scale, D.ALIGNED)
        assert A.is_power_of_two(far) and far <= value and (far >= A.POWER_FLOOR or far == value)


@pytest.mark.parametrize("value,divisor", OTHERS)
def test_other_sizes_keep_their_factor_up_to_128(value, divisor):
    kept = min(1 << _valuation(value), A.ALIGNMENT_CAP)
    assert A.kept_factor(value) == kept
    for new in (A.aligned_nearby(value, divisor), A.aligned_nearby(value, divisor, up=True)):
        if new is None:
            continue
        assert new != value and new % kept == 0 and new % divisor == 0, new
        assert A.keeps_alignment(value, new, divisor)
    for scale in (1.5, 3.0, 17.0, 1e6):
        far = D.far_below_value(value, divisor, scale, D.ALIGNED)
        assert far % kept == 0 and far % divisor == 0 and far <= value


def test_examples_from_the_rule():
    assert (A.aligned_nearby(1024), A.aligned_nearby(1024, up=True)) == (512, 2048)
    assert (A.aligned_nearby(8192), A.aligned_nearby(4096, up=True)) == (4096, 8192)
    # an odd number of the kept unit: the new size has exactly the factor the benchmark size had
    assert (A.aligned_nearby(1000), A.aligned_nearby(1000, up=True)) == (984, 1016)
    assert (A.aligned_nearby(4095), A.aligned_nearby(4095, up=True)) == (4093, 4097)
    assert A.aligned_nearby(393216) == 393088 and _valuation(393088) == 7
    assert A.aligned_nearby(768, 12) == 384   # lcm(128, 12) = 384: still a multiple of the heads
    assert A.aligned_nearby(96, 6) is None and A.aligned_nearby(96, 6, up=True) == 288
    assert A.aligned_nearby(2) is None   # nothing below 2 is a usable size
    # far below: 4096 / 16 is 256, never 255
    assert D.far_below_value(4096, 1, 16, D.ALIGNED) == 256 and D.far_below_value(4096, 1, 15.9, D.ALIGNED) == 256
    assert D.far_below_value(393216, 1, 100, D.ALIGNED) == 3712   # 29 x 128
    assert D.far_below_value(4095, 1, 16, D.ALIGNED) == 255        # odd stays odd
    assert D.far_below_value(32768, 1, 1e9, D.ALIGNED) == A.POWER_FLOOR


def test_keeps_alignment():
    assert A.keeps_alignment(4096, 2048) and A.keeps_alignment(4096, 8192) and not A.keeps_alignment(4096, 4095)
    assert not A.keeps_alignment(4096, 4096) and not A.keeps_alignment(4096, 3072)
    assert A.keeps_alignment(1000, 992) and not A.keeps_alignment(1000, 996)
    assert A.keeps_alignment(393216, 128) and not A.keeps_alignment(393216, 192)
    assert A.keeps_alignment(768, 384, 12) and not A.keeps_alignment(768, 256, 12)


@pytest.mark.parametrize("text,size", [("N = 8192\nprint(N)\n", "N"), ("N = 4096\nprint(N)\n", "N"),
                                       ("batch_size = 128\ndim = 393216\nprint(batch_size, dim)\n", "dim"),
                                       ("in_features = 1088\nbatch_size = 16\nprint(in_features, batch_size)\n",
                                        "in_features")])
def test_an_exact_size_still_meets_another(text, size):
    d = _derivation(text)
    benchmark = d.env[size]
    variants = d.held_out()
    assert variants and all(v.overrides.get(size, benchmark) != benchmark for v in variants[:1])
    seen = {v.overrides.get(size, benchmark) for v in variants} | {d.shrunk(50.0, D.ALIGNED).get(size, benchmark)}
    assert seen - {benchmark} and all(A.keeps_alignment(benchmark, s) for s in seen - {benchmark})
    if benchmark == 8192:
        assert variants[0].overrides == {size: 4096}


def test_a_size_threshold_still_meets_a_far_smaller_input():
    d = _derivation("batch_size = 32768\ninput_shape = (32768,)\nprint(batch_size, input_shape)\n")
    small = d.shrunk(128.0, D.ALIGNED)
    assert small == {"batch_size": 256, "input_shape": (256,)}   # 16384x fewer elements, tied sizes still tied
    assert d.top_scale(family=D.ALIGNED) == 32768 / A.POWER_FLOOR


@pytest.mark.parametrize("name", ["layernorm_3d", "multihead_attention", "conv2d_grouped", "matmul_mkn",
                                  "relu_4096x393216", "conv2d_strided"])
def test_aligned_candidates_keep_relations_and_alignment(name):
    scan = scan_text((UPSTREAM / f"{name}.py").read_text())
    roles = R.classify(scan)
    values = {n: c.value for n, c in scan.constants.items()}
    d = D.Derivation(scan, roles)
    variants = d.held_out()
    assert variants
    for overrides in [v.overrides for v in variants] + [d.shrunk(s, D.ALIGNED) for s in (3.0, 50.0, 1e6)]:
        for constant, new in overrides.items():
            role = roles[constant]
            assert role.kind in (R.BATCH, R.FEATURE), f"{constant} is {role.kind}, must not change"
            assert A.keeps_alignment(values[constant], new, role.divisor), (constant, values[constant], new)
        if name == "layernorm_3d":
            assert overrides.get("dim1", 256) == overrides.get("dim2", 256)
        if name == "multihead_attention":
            assert overrides.get("embed_dim", 768) % 12 == 0


def test_dependent_constants_are_recomputed():
    d = _derivation("out_features = 4096\nbias_shape = (out_features,)\nbatch_size = 128\n"
                    "print(out_features, bias_shape, batch_size)\n")
    changed = [v.overrides for v in d.held_out() if "out_features" in v.overrides]
    assert changed and all(o["bias_shape"] == (o["out_features"],) for o in changed), changed


RNN_WITH_A_GLOBAL_BATCH = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))   # the problem's own model reads a global size
        self.cell = nn.Linear(input_size + hidden_size, hidden_size)

    def forward(self, x):
        rows = x.shape[0]
        self.hidden = torch.tanh(self.cell(torch.cat((x, self.hidden[:rows]), dim=1)))
        return self.hidden


half = 128
batch_size = 2 * half
input_size = 1024
hidden_size = 2048


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
"""


def test_a_size_the_problems_model_reads_as_a_global_is_kept():
    scan = scan_text(RNN_WITH_A_GLOBAL_BATCH)
    assert scan.model_reads == {"batch_size"}             # hidden_size is a parameter there, rows a local
    roles = R.classify(scan)
    assert roles["batch_size"].kind == R.KEEP and roles["half"].kind == R.KEEP   # and what it is computed from
    assert "Model itself" in roles["batch_size"].why
    assert roles["input_size"].kind == roles["hidden_size"].kind == R.FEATURE
    variants = _derivation(RNN_WITH_A_GLOBAL_BATCH).held_out()
    assert variants and all("batch_size" not in v.overrides and "half" not in v.overrides for v in variants)


def test_general_mode_is_the_odd_rule():
    d = _derivation("N = 4096\nprint(N)\n", mode=D.GENERAL)
    assert [v.overrides["N"] for v in d.held_out()][:2] == [4095, 4094]
    with pytest.raises(ValueError):
        _derivation("N = 4096\nprint(N)\n", mode="none")


def test_judge_options_take_a_mode_and_old_booleans():
    assert JudgeOptions().held_out == "aligned" and HELD_OUT_MODES == ("aligned", "general", "none")
    assert JudgeOptions(held_out=True).held_out == "aligned" and JudgeOptions(held_out=False).held_out == "none"
    assert JudgeOptions(held_out="general").held_out == "general"
    with pytest.raises(ValueError, match="held_out"):
        JudgeOptions(held_out="odd")


def test_cache_key_and_cli_carry_the_mode():
    keys = {cache_key("N = 4096\n", mode) for mode in HELD_OUT_MODES}
    assert len(keys) == 3
    parser = argparse.ArgumentParser()
    add_judge_options(parser)
    assert judge_options(parser.parse_args([])).held_out == "aligned"
    assert judge_options(parser.parse_args(["--held-out", "none"])).held_out == "none"
    with pytest.raises(SystemExit):
        parser.parse_args(["--held-out", "odd"])


def test_the_service_takes_the_mode_from_json():
    defaults = JudgeOptions(device="cpu")
    assert parse_options({"held_out": "general"}, defaults, "cpu").held_out == "general"
    assert parse_options({"held_out": False}, defaults, "cpu").held_out == "none"   # a client from before the modes
    assert parse_options(None, defaults, "cpu").held_out == "aligned"
    with pytest.raises(BadRequest, match="held_out must be one of"):
        parse_options({"held_out": "odd"}, defaults, "cpu")
