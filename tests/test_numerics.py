"""Numerics classes and contracts on real computations (numerics/classes.py, docs/numerics.md)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kerneljudge.numerics import bounds, error_classes
from kerneljudge.numerics import classes as numerics, reduced_precision as rp
from kerneljudge.numerics.arithmetic import arithmetic_profile
from kerneljudge.numerics.compare import compare_outputs

CONTRACTS = ("tf32", "fp32", "kernelbench")


def out(*tensors):
    return ({"tensor": 0} if len(tensors) == 1 else {"seq": [{"tensor": i} for i in range(len(tensors))]},
            list(tensors))


class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class Softmax(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


class LayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(512)

    def forward(self, x):
        return self.norm(x)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(256, 1024)
        self.down = nn.Linear(1024, 256)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


def _case(name):
    torch.manual_seed(0)
    if name.startswith("matmul"):
        k = int(name.removeprefix("matmul"))
        return MatMul(), [torch.randn(64, k), torch.randn(k, 64)]
    return {"conv": (ConvNet(), [torch.randn(2, 16, 24, 24)]),
            "softmax": (Softmax(), [3 * torch.randn(64, 1000)]),
            "layernorm": (LayerNorm(), [torch.randn(128, 512)]),
            "mlp": (Mlp(), [torch.randn(128, 256)])}[name]


def _judge(model, inputs, variant, contract="tf32"):
    """Compare `variant` of the model's forward with its fp32 reference: (Comparison, numerics dict)."""
    with torch.no_grad():
        ref = model(*inputs)
        workload = arithmetic_profile(model, inputs)
        if variant == "exact":
            sol = ref.clone()
        elif variant == "fp64":
            twin, twin_inputs = rp.as_fp64(model, inputs)
            sol = twin(*twin_inputs).float()
        else:
            with rp.running_as(variant):
                sol = model(*inputs)
    kwargs = {k: workload[k] for k in ("reduction_length", "matmul_stages", "op_stages")}
    result = compare_outputs(out(ref), out(sol), "fp32", None, contract, **kwargs)
    return result, result.detail.get("numerics") or {}


CASES = ("matmul16", "matmul256", "matmul4096", "conv", "mlp")


@pytest.mark.parametrize("case", CASES)
def test_classes_of_reduced_precision_variants(case):
    model, inputs = _case(case)
    assert _judge(model, inputs, "exact")[1]["class"] == "exact"
    for honest_fp32 in ("fp64", "split_k"):
        assert _judge(model, inputs, honest_fp32)[1]["class"] in ("fp32", "exact"), honest_fp32
    for ten_bit in ("tf32", "tf32_truncate", "fp16_operands"):
        assert _judge(model, inputs, ten_bit)[1]["class"] == "tf32", ten_bit
    # 8-bit mantissas: beyond what 10-bit operands do to a single matmul-like stage
    assert _judge(model, inputs, "bf16_operands")[1]["class"] == "wrong"


@pytest.mark.parametrize("case", ("softmax", "layernorm"))
def test_reductions_without_flops_are_fp32_not_tf32(case):
    # no matmul: FLOP counting sees nothing, the chain count sees the row sum
    model, inputs = _case(case)
    workload = arithmetic_profile(model, inputs)
    assert workload["flops"] == 0 and workload["reduction_length"] >= 512
    assert _judge(model, inputs, "fp64")[1]["class"] == "fp32"
    assert _judge(model, inputs, "fp64", "fp32")[0].ok


def test_tanh_gelu_is_a_tf32_class_approximation():
    model, inputs = _case("mlp")
    result, found = _judge(model, inputs, "tanh_gelu")
    assert found["class"] == "tf32" and result.ok
    result, _ = _judge(model, inputs, "tanh_gelu", "fp32")
    assert not result.ok and "consistent with tf32 arithmetic" in result.reason


