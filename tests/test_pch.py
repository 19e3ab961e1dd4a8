"""The shared precompiled torch/extension.h of binding units (judging/build/pch.py, judging/build/store.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from kerneljudge.judging.build.boxed_run import LineWatch
from kerneljudge.judging.build.store import Builder
from kerneljudge.judging.build import pch
from kerneljudge.sandbox import spec as box_spec

ROOT = Path(__file__).resolve().parent.parent
NINJA = """cxx = c++
cflags = -DTORCH_EXTENSION_NAME=kj_a -DTORCH_API_INCLUDE_EXTENSION_H -isystem /t/include -fPIC -std=c++17
post_cflags = -O3
cuda_cflags = -DTORCH_EXTENSION_NAME=kj_a -isystem /t/include
"""


def test_the_flags_are_the_binding_units_without_its_name():
    flags = pch.binding_flags(NINJA)
    assert flags == ["-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", "/t/include", "-fPIC", "-std=c++17", "-O3"]
    assert pch.binding_flags("cuda_cflags = -O2\n") is None
    changed = pch.with_include(NINJA, "/p/include")
    assert "cflags = -I/p/include -DTORCH_EXTENSION_NAME=kj_a" in changed
    assert "cuda_cflags = -DTORCH_EXTENSION_NAME=kj_a -isystem" in changed  # nvcc's flags are left alone


@pytest.mark.parametrize("flags, ok", [
    ([], True), (["-O3", "-std=c++17", "-DBLOCK=256", "-Wall", "-fopenmp", "-march=native"], True),
    (["-include", "/tmp/x.h"], False), (["-fplugin=evil"], False), (["-Wp,-include,/tmp/x.h"], False),
    (["-I/tmp"], False), (["-DX=/tmp/y"], False), (["-specs=/tmp/s"], False), (["-wrapper", "sh"], False),
])
def test_only_plain_options_share_a_header(flags, ok):
    assert pch.eligible({"extra_cflags": flags}) is ok
    assert pch.eligible({"extra_cflags": [], "extra_include_paths": ["/usr/include"]}) is False


def test_the_builder_makes_headers_only_from_system_folders(tmp_path):
    system = str(tmp_path / "sys")
    os.makedirs(os.path.join(system, "torch"))
    good = ["-O3", "-isystem", system]
    assert pch.trusted_flags(good, [system], [str(tmp_path / "builds")])
    assert not pch.trusted_flags(["-isystem", str(tmp_path / "builds" / "k")], [str(tmp_path)],
                                 [str(tmp_path / "builds")])
    assert not pch.trusted_flags(["-isystem", "/somewhere/else"], [system], [])
    scratch = os.path.join(system, "kj-box-abc123")  # a solution's scratch folder, wherever it lies
    assert not pch.trusted_flags(["-isystem", scratch], [system], [])
    assert not pch.trusted_flags(["-include", "x.h"], [system], [])
    assert not pch.trusted_flags(["-isystem"], [system], [])


def test_a_wanted_line_is_seen_while_the_build_runs():
    seen = []
    watch = LineWatch(seen.append, b"pch-wanted ")
    line = pch.wanted_line("a" * 32, ["-O3", "-isystem", "/x"])
    for part in (b"compiling\npch-wan", line[7:].encode(), b"\nmore\n"):
        watch.feed(part)
    assert seen == [line]
    assert pch.parse_wanted(seen[0]) == ("a" * 32, ["-O3", "-isystem", "/x"])
    assert pch.parse_wanted("pch-wanted nothex [1]") is None


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELJUDGE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def _request(name: str, body: str) -> dict:
    return {"kind": "inline", "name": name, "cpp_sources": [f"torch::Tensor {name}(torch::Tensor x) {{ {body} }}"],
            "functions": {name: name}}


@pytest.mark.slow
def test_a_second_build_loads_the_header_the_first_one_asked_for(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("KERNELJUDGE_PCH", "1")
    builder = Builder(str(tmp_path / "builds"), _env())
    first = builder.build(_request("kj_pch_a", "return x + 1;"), 600)
    assert first.ok, first.log
    assert len(builder.pch_makers) == 1  # asked for while it built, and made by a process of its own
    (key, maker), = builder.pch_makers.items()
    maker.wait(900)
    marker = json.loads(Path(pch.marker_path(builder.pch_root, key)).read_text())
    assert marker["ok"], marker["log"]
    folder = pch.ready(builder.pch_root, key)
    assert not os.lstat(os.path.join(folder, pch.HEADER + ".gch")).st_mode & 0o222  # frozen like a build

    # g++ itself says it loads the .gch ("! path.gch") for a unit with the flags and another extension name
    unit = tmp_path / "unit.cpp"
    unit.write_text("#include <torch/extension.h>\nint f() { return 1; }\n")
    done = subprocess.run(["c++", "-H", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=kj_other", f"-I{folder}",
                           *marker["flags"], str(unit)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"! {folder}/torch/extension.h.gch" in done.stderr

    started = time.monotonic()
    second = builder.build(_request("kj_pch_b", "return x * 2;"), 600)
    assert second.ok, second.log
    print(f"first build {first.seconds} s, with the precompiled header {time.monotonic() - started:.1f} s")
    assert json.loads(Path(builder._marker_path(second.key)).read_text())["pch"] is True
    assert len(builder.pch_makers) == 1  # nothing new asked for
    path = builder.copy_into(second, str(tmp_path))
    spec = importlib.util.spec_from_file_location("kj_pch_b", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert torch.equal(module.kj_pch_b(torch.ones(3)), torch.full((3,), 2.0))


def test_header_roots_cover_torch_headers():
    import torch.utils.cpp_extension as cpp_extension

    include = cpp_extension.include_paths()[0]
    assert pch.trusted_flags(["-isystem", include], box_spec.header_roots(), [])
