"""CUDA IPC output hand-over: forged metadata is refused before any handle is opened; on a GPU, a real
round trip between two processes gives back the same values, and a view claimed larger than the allocation the
driver maps is refused."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kerneljudge.core.channel import ProtocolError
from kerneljudge.worker import ipc


def _meta(**over):
    meta = {"dtype": "float32", "shape": [4, 4], "nbytes": 64, "device": 0, "handle": "ab" * 64,
            "allocation_bytes": 64, "offset_bytes": 0}
    meta.update(over)
    return meta


@pytest.mark.parametrize("metas, message", [
    ("not a list", "not a list"),
    ([_meta(dtype="os.system")], "unknown dtype"),
    ([_meta(shape=[4, -1])], "non-negative"),
    ([_meta(shape=[1 << 20, 1 << 20])], "over the limit"),
    ([_meta(offset_bytes=-3)], "non-negative integers"),
    ([_meta(offset_bytes=4)], "does not fit"),
    ([_meta(allocation_bytes=32)], "does not fit"),
    ([_meta(allocation_bytes="64")], "non-negative integers"),
    ([_meta(device=True)], "non-negative integers"),
    ([_meta(handle="zz")], "hex"),
])
def test_forged_metadata_is_a_protocol_error(metas, message):
    with pytest.raises(ProtocolError, match=message):
        ipc.receive(metas, max_bytes=1 << 20)


@pytest.mark.parametrize("handle", ["ab" * 32, "ab" * 65, ""])
def test_handles_of_another_size_are_not_opened(handle):
    # not the driver's 64-byte handle: the judge asks for the output as a file instead of opening it
    with pytest.raises(ipc.IpcUnavailable):
        ipc.receive([_meta(handle=handle)], max_bytes=1 << 20)


@pytest.mark.gpu
def test_round_trip_between_processes():
    producer = textwrap.dedent("""
        import json, sys, torch
        from kerneljudge.worker import ipc
        x = torch.arange(3 * 1000 * 7, dtype=torch.float32, device="cuda").reshape(3, 1000, 7)[:, 5:, :]
        print(json.dumps(ipc.share([x, torch.ones(2, 3, dtype=torch.bfloat16, device="cuda")])), flush=True)
        sys.stdin.readline()  # keep the memory alive until the consumer copied it
    """)
    proc = subprocess.Popen([sys.executable, "-c", producer], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        import json

        import torch

        metas = json.loads(proc.stdout.readline())
        got = ipc.receive(metas, max_bytes=1 << 30)
        expected = torch.arange(3 * 1000 * 7, dtype=torch.float32, device="cuda").reshape(3, 1000, 7)[:, 5:, :]
        assert torch.equal(got[0], expected)
        assert got[1].dtype == torch.bfloat16 and torch.equal(got[1], torch.ones(2, 3, dtype=torch.bfloat16,
                                                                                  device="cuda"))
        # the same allocation claimed larger than it is: the driver's own size of the mapping decides
        forged = [{**metas[1], "allocation_bytes": 1 << 40, "offset_bytes": (1 << 40) - 64, "nbytes": 12}]
        forged[0]["shape"] = [2, 3]
        with pytest.raises(ProtocolError, match="does not fit"):
            ipc.receive(forged, max_bytes=1 << 30)
    finally:
        proc.communicate("done\n", timeout=60)


def test_a_held_output_shipped_again_as_a_file_is_the_held_one(tmp_path):
    # the driver would not open trial 1's held output: shipped again as a file, it must still be the held output,
    # not the last call's (which would fail the aliasing check of an honest solution)
    from kerneljudge import JudgeOptions
    from kerneljudge.core.problem import read_problem
    from kerneljudge.judging import context
    from pathlib import Path

    class Reference:
        environment: dict = {}
        answers = [{"ok": False, "ipc_unavailable": True, "reason": "no"}, {"ok": True, "detail": {}}]

        def check(self, *args):
            return self.answers.pop(0)

    problem = read_problem(Path(context.__file__).resolve().parents[1] / "data/problems/level1/21_relu.py")
    ctx = context.Context(problem, JudgeOptions(device="cuda"), "cuda", Reference(), False, {})
    ctx.exchange, ctx.transport = str(tmp_path), "ipc"
    sent = []

    def request(header):
        sent.append(header)
        return {"structure": {"tensor": 0}, "metas": [{"dtype": "float32", "shape": [4], "nbytes": 16}],
                "transport": header["transport"]}

    ctx.request = request
    assert ctx.compare(0, ctx.request_output({"cmd": "ship", "held": True}))["ok"]
    assert [(h["cmd"], h.get("held"), h["transport"]) for h in sent] == [("ship", True, "ipc"), ("ship", True, "file")]