def test_contract_decisions():
    model, inputs = _case("matmul256")
    for contract, accepted in (("tf32", True), ("fp32", False)):
        result, found = _judge(model, inputs, "tf32_truncate", contract)
        assert result.ok is accepted and found["contract"] == contract
    result, _ = _judge(model, inputs, "tf32", "fp32")
    assert result.reason.startswith("error consistent with tf32 arithmetic (rel L2 ")
    assert "the fp32 contract accepts only exact or fp32" in result.reason
    # the fp32 contract still takes honest fp32
    assert _judge(model, inputs, "fp64", "fp32")[0].ok


def test_kernelbench_is_upstream_allclose():
    torch.manual_seed(1)
    ref = torch.randn(4096)
    within = ref + 0.009 * torch.sign(torch.randn(4096))       # |err| 0.009 <= 0.01 + 0.01 |ref|
    beyond = ref.clone()
    beyond[7] = ref[7] + 0.02 + 0.011 * abs(float(ref[7]))
    assert compare_outputs(out(ref), out(within), "fp32", contract="kernelbench").ok
    assert not compare_outputs(out(ref), out(within), "fp32", contract="tf32").ok   # far beyond tf32
    result = compare_outputs(out(ref), out(beyond), "fp32", contract="kernelbench")
    assert not result.ok and "allclose" in result.reason
    assert result.ok == torch.allclose(beyond, ref, atol=1e-2, rtol=1e-2)


def _degenerate(ref: torch.Tensor, x: torch.Tensor) -> dict[str, torch.Tensor]:
    partial_zero, partial_nan = ref.clone(), ref.clone()
    rows = max(1, ref.shape[0] // 100)                        # 1% of the rows never written
    partial_zero[-rows:] = 0
    partial_nan[-rows:] = float("nan")
    return {"zero": torch.zeros_like(ref), "constant": torch.full_like(ref, float(ref.mean())),
            "partial_zero": partial_zero, "partial_nan": partial_nan, "returned_input": x.clone()}


@pytest.mark.parametrize("magnitude", (1.0, 1e-4))
def test_degenerate_outputs_are_wrong_in_every_contract(magnitude):
    # at 1e-4 every value is under allclose's atol: upstream would accept all of these; the guard does not
    torch.manual_seed(2)
    x = torch.randn(400, 64) * magnitude
    w = torch.randn(64, 64) / 8
    ref = x @ w
    for name, sol in _degenerate(ref, x).items():
        for contract in CONTRACTS:
            result = compare_outputs(out(ref), out(sol), "fp32", None, contract, 64, 1, 1)
            assert not result.ok, (name, contract)
        assert result.detail["numerics"]["class"] == "wrong", name


def test_small_magnitude_output_passes_at_tf32_and_zero_does_not():
    # the matmul/divide/GELU fusion: values near 5e-5, a TF32 kernel off by a few of them
    torch.manual_seed(3)
    a, b = torch.randn(256, 512), torch.randn(512, 256)
    ref = F.gelu((a @ b) / 5e5)
    tf32 = F.gelu((rp.truncate_to_tf32(a) @ rp.truncate_to_tf32(b)) / 5e5)
    assert float(ref.abs().median()) < 1e-4
    result = compare_outputs(out(ref), out(tf32), "fp32", None, "tf32", 513, 1, 3)
    assert result.ok and result.detail["numerics"]["class"] == "tf32"
    assert not compare_outputs(out(ref), out(torch.zeros_like(ref)), "fp32", None, "kernelbench", 513, 1, 3).ok
    assert torch.allclose(torch.zeros_like(ref), ref, atol=1e-2, rtol=1e-2)   # what the guard is for


def test_nan_and_inf_rules():
    ref = torch.tensor([1.0, float("inf"), -2.0, float("nan"), 3.0])
    same = ref.clone()
    for contract in ("tf32", "fp32"):
        assert compare_outputs(out(ref), out(same), "fp32", contract=contract).ok
    moved = torch.tensor([1.0, 5.0, -2.0, float("nan"), 3.0])
    assert "NaN/Inf positions" in compare_outputs(out(ref), out(moved), "fp32").reason
    finite = torch.tensor([1.0, 2.0, 3.0])
    bad = torch.tensor([1.0, float("nan"), 3.0])
    result = compare_outputs(out(finite), out(bad), "fp32")
    assert not result.ok and "NaN/Inf values where the reference is finite" in result.reason
    # kernelbench is allclose's own rule: a NaN is never close, even where the reference has one
    assert not compare_outputs(out(ref), out(same), "fp32", contract="kernelbench").ok
    assert not compare_outputs(out(finite), out(bad), "fp32", contract="kernelbench").ok


def test_multi_output_reports_the_worst():
    torch.manual_seed(4)
    a, b = torch.randn(64, 256), torch.randn(256, 64)
    first = a @ b
    second = a @ b.flip(0)
    sols = (first.double().float(), rp.round_to_tf32(a) @ rp.round_to_tf32(b.flip(0)))
    ok = compare_outputs(out(first, second), out(*sols), "fp32", None, "tf32", 256, 1, 1)
    assert ok.ok and ok.detail["numerics"]["class"] == "tf32" and ok.detail["numerics"]["output"] == 1
    strict = compare_outputs(out(first, second), out(*sols), "fp32", None, "fp32", 256, 1, 1)
    assert not strict.ok and strict.reason.startswith("output 1: error consistent with tf32")


def test_tolerance_override_raises_bounds_but_zero_still_fails():
    torch.manual_seed(5)
    a, b = torch.randn(128, 256), torch.randn(256, 128)
    ref = a @ b
    bf16 = a.bfloat16().float() @ b.bfloat16().float()
    plain = compare_outputs(out(ref), out(bf16), "fp32", None, "tf32", 256, 1, 1)
    assert plain.detail["numerics"]["class"] == "wrong"
    override = {"fp32": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.01}}
    for contract in ("tf32", "fp32"):
        result = compare_outputs(out(ref), out(bf16), "fp32", override, contract, 256, 1, 1)
        assert result.ok and result.detail["numerics"]["class"] == "fp32", contract
        assert not compare_outputs(out(ref), out(torch.zeros_like(ref)), "fp32", override, contract, 256, 1, 1).ok
    # an override for another precision changes nothing here; kernelbench ignores overrides
    assert not compare_outputs(out(ref), out(bf16), "fp32", {"fp16": {"rel_l2": 0.5}}, "tf32", 256, 1, 1).ok
    only_norm = {"fp32": {"rel_l2": 0.01}}     # raises the norm-wise bound, leaves the elementwise one
    assert not compare_outputs(out(ref), out(bf16), "fp32", only_norm, "tf32", 256, 1, 1).ok


