"""The environment a child starts with (judging/environment.child_env): JIT caches and Helion's autotuner."""

from __future__ import annotations

import os
from pathlib import Path

from kerneljudge.judging import environment
from kerneljudge.sandbox import spec


def test_every_jit_cache_is_in_the_trusted_cache_folder(tmp_path, monkeypatch):
    home = os.path.expanduser("~")
    for name in environment.TRUSTED_CACHE_ENV:
        monkeypatch.setenv(name, os.path.join(home, ".cache", name.lower()))   # what a user may have set
    env = environment.child_env("cuda", 2, str(tmp_path))
    for name, folder in environment.TRUSTED_CACHE_ENV.items():
        assert env[name] == str(tmp_path / folder), name
    for name in ("CUPY_CACHE_DIR", "NUMBA_CACHE_DIR", "HELION_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
                 "CUTE_DSL_CACHE_DIR", "TILELANG_CACHE_DIR", "TVM_FFI_CACHE_DIR"):
        assert Path(env[name]).is_relative_to(tmp_path), name


def test_a_boxed_solution_gets_its_scratch_caches_not_the_trusted_ones(tmp_path):
    trusted = environment.child_env("cuda", 1, str(tmp_path / "trusted"))
    boxed = spec.boxed_env(trusted, str(tmp_path / "scratch"))
    for name in environment.TRUSTED_CACHE_ENV:
        assert Path(boxed[name]).is_relative_to(tmp_path / "scratch"), name


def test_tilelang_and_tvm_ffi_caches_stay_out_of_the_home_folder(tmp_path, monkeypatch):
    # TileLang keeps generated CUDA, cubins and host libraries under ~/.tilelang/cache by default, and TVM-FFI
    # would build its torch DLPack addon under ~/.cache/tvm-ffi: both go to the trusted cache, then to scratch
    from kerneljudge.judging import warm_start

    monkeypatch.setenv("TILELANG_CACHE_DIR", os.path.expanduser("~/.tilelang/cache"))
    monkeypatch.setenv("TVM_FFI_CACHE_DIR", os.path.expanduser("~/.cache/tvm-ffi"))
    env = environment.child_env("cuda", 1, str(tmp_path / "trusted"))
    assert env["TILELANG_CACHE_DIR"] == str(tmp_path / "trusted" / "tilelang")
    assert env["TVM_FFI_CACHE_DIR"] == str(tmp_path / "trusted" / "tvm_ffi")
    boxed = spec.boxed_env(env, str(tmp_path / "scratch"))
    assert boxed["TILELANG_CACHE_DIR"] == str(tmp_path / "scratch" / "cache" / "tilelang")
    assert boxed["TVM_FFI_CACHE_DIR"] == str(tmp_path / "scratch" / "cache" / "tvm_ffi")
    assert {"TILELANG_CACHE_DIR", "TVM_FFI_CACHE_DIR"} <= warm_start.UNKEYED   # per solution: never a template key


def test_helion_never_autotunes_inside_a_judgement(monkeypatch):
    monkeypatch.setenv("HELION_FORCE_AUTOTUNE", "1")
    monkeypatch.setenv("HELION_AUTOTUNE_EFFORT", "full")
    for device in ("cpu", "cuda"):
        env = environment.child_env(device, 1, "/tmp/kj-unused-cache")
        assert env["HELION_AUTOTUNE_EFFORT"] == "none"       # no config: Helion's default config
        assert env["HELION_DISALLOW_AUTOTUNING"] == "1"      # a kernel that insists on searching fails
        assert env["HELION_FORCE_AUTOTUNE"] == "0"           # an inherited force is overridden
    boxed = spec.boxed_env(environment.child_env("cuda", 1, "/tmp/kj-unused-cache"), "/s")
    assert {k: boxed[k] for k in environment.HELION_NO_AUTOTUNE} == environment.HELION_NO_AUTOTUNE


def test_children_tear_cupti_down_after_profiling(tmp_path):
    # a process that profiled keeps paying for CUPTI on every launch otherwise (the reference process profiles
    # for the device clock and is timed again for the next solution): both sides must be alike
    for device in ("cpu", "cuda"):
        assert environment.child_env(device, 1, str(tmp_path))["TEARDOWN_CUPTI"] == "1"


def test_every_child_allocates_host_memory_alike_whatever_it_freed_before(tmp_path, monkeypatch):
    # glibc's dynamic mmap threshold made a process's speed depend on what it had freed (issue 33): fixed in both
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    for device in ("cpu", "cuda"):
        env = environment.child_env(device, 1, str(tmp_path))
        assert int(env["MALLOC_MMAP_THRESHOLD_"]) == 32 << 20 and int(env["MALLOC_TRIM_THRESHOLD_"]) == 64 << 20
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")   # the user's own choice reaches every child unchanged
    assert environment.child_env("cpu", 1, str(tmp_path))["MALLOC_MMAP_THRESHOLD_"] == "131072"
