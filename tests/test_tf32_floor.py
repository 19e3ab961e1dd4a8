"""The tf32 floor: the reference's own TF32 (truncation) error raises the tf32 class's bounds where the rounding-error
analysis undercounts (softmax over large logits, top-k routing), and nothing else."""

import types

import torch

from kerneljudge.worker import loading, tf32_floor
from kerneljudge.numerics import bounds
from kerneljudge.numerics import classes as numerics, reduced_precision
from kerneljudge.numerics.compare import compare_outputs


class Router(torch.nn.Module):
    """A top-1 router: the expert whose logit is largest scales the token; TF32 flips near-ties."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.gate = torch.nn.Linear(256, 64, bias=False)
        self.experts = torch.nn.Parameter(torch.randn(64, 256))

    def forward(self, x):
        pick = self.gate(x).argmax(dim=-1)
        return x * self.experts[pick]


def _out(t):
    return loading.flatten_output(t, "cpu")


def _problem(n=4096, dim=256):
    return types.SimpleNamespace(get_inputs=lambda: [torch.randn(n, dim)])


def test_floor_measures_the_references_own_tf32_error_and_raises_only_tf32_bounds():
    problem, model = _problem(), Router()
    torch.manual_seed(1)
    x = torch.randn(4096, 256)
    with torch.no_grad():
        ref = model(x)
    # the floor over seeds 7 and 8, each against the fp32 output on its own inputs
    with torch.no_grad():
        expected = [[model(*loading.make_inputs(problem, seed, "cpu", "fp32"))] for seed in (7, 8)]
    floors = tf32_floor.measure(problem, model, [7, 8], "cpu", expected)
    assert len(floors) == 1 and floors[0] is not None
    assert floors[0]["rel_l2"] > 1e-3, "TF32 should flip some of 4096 routing decisions"
    # another rounding of the same work (a truncating TF32 router) flips other tokens
    with torch.no_grad(), reduced_precision.running_as("tf32_truncate"):
        truncated = model(x)
    without = compare_outputs(_out(ref), _out(truncated), "fp32")
    assert not without.ok and without.detail["numerics"]["class"] == "wrong"
    judged = compare_outputs(_out(ref), _out(truncated), "fp32", tf32_floors=floors)
    found = judged.detail["numerics"]
    assert judged.ok and found["class"] == "tf32" and found["basis"]["tf32_floor"]["raised"]
    # fp32 bounds are untouched: the fp32 contract still rejects it
    assert not compare_outputs(_out(ref), _out(truncated), "fp32", contract="fp32", tf32_floors=floors).ok
    # zero, constant and half-missing outputs still fail with the floor
    for bad in (torch.zeros_like(ref), torch.full_like(ref, float(ref.mean())),
                torch.cat([ref[:2048], torch.zeros_like(ref[2048:])])):
        assert not compare_outputs(_out(ref), _out(bad), "fp32", tf32_floors=floors).ok


def test_floor_is_ignored_when_unusable_or_not_fp32():
    ref = torch.randn(1000)
    noisy = ref * (1 + 1e-3 * torch.randn(1000))
    plain = numerics.measure(ref, noisy, "fp32", bounds.Workload())
    for floor in (None, {}, {"rel_l2": float("nan"), "max_rel_err": 1.0}, {"rel_l2": -1.0, "max_rel_err": 1.0},
                  {"rel_l2": "x", "max_rel_err": 1.0}):
        assert numerics.measure(ref, noisy, "fp32", bounds.Workload(), tf32_floor=floor)["bounds"] == plain["bounds"]
    tiny = {"rel_l2": 1e-12, "max_rel_err": 1e-12}  # below the analysis: nothing raised
    found = numerics.measure(ref, noisy, "fp32", bounds.Workload(), tf32_floor=tiny)
    assert found["bounds"] == plain["bounds"] and found["basis"]["tf32_floor"]["raised"] == []
    half = numerics.measure(ref.half(), noisy.half(), "fp16", bounds.Workload(), tf32_floor={"rel_l2": 1.0,
                                                                                                "max_rel_err": 1.0})
    assert "tf32_floor" not in half["basis"]


def test_floor_is_none_for_integer_outputs_and_a_forward_that_fails():
    class Ints(torch.nn.Module):
        def forward(self, x):
            return x.argmax(dim=-1), x * 2

    problem = _problem(8, 4)
    inputs = loading.make_inputs(problem, 3, "cpu", "fp32")
    expected = list(Ints()(*inputs))
    floors = tf32_floor.measure(problem, Ints(), [3], "cpu", [expected])
    assert floors[0] is None and floors[1] == {"rel_l2": 0.0, "max_rel_err": 0.0}
    assert tf32_floor.measure(problem, Ints(), [], "cpu", []) == []

    class Broken(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("no")

    assert tf32_floor.measure(problem, Broken(), [3, 4], "cpu", [[torch.zeros(1)], [torch.zeros(1)]]) == [None]


def test_floor_takes_the_larger_error_of_its_inputs():
    a, b = {"rel_l2": 1e-3, "max_rel_err": 5e-3}, {"rel_l2": 2e-3, "max_rel_err": 1e-3}
    assert tf32_floor._larger(a, b) == {"rel_l2": 2e-3, "max_rel_err": 5e-3}
    assert tf32_floor._larger(a, None) is None