def test_low_precision_runs_keep_their_own_class():
    torch.manual_seed(6)
    a, b = torch.randn(128, 256).half(), torch.randn(256, 128).half()
    ref = a @ b
    best = (a.float() @ b.float()).half()            # a kernel that keeps fp32 until the end
    for contract in ("tf32", "fp32"):
        result = compare_outputs(out(ref), out(best), "fp16", None, contract, 256, 1, 1)
        assert result.ok and result.detail["numerics"]["class"] in ("fp16", "exact")
    coarse = (a.bfloat16() @ b.bfloat16()).half()
    coarse_result = compare_outputs(out(ref), out(coarse), "fp16", None, "tf32", 256, 1, 1)
    assert coarse_result.detail["numerics"]["class"] == "wrong"
    assert not compare_outputs(out(ref), out(torch.zeros_like(ref)), "fp16", None, "kernelbench").ok


def test_worse_orders_by_class_then_error():
    fp32 = {"class": "fp32", "rel_l2": 1e-6}
    tf32 = {"class": "tf32", "rel_l2": 1e-4}
    tf32_worse = {"class": "tf32", "rel_l2": 5e-4}
    wrong = {"class": "wrong", "rel_l2": None}
    assert error_classes.worse(fp32, tf32) is tf32 and error_classes.worse(tf32, fp32) is tf32
    assert error_classes.worse(tf32, tf32_worse) is tf32_worse
    assert error_classes.worse(wrong, tf32_worse) is wrong
    assert error_classes.worse(None, fp32) is fp32 and error_classes.worse(fp32, None) is fp32


