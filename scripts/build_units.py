"""How long each compile job of one load_inline build takes, as written and with the judge's savings.

    python scripts/build_units.py --out DIR [--solution S.py ...]

For each solution (default: a published-style CUDA solution and a bundled C++ one) it captures the
solution's load_inline call, has torch write the build's ninja file without running it, then runs each
compile job alone (nothing else compiling) and times it:
  binding unit  (main.cpp: torch/extension.h + pybind11)   as written / with the precompiled header
  CUDA unit     (cuda.cu)                                   as written / with torch/types.h for extension.h /
                                                            against the slim stand-in for types.h
plus the one-off cost of making the precompiled header (judging/build/pch.py). CUDA units need a torch built
with CUDA; elsewhere they are skipped. Writes DIR/build-units.json and DIR/build-units.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from kerneljudge.core.paths import examples_root
from kerneljudge.judging.build import lean_headers, pch, pch_worker, slim_headers  # noqa: E402

DEFAULT = [ROOT / "benchmarks" / "solutions" / "level1" / "21_relu__cuda.py",
           examples_root() / "solutions" / "1_gelu_scale__cpp.py"]


class Captured(Exception):
    pass


def load_inline_call(solution: Path) -> dict:
    """The keyword arguments of the solution's (first) load_inline call, without running anything else."""
    import torch.utils.cpp_extension as cpp_extension

    real = cpp_extension.load_inline
    seen: dict = {}

    def capture(*args, **kwargs):
        names = ["name", "cpp_sources", "cuda_sources", "functions"]
        seen.update(dict(zip(names, args)), **kwargs)
        raise Captured

    cpp_extension.load_inline = capture
    try:
        exec(compile(solution.read_text(), str(solution), "exec"), {"__name__": "captured_solution"})
    except Captured:
        pass
    finally:
        cpp_extension.load_inline = real
    if not seen:
        raise SystemExit(f"{solution}: no load_inline call")
    return seen


def ninja_commands(kwargs: dict, folder: Path) -> dict[str, str]:
    """torch's compile command for each object of the build, from the ninja file it writes."""
    import torch.utils.cpp_extension as cpp_extension

    real = cpp_extension._run_ninja_build

    def stop(*args, **kw):
        raise Captured

    cpp_extension._run_ninja_build = stop
    folder.mkdir(parents=True, exist_ok=True)
    try:
        cpp_extension.load_inline(**{**kwargs, "build_directory": str(folder), "verbose": False})
    except Captured:
        pass
    finally:
        cpp_extension._run_ninja_build = real
        cpp_extension.JIT_EXTENSION_VERSIONER.entries.pop(kwargs["name"], None)
    listed = subprocess.run(["ninja", "-t", "commands"], cwd=folder, capture_output=True, text=True, check=True)
    commands = {}
    for line in listed.stdout.splitlines():
        m = re.search(r"-o (\S+\.o)\b", line)
        if m:
            commands[m.group(1)] = line
    return commands


def timed(command: str, cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed: {command[:200]}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return round(time.monotonic() - started, 1)


def measure(solution: Path, work: Path, header_cache: dict) -> list[dict]:
    import torch

    kwargs = load_inline_call(solution)
    has_cuda_unit = bool(kwargs.get("cuda_sources"))
    if has_cuda_unit and not torch.version.cuda:
        print(f"{solution.name}: this torch has no CUDA; only its binding unit is timed", file=sys.stderr)
        kwargs = {**kwargs, "cuda_sources": None}
        has_cuda_unit = False
    folder = work / solution.stem
    commands = ninja_commands(kwargs, folder / "as_written")
    rows = []
    binding = commands["main.o"]
    rows.append({"unit": "binding (main.cpp)", "how": "as written", "seconds": timed(binding, folder / "as_written")})
    flags = pch.binding_flags((folder / "as_written" / "build.ninja").read_text())
    key = json.dumps(flags)
    if key not in header_cache:
        started = time.monotonic()
        done = pch_worker.make(flags, str(folder / "pch"))  # what the judge's .gch maker runs
        if done.returncode != 0:
            raise SystemExit(f"making the precompiled header failed:\n{done.stdout[-2000:]}")
        rows.append({"unit": "precompiled torch/extension.h (once per flag set)", "how": "make",
                     "seconds": round(time.monotonic() - started, 1)})
        header_cache[key] = pch.include_dir(str(folder), "pch")
    with_pch = re.sub(r"^(\S+)", lambda m: f"{m.group(1)} -I{header_cache[key]} -Winvalid-pch", binding, count=1)
    rows.append({"unit": "binding (main.cpp)", "how": "precompiled header",
                 "seconds": timed(with_pch, folder / "as_written")})
    if has_cuda_unit:
        cuda = next(c for o, c in commands.items() if o != "main.o")
        rows.append({"unit": "CUDA (cuda.cu)", "how": "as written", "seconds": timed(cuda, folder / "as_written")})
        lean = lean_headers.lean_request({"kind": "inline", "cuda_sources": list(_as_list(kwargs["cuda_sources"]))})
        if lean:
            lean_commands = ninja_commands({**kwargs, "cuda_sources": lean["cuda_sources"]}, folder / "lean")
            cuda = next(c for o, c in lean_commands.items() if o != "main.o")
            rows.append({"unit": "CUDA (cuda.cu)", "how": "torch/types.h for torch/extension.h",
                         "seconds": timed(cuda, folder / "lean")})
        texts = list(_as_list(kwargs["cuda_sources"]))
        slim = slim_headers.slim_request({"kind": "inline", "cuda_sources": texts,
                                          "extra_cuda_cflags": kwargs.get("extra_cuda_cflags")},
                                         str(folder / "slim-header"), os.path.join(include_dir(), "ATen", "ops"))
        if slim:
            slim_commands = ninja_commands({**kwargs, "cuda_sources": slim["cuda_sources"],
                                            "extra_cuda_cflags": slim["extra_cuda_cflags"]}, folder / "slim")
            cuda = next(c for o, c in slim_commands.items() if o != "main.o")
            rows.append({"unit": "CUDA (cuda.cu)", "how": "slim stand-in for torch/types.h",
                         "seconds": timed(cuda, folder / "slim")})
    for row in rows:
        row["solution"] = solution.name
        print(f"{solution.name}: {row['unit']}, {row['how']}: {row['seconds']} s", file=sys.stderr, flush=True)
    return rows


def include_dir() -> str:
    import torch.utils.cpp_extension as cpp_extension

    return cpp_extension.include_paths()[0]


def _as_list(x) -> list[str]:
    return [x] if isinstance(x, str) else list(x)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--solution", action="append", type=Path, help="a solution file (repeatable)")
    args = p.parse_args()
    import torch

    rows, header_cache = [], {}
    with tempfile.TemporaryDirectory(prefix="kj-units-") as work:
        for solution in args.solution or DEFAULT:
            rows += measure(solution.resolve(), Path(work), header_cache)
    machine = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(),
               "torch": torch.__version__, "cuda": torch.version.cuda, "cpus": os.cpu_count(),
               "compiler": subprocess.run([os.environ.get("CXX", "c++"), "--version"], capture_output=True,
                                          text=True).stdout.splitlines()[0],
               "command": " ".join(sys.argv)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "build-units.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=1))
    md = ["# Compile time of each unit of a load_inline build, one job at a time", ""]
    md += [f"- {k}: {v}" for k, v in machine.items()] + ["", "| solution | unit | how | seconds |", "|---|---|---|---|"]
    md += [f"| {r['solution']} | {r['unit']} | {r['how']} | {r['seconds']} |" for r in rows]
    (out / "build-units.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
