"""What a slot reads of its GPU from nvidia-smi (judging/device/slots.py), against a stand-in nvidia-smi on PATH."""

from __future__ import annotations

import os

from kerneljudge.judging.device import memory as device_memory, slots

FAKE = """#!/bin/sh
case "$*" in
  *compute_cap*) printf '9.0\\n9.0\\n';;
  *--id=1*memory.total*) printf '143771\\n';;
esac
"""


def test_architecture_and_memory_come_from_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert slots._arch_list("cuda") == "9.0"
    assert slots.device_memory_total("1") == 143771 << 20    # the second visible GPU, asked by its id
    assert slots.device_memory_total("0") == 0               # no answer: admitted by count alone
    assert slots._arch_list("cpu") == ""


def test_no_nvidia_smi_reads_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert device_memory.query_gpus("memory.total") == []


def test_a_plan_is_fitted_to_the_card_only_when_asked(tmp_path, monkeypatch):
    # without --device-memory no problem is fitted ahead (the estimate is generous); the card's memory serves only
    # the fallback after a reference ran out of memory alone
    from kerneljudge.core.types import JudgeOptions
    from kerneljudge.judging import shape_budget
    from kerneljudge.judging.device import turns

    fake = tmp_path / "nvidia-smi"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    plain, limited = JudgeOptions(device="cuda"), JudgeOptions(device="cuda", device_memory=24 << 30)
    assert shape_budget.judgement_budget(plain, "cuda", "1") is None
    assert shape_budget.judgement_budget(plain, "cuda", "1", card=True) == turns.judgement_memory_budget(143771 << 20)
    assert shape_budget.judgement_budget(limited, "cuda", "1") == turns.judgement_memory_budget(24 << 30)
    assert shape_budget.judgement_budget(plain, "cpu", "1", card=True) is None