def test_bounds_follow_the_documented_formulas():
    u32, ut, ef = 2.0 ** -24, 2.0 ** -11, bounds.FAST_TRANSCENDENTAL
    work = bounds.Workload(reduction_length=4096, matmul_stages=3, op_stages=7, worst_case_roundings=16384,
                             transcendental_stages=2)
    fp32, tf32 = bounds.class_bounds("fp32", work)
    assert math.isclose(fp32.rho, math.sqrt(2 * 4096) * u32) and fp32.bias == 0
    assert math.isclose(fp32.cap, 2 * 16384 * u32)
    assert math.isclose(tf32.rho, math.sqrt(2 * 3 * ut ** 2 + 2 * ef ** 2 + 2 * 4096 * u32 ** 2))
    assert tf32.bias == 2 * 3 * ut and tf32.cap == math.inf     # operand rounding: no deterministic cap
    assert math.isclose(tf32.limit(7.0), tf32.bias + 7.0 * tf32.rho)
    assert math.isclose(fp32.limit(7.0), min(7.0 * fp32.rho, fp32.cap))
    (bf16,) = bounds.class_bounds("bf16", work)
    assert bf16.stages == 7 and math.isclose(bf16.rho, math.sqrt(2 * 7 * 2.0 ** -16 + 2 * 4096 * u32 ** 2))
    x = math.log(1 / bounds.P_FAIL)
    assert math.isclose(bounds.lambda_elem(1000), math.sqrt(2 * math.log(2 * 1000 / bounds.P_FAIL)))
    assert math.isclose(bounds.lambda_norm(100, 50), math.sqrt(1 + 2 * math.sqrt(x / 100) + 2 * x / 50))
    # unknown workload: one matmul stage, one transcendental function, no cap
    unknown = bounds.class_bounds("fp32", bounds.Workload())[1]
    assert unknown.stages == 1 and unknown.approximations == 1 and unknown.cap == math.inf


def test_tf32_equals_fp32_where_reduced_precision_cannot_enter():
    """No matmul-like op and no transcendental function: the tf32 class is the fp32 class (threat B14)."""
    work = bounds.Workload(reduction_length=1, matmul_stages=0, op_stages=1, worst_case_roundings=1,
                             transcendental_stages=0)
    fp32, tf32 = bounds.class_bounds("fp32", work)
    for lam in (1.0, 6.4, 7.5):
        assert tf32.limit(lam) == fp32.limit(lam)
    # and the cap holds: one rounding on each side is 2 u32, whatever the tail factor
    assert fp32.limit(7.5) == 2 * 2.0 ** -24
    # a transcendental function opens the tf32 class by the fast approximations' error, no more
    gelu = bounds.Workload(16, 0, 1, worst_case_roundings=16, transcendental_stages=1)
    fp32, tf32 = bounds.class_bounds("fp32", gelu)
    assert math.isclose(tf32.limit(7.5), 2 * 16 * 2.0 ** -24 + bounds.FAST_TRANSCENDENTAL)


def test_chunked_passes_match_one_pass(monkeypatch):
    torch.manual_seed(7)
    a, b = torch.randn(97, 300), torch.randn(300, 53)
    ref, sol = a @ b, rp.round_to_tf32(a) @ rp.round_to_tf32(b)
    whole = compare_outputs(out(ref), out(sol), "fp32", None, "tf32", 300, 1, 1).detail["numerics"]
    monkeypatch.setattr(numerics, "_CHUNK", 1000)
    chunked = compare_outputs(out(ref), out(sol), "fp32", None, "tf32", 300, 1, 1).detail["numerics"]
    for key in ("max_abs_err", "max_rel_err", "frac_over_tol", "class"):
        assert chunked[key] == whole[key]
    assert math.isclose(chunked["rel_l2"], whole["rel_l2"], rel_tol=1e-12)
    assert chunked["worst_element"]["index"] == whole["worst_element"]["index"]


