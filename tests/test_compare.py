import pytest
import torch

from kerneljudge.numerics.compare import compare_outputs, compare_tensor, tolerance


def out(*tensors):
    return ({"tensor": 0} if len(tensors) == 1 else {"seq": [{"tensor": i} for i in range(len(tensors))]},
            list(tensors))


def test_exact_and_rounding_differences_pass():
    ref = torch.randn(256, 512)
    assert compare_outputs(out(ref), out(ref.clone()), "fp32").ok
    # honest reordering of a sum: a few ulps
    noisy = ref * (1 + 1e-6 * torch.randn_like(ref))
    assert compare_outputs(out(ref), out(noisy), "fp32").ok


def test_zero_and_constant_outputs_fail():
    ref = torch.randn(128, 64)
    assert not compare_outputs(out(ref), out(torch.zeros_like(ref)), "fp32").ok
    assert not compare_outputs(out(ref), out(torch.full_like(ref, float(ref.mean()))), "fp32").ok
    # even a tiny-magnitude output: tolerance scales with the output, so zeros still fail
    small = ref * 1e-6
    assert not compare_outputs(out(small), out(torch.zeros_like(small)), "fp32").ok


def test_precision_loss_is_caught_in_fp32_but_fine_in_bf16():
    a, b = torch.randn(256, 1024), torch.randn(1024, 256)
    ref = a @ b
    lossy = (a.bfloat16() @ b.bfloat16()).float()
    for contract in ("tf32", "fp32"):
        result = compare_outputs(out(ref), out(lossy), "fp32", contract=contract, reduction_length=1024,
                                 matmul_stages=1)
        assert not result.ok and result.detail["numerics"]["class"] == "wrong"
    low = compare_outputs(out(ref.bfloat16()), out(lossy.bfloat16()), "bf16")
    assert low.ok and low.detail["numerics"]["class"] == "bf16"


def test_shape_dtype_nan_and_integers():
    ref = torch.randn(4, 5)
    assert "shape" in compare_outputs(out(ref), out(ref.reshape(5, 4)), "fp32").reason
    assert "dtype" in compare_outputs(out(ref), out(ref.double()), "fp32").reason
    bad = ref.clone()
    bad[1, 1] = float("nan")
    assert "NaN" in compare_outputs(out(ref), out(bad), "fp32").reason
    idx = torch.randint(0, 10, (100,))
    assert compare_outputs(out(idx), out(idx.clone()), "fp32").ok
    off = idx.clone()
    off[3] += 1
    assert not compare_outputs(out(idx), out(off), "fp32").ok


def test_structure_must_match():
    a, b = torch.randn(3), torch.randn(3)
    assert not compare_outputs(out(a, b), out(a), "fp32").ok
    assert compare_outputs(out(a, b), out(a, b), "fp32").ok


def test_matching_nonfinite_reference_values():
    ref = torch.tensor([1.0, float("inf"), -2.0, 3.0])
    assert compare_tensor(ref, ref.clone(), tolerance("fp32")).ok
    assert not compare_tensor(ref, torch.tensor([1.0, 5.0, -2.0, 3.0]), tolerance("fp32")).ok


def test_rule_carries_contract_override_and_workload():
    rule = tolerance("fp32", {"fp32": {"rel_l2": 0.5}, "bf16": {"atol": 1}}, "fp32", 4096, 2, 5)
    assert rule.override == {"rel_l2": 0.5} and rule.contract == "fp32"
    assert (rule.workload.reduction_length, rule.workload.matmul_stages, rule.workload.op_stages) == (4096, 2, 5)
    assert tolerance("bf16", {"fp32": {"rel_l2": 0.5}}).override is None
    with pytest.raises(ValueError, match="numerics contract"):
        tolerance("fp32", None, "strict")
    with pytest.raises(ValueError, match="precision"):
        tolerance("fp64")


def test_integer_outputs_report_numerics():
    idx = torch.randint(0, 10, (100,))
    exact = compare_outputs(out(idx), out(idx.clone()), "fp32", contract="kernelbench")
    assert exact.ok and exact.detail["numerics"]["class"] == "exact"
    off = idx.clone()
    off[3] += 2
    wrong = compare_outputs(out(idx), out(off), "fp32", contract="kernelbench")
    assert not wrong.ok and wrong.detail["numerics"]["max_abs_err"] == 2.0


def test_reference_worker_passes_contract_and_workload(monkeypatch):
    from kerneljudge.core import channel
    from kerneljudge.worker import reference as reference_worker

    torch.manual_seed(0)
    a, b = torch.randn(64, 256), torch.randn(256, 64)
    ref = a @ b
    tf32 = a.half().float() @ b.half().float()
    sent = []
    kept = reference_worker.Expected({"seeds": [0]})
    kept.kept[0] = ({"tensor": 0}, [ref])
    monkeypatch.setitem(reference_worker._expected, "tok", kept)
    monkeypatch.setattr(channel, "read_tensors", lambda path, metas, limit: [tf32])
    monkeypatch.setattr(channel, "send", lambda fd, header, tensors=(): sent.append(header))
    msg = {"token": "tok", "index": 0, "structure": {"tensor": 0}, "path": "unused", "metas": [],
           "precision": "fp32", "tolerance": None, "transport": "file", "reduction_length": 256, "matmul_stages": 1,
           "op_stages": 1}
    for contract, ok in ((None, True), ("tf32", True), ("fp32", False)):
        reference_worker.handle_check({**msg, "contract": contract}, 0)
        reply = sent.pop()
        assert reply["ok"] is ok and reply["detail"]["numerics"]["class"] == "tf32", contract
        assert reply["detail"]["numerics"]["contract"] == (contract or "tf32")
        assert reply["detail"]["numerics"]["basis"]["reduction_length"] == 256


def test_flattening_an_output_keeps_no_reference_to_it():
    # a self-referencing closure here once kept every output alive until the cycle collector ran:
    # on a GPU, a gigabyte per call until the solution's process ran out of memory
    import gc
    import weakref

    from kerneljudge.worker.loading import flatten_output

    gc.disable()
    try:
        out = torch.ones(4)
        alive = weakref.ref(out)
        structure, tensors = flatten_output((out, [out, None]), "cpu")
        assert structure == {"seq": [{"tensor": 0}, {"seq": [{"tensor": 1}, {"value": None}]}]}
        del out, tensors
        assert alive() is None
    finally:
        gc.enable()
