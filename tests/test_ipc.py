"""CUDA IPC output hand-over: forged metadata is refused before any handle is opened; on a GPU, a real
round trip between two processes gives back the same values."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kerneljudge.core.channel import ProtocolError
from kerneljudge.worker import ipc


def _meta(**over):
    meta = {"dtype": "float32", "shape": [4, 4], "offset": 0, "nbytes": 64, "device": 0, "handle": "ab" * 32,
            "storage_bytes": 64, "storage_offset_bytes": 0, "counter": b"/torch_1_2_3".hex(),
            "counter_offset": 0, "event": "", "event_sync": False}
    meta.update(over)
    return meta


@pytest.mark.parametrize("metas, message", [
    ("not a list", "not a list"),
    ([_meta(dtype="os.system")], "unknown dtype"),
    ([_meta(shape=[4, -1])], "non-negative"),
    ([_meta(shape=[1 << 20, 1 << 20])], "over the limit"),
    ([_meta(offset=-3)], "offset"),
    ([_meta(offset=1)], "does not fit"),
    ([_meta(storage_bytes=32)], "does not fit"),
    ([_meta(storage_bytes="64")], "non-negative integers"),
    ([_meta(handle="zz")], "hex"),
    ([_meta(counter="abc")], "hex"),
])
def test_forged_metadata_is_a_protocol_error(metas, message):
    with pytest.raises(ProtocolError, match=message):
        ipc.receive(metas, max_bytes=1 << 20)


@pytest.mark.parametrize("counter", [b"/dev/shm/../etc/passwd", b"relative", b"/a/b", b""])
def test_counter_names_outside_shared_memory_are_not_opened(counter):
    # a name torch would not make: the judge asks for the output as a file instead of opening it
    with pytest.raises(ipc.IpcUnavailable):
        ipc.receive([_meta(counter=counter.hex())], max_bytes=1 << 20)


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
    finally:
        proc.communicate("done\n", timeout=60)