def test_finite_mask_is_isfinite():
    special = [0.0, -0.0, 1.0, -2.5, 1e-45, -1e-40, 3e38, -3e38, math.inf, -math.inf, math.nan]
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        t = torch.tensor(special, dtype=torch.float64).to(dtype)
        assert torch.equal(numerics._finite(t), torch.isfinite(t)), dtype


@pytest.mark.parametrize("kind", ["close", "tf32", "nan_and_inf_in_solution", "nan_and_inf_in_reference",
                                  "zero_reference", "fp16"])
def test_skipping_no_op_masks_changes_no_bit(kind, monkeypatch):
    """The fast path (no masking where every position is finite) against the general one, on every kind of
    output: the numerics dicts are equal, float for float."""
    torch.manual_seed(11)
    ref = torch.randn(40, 77)
    sol = ref + 1e-6 * torch.randn_like(ref)
    if kind == "tf32":
        a, b = torch.randn(40, 300), torch.randn(300, 77)
        ref, sol = a @ b, rp.round_to_tf32(a) @ rp.round_to_tf32(b)
    elif kind == "nan_and_inf_in_solution":
        sol[3, 5], sol[7, 1] = math.nan, math.inf
    elif kind == "nan_and_inf_in_reference":
        ref[2, 2], ref[9, 9] = math.nan, -math.inf
        sol[2, 2], sol[9, 9] = math.nan, -math.inf
    elif kind == "zero_reference":
        ref, sol = torch.zeros(40, 77), torch.full((40, 77), 1e-30)
    elif kind == "fp16":
        ref, sol = ref.half(), sol.half()
    monkeypatch.setattr(numerics, "_CHUNK", 1000)   # several chunks, some with special values and some without
    results = []
    for skip in (True, False):
        monkeypatch.setattr(numerics, "SKIP_NO_OP_MASKS", skip)
        results.append(numerics.measure(ref, sol, "fp32", bounds.Workload(300, 1, 1)))
    assert results[0] == results[1]


def test_tf32_rounding_bits():
    x = torch.tensor([1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 1.0 + 2.0 ** -11 + 2.0 ** -20,
                      -(1.0 + 2.0 ** -10 - 2.0 ** -23), float("inf"), float("nan")])
    rounded = rp.round_to_tf32(x)
    assert rounded[0] == 1.0                          # a tie goes to the even mantissa
    assert rounded[1] == 1.0 + 4 * 2.0 ** -11         # ... also upward
    assert rounded[2] == 1.0 + 2.0 ** -10             # above the tie rounds up
    assert rounded[3] == -(1.0 + 2.0 ** -10)
    assert math.isinf(rounded[4]) and math.isnan(rounded[5])
    truncated = rp.truncate_to_tf32(x)
    assert truncated[2] == 1.0 and truncated[3] == -1.0
    assert (rounded[:4].view(torch.int32) & 0x1FFF == 0).all()


