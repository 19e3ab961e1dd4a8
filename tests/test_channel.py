import os
import threading

import pytest
import torch

from kerneljudge.core import channel


def _pair():
    r, w = os.pipe()
    return r, w


def test_round_trip_header_and_tensors():
    r, w = _pair()
    tensors = [torch.randn(3, 4), torch.arange(5), torch.tensor([True, False]), torch.randn(2).bfloat16(),
               torch.empty(0, 3), torch.tensor(2.5)]
    t = threading.Thread(target=channel.send, args=(w, {"status": "ok", "x": [1, 2]}, tensors))
    t.start()
    header, got = channel.recv(r, timeout=5)
    t.join()
    assert header == {"status": "ok", "x": [1, 2]}
    for a, b in zip(tensors, got):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def test_timeout_and_closed():
    r, w = _pair()
    with pytest.raises(channel.ChannelTimeout):
        channel.recv(r, timeout=0.05)
    os.close(w)
    with pytest.raises(channel.ChannelClosed):
        channel.recv(r, timeout=1)


def test_payload_limit_refuses_huge_frames():
    r, w = _pair()
    def sender():
        try:
            channel.send(w, {}, [torch.zeros(1000)])
        except BrokenPipeError:
            pass  # the receiver refused the frame and closed: expected

    t = threading.Thread(target=sender)
    t.start()
    with pytest.raises(channel.ProtocolError):
        channel.recv(r, timeout=5, max_payload=100)
    os.close(r)
    t.join()


def test_garbage_header_is_a_protocol_error():
    r, w = _pair()
    os.write(w, (5).to_bytes(8, "big") + b"nope!")
    with pytest.raises(channel.ProtocolError):
        channel.recv(r, timeout=1)


def test_lying_tensor_metadata_is_refused():
    r, w = _pair()
    import json

    head = json.dumps({"tensors": [{"dtype": "float32", "shape": [10], "nbytes": 8}]}).encode()
    os.write(w, len(head).to_bytes(8, "big") + head + b"\0" * 8)
    with pytest.raises(channel.ProtocolError):
        channel.recv(r, timeout=1)


def test_output_files_must_be_regular_files(tmp_path):
    t = torch.randn(4, 3)
    good = tmp_path / "out.bin"
    metas = channel.write_tensors(str(good), [t])
    (back,) = channel.read_tensors(str(good), metas, max_payload=1 << 20)
    assert torch.equal(back, t)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(channel.ProtocolError, match="regular"):
        channel.read_tensors(str(fifo), metas, max_payload=1 << 20)
    link = tmp_path / "link"
    link.symlink_to(good)
    with pytest.raises(channel.ProtocolError):
        channel.read_tensors(str(link), metas, max_payload=1 << 20)
    with pytest.raises(channel.ProtocolError, match="holds"):
        channel.read_tensors(str(good), [{"dtype": "float32", "shape": [5], "nbytes": 20}], max_payload=1 << 20)


def test_killing_a_child_twice_leaves_other_descriptors_alone():
    # evaluate() kills a solution's child on two paths; the second kill must not close descriptor numbers
    # that meanwhile belong to another child's pipes (that child would see EOF and exit with status 0)
    from kerneljudge.judging.child import Child
    from kerneljudge.judging.environment import child_env

    child = Child("kerneljudge.worker.reference", child_env("cpu", 1, "/tmp/kj-unused-cache", {}))
    child.kill()
    read_end, write_end = os.pipe()  # likely the numbers the first kill just freed
    try:
        child.kill()
        os.write(write_end, b"x")
        assert os.read(read_end, 1) == b"x"
    finally:
        os.close(read_end)
        os.close(write_end)