def test_profile_follows_chains_not_totals():
    class TwoLayers(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(64, 32), nn.Linear(32, 16)

        def forward(self, x):
            heads = [torch.softmax(x[:, i::4] @ x[:, i::4].T, -1) for i in range(4)]   # parallel: counted once
            return self.b(torch.relu(self.a(x))), torch.stack(heads)

    work = arithmetic_profile(TwoLayers(), [torch.randn(10, 64)])
    assert work["matmul_stages"] == 2                        # the longest chain: two linears
    assert work["reduction_length"] >= 64 + 32               # their inner lengths add
    assert work["flops"] == 2 * 10 * (64 * 32 + 32 * 16) + 4 * 2 * 10 * 10 * 16


def test_profile_counts_scattered_sums_per_target():
    class Aggregate(nn.Module):
        def forward(self, x, index):
            return torch.zeros(10, 4).index_add(0, index, x)

    index = torch.tensor([0, 0, 0, 1, 2, 3, 3])             # node 0 receives three messages
    assert arithmetic_profile(Aggregate(), [torch.randn(7, 4), index])["reduction_length"] == 4
    # the rounding error of a scatter sum over ~500 terms per node is fp32 noise, not tf32
    torch.manual_seed(8)
    x, many = torch.randn(4000, 4), torch.randint(0, 8, (4000,))
    ref = torch.zeros(8, 4).index_add(0, many, x)
    exact = torch.zeros(8, 4, dtype=torch.float64).index_add(0, many, x.double()).float()
    work = arithmetic_profile(Aggregate(), [x, many])
    assert work["reduction_length"] > 400
    kwargs = {k: work[k] for k in ("reduction_length", "matmul_stages", "op_stages")}
    assert compare_outputs(out(ref), out(exact), "fp32", None, "fp32", **kwargs).ok


def test_transcendental_functions_count_as_several_roundings():
    """Library transcendentals are accurate to a few ulp, not half of one: an honest elementwise kernel with
    another erf (std::erf against torch's vectorised one) differs from the reference by a few ulp per
    element, which must stay in the fp32 class. Such a difference is simulated here as a relative error of
    up to 3 ulp (6 u32) on every element, on a GELU-times-scale output of a million elements."""
    from kerneljudge.numerics.arithmetic import TRANSCENDENTAL_ROUNDINGS

    class GeluScale(nn.Module):
        def forward(self, x, s):
            return F.gelu(x) * s

    torch.manual_seed(3)
    inputs = [torch.randn(1024, 1024), torch.rand(1024) + 0.5]
    work = arithmetic_profile(GeluScale(), inputs)
    assert work["reduction_length"] == TRANSCENDENTAL_ROUNDINGS + 1     # gelu, then one multiplication
    ref = GeluScale()(*inputs)
    u = 2.0 ** -24
    sol = (ref.double() * (1 + 6 * u * (2 * torch.rand(ref.shape, dtype=torch.float64) - 1))).float()
    kwargs = {k: work[k] for k in ("reduction_length", "matmul_stages", "op_stages")}
    assert compare_outputs(out(ref), out(sol), "fp32", None, "fp32", **kwargs).ok
    # counted as one rounding each, the same few-ulp differences would leave the fp32 class
    fewer = {**kwargs, "reduction_length": 2}
    assert not compare_outputs(out(ref), out(sol), "fp32", None, "fp32", **fewer).ok
    # and a tanh approximation (about 2^-11) is still no fp32 arithmetic
    approx = F.gelu(inputs[0], approximate="tanh") * inputs[1]
    assert not compare_outputs(out(ref), out(approx), "fp32", None, "fp32", **kwargs).ok


def test_fused_gpu_compare_matches_the_torch_path():
    """numerics/fused_compare.py's Triton kernels, run by Triton's interpreter on the CPU, against the torch
    passes on every kind of output (fp32, fp64, fp16; NaN/Inf, ties, overrides, both contracts)."""
    pytest.importorskip("triton")
    probe = Path(__file__).with_name("fused_compare_probe.py")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ran"] == 42 and report["differences"] == [] and report["broken"] == []


def test_cudnn_recurrent_network_counts_a_matmul_stage_per_layer_and_step():
    """cuDNN runs a whole recurrent network in one op (aten._cudnn_rnn): every layer's every time step is a matmul
    stage whose operands TF32 rounds, and its gates are transcendental (counted from the op's arguments here; the
    op itself needs a GPU)."""
    from kerneljudge.numerics.arithmetic import op_cost, reduction_chain

    x = torch.empty(12, 4, 32, device="meta")                 # (steps, batch, features)
    args = (x, [], 4, None, None, None, 2, 64, 0, 3, False, 0.0, False, False, [], None)
    cost = op_cost("_cudnn_rnn", args, None)
    assert cost.matmul == 36 and cost.transcendental == 36     # 3 layers x 12 steps
    assert cost.roundings >= 36 * reduction_chain(32 + 64)
