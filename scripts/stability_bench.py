"""Stability benchmark (issue 11 part 5): do speedups stay put when honest solutions are judged again,
and when the host's other cores are busy?

    python scripts/stability_bench.py                  # on the H200: default set, 3 quiet + 3 busy runs
    python scripts/stability_bench.py --device cpu --budget 0.2 --runs-quiet 1 --runs-busy 1 --out-dir /tmp/kj-stab
                                                       # smoke test on a CPU (small preset, Triton interpreter)

What it judges: the bundled examples' honest CUDA and Triton solutions (Triton only on the CPU) and every
solution in benchmarks/solutions/level{1,2}/ (see benchmarks/README.md), copied into one staging folder
and judged by `kerneljudge run` in a subprocess, exactly as a user runs it. First one warm-up run (not
counted: it fills the build cache), then quiet and busy runs alternately (quiet-1, busy-1, quiet-2, ...),
each with a fresh run log and the same cache. During a busy run one busy-loop process per core that the
judge does not reserve for timing runs pinned to that core (`kerneljudge.judging.cores.plan_cores`); they
stop when the run ends, on Ctrl-C, and by themselves if this script dies.

It writes OUT_DIR/DATE-GPU-stability.md and .json (date, GPU, driver, versions, the command, the bars of the
issue and one row per solution), rewritten after every run, so an interrupted benchmark still leaves a
report of the runs it finished. Run logs and the build cache stay in --work-dir.

Time: a run takes about (seconds the judge holds the GPU per solution) x (solutions), about 3 s x 38 on
the H200 (estimated, not measured), so warm-up plus six runs of the default set take some 12-14 minutes.
--deadline-min (default 9.5 on CUDA) skips the runs that would end after it, so a session limited to 10
minutes still ends with a report. For all six runs within such limits, split the set and merge the reports:

    python scripts/stability_bench.py --shard 1/2 --out-dir DIR1     # one session on the GPU
    python scripts/stability_bench.py --shard 2/2 --out-dir DIR2     # another (a fresh machine is fine)
    python scripts/stability_bench.py --merge DIR1/*.json DIR2/*.json --out-dir docs/evidence/   # anywhere, no GPU
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kerneljudge.core.paths import examples_root, problems_root, suite_tables_root
from kerneljudge.analysis import detect_backend  # noqa: E402
from kerneljudge.judging.cores import CoreLayout, plan_cores  # noqa: E402
from kerneljudge.core.jsonl import read_objects  # noqa: E402
from stability_report import merge, render_markdown, run_counts, solution_rows, summarize  # noqa: E402

EXAMPLES = examples_root()
SUITE = problems_root()
SOLUTIONS = ROOT / "benchmarks" / "solutions"
BASELINES = suite_tables_root() / "baselines_h200.json"
# a busy loop that ends by itself once its parent (this script) is gone
BUSY_LOOP = ("import os, sys\nparent = int(sys.argv[1])\n"
             "while os.getppid() == parent:\n    for _ in range(100000):\n        pass\n")


@dataclass(frozen=True)
class Entry:
    problem: Path        # the problem file
    solution: Path       # the solution file
    staged_problem: str  # path under the staged problems folder (level1/x.py, or x.py for an example)
    kind: str
    baseline_ms: float | None  # the problem's eager reference time on the H200 (suite baselines)


def select(device: str, only: list[str]) -> list[Entry]:
    """The default set: honest example solutions for the device, then the benchmark solutions."""
    baselines = json.loads(BASELINES.read_text()).get("problems", {}) if BASELINES.exists() else {}
    backends = ("cuda", "triton") if device == "cuda" else ("triton",)
    entries = []
    for sol in sorted((EXAMPLES / "solutions").glob("*.py")):
        text = sol.read_text()
        backend = detect_backend(text)
        if "# expect: correct" not in text or backend not in backends:
            continue
        problem = EXAMPLES / "problems" / f"{sol.stem.split('__', 1)[0]}.py"
        entries.append(Entry(problem, sol, problem.name, f"bundled example ({backend})", None))
    for level_dir in sorted(SOLUTIONS.glob("level*")):
        for sol in sorted(level_dir.glob("*.py")):
            if detect_backend(sol.read_text()) not in backends:
                continue  # the CUDA ones on the CPU
            stem = sol.stem.split("__", 1)[0]
            problem = SUITE / level_dir.name / f"{stem}.py"
            if not problem.exists():
                raise SystemExit(f"{sol}: no suite problem {problem} (names are <problem stem>__<tag>.py)")
            kind = next((m.group(1).strip() for m in re.finditer(r"^# kind: (.*)$", sol.read_text(), re.M)), "")
            baseline = baselines.get(f"{level_dir.name}/{stem}", {}).get("eager_ms")
            entries.append(Entry(problem, sol, f"{level_dir.name}/{problem.name}", kind, baseline))
    if only:
        entries = [e for e in entries if any(fnmatch.fnmatch(e.solution.name, g) for g in only)]
    names = [e.solution.name for e in entries]
    if len(set(names)) != len(names):
        raise SystemExit("two solutions share a file name; the staging folder needs them distinct")
    return entries


def stage(entries: list[Entry], folder: Path) -> tuple[Path, Path]:
    """Copy the problems and solutions into one problems folder and one flat solutions folder."""
    problems, solutions = folder / "problems", folder / "solutions"
    shutil.rmtree(folder, ignore_errors=True)
    for e in entries:
        (problems / e.staged_problem).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(e.problem, problems / e.staged_problem)
        solutions.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(e.solution, solutions / e.solution.name)
    return problems, solutions


def core_layout(device: str, reserved: int | None) -> CoreLayout:
    """The layout the judge will use (same inputs: device slots, --threads 1, --reserved-cores)."""
    from kerneljudge.judging.batch import device_count

    return plan_cores(device_count(device), device, threads=1, reserved=reserved)


class CpuLoad:
    """One busy-loop process per given core, pinned there; stop() ends them (also safe to call twice)."""

    def __init__(self, cores: tuple[int, ...]):
        self.cores = cores
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        unpinned = []
        for core in self.cores:
            proc = subprocess.Popen([sys.executable, "-S", "-c", BUSY_LOOP, str(os.getpid())],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)  # Ctrl-C reaches this script, which stops them
            self.procs.append(proc)
            try:
                os.sched_setaffinity(proc.pid, {core})
            except OSError as exc:
                unpinned.append(f"{core} ({exc.strerror or exc})")
        if unpinned:
            print(f"[stability] warning: load processes left unpinned for cores {', '.join(unpinned)}", flush=True)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []


def judge_command(args: argparse.Namespace, problems: Path, solutions: Path, out: Path, cache: Path) -> list[str]:
    cmd = [sys.executable, "-m", "kerneljudge.cli.main", "run", "--problems", str(problems), "--solutions",
           str(solutions), "--out", str(out), "--device", args.device, "--budget", str(args.budget),
           "--cache-dir", str(cache)]
    if args.reserved_cores is not None:
        cmd += ["--reserved-cores", str(args.reserved_cores)]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    return cmd


def judge_run(name: str, cmd: list[str], out: Path, total: int, log: Path) -> dict[str, Any]:
    """One `kerneljudge run` in a subprocess; its verdicts and wall time. Progress every 15 s."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    last = 0.0
    with log.open("w") as log_file:
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        try:
            while proc.poll() is None:
                time.sleep(1.0)
                if time.monotonic() - last >= 15:
                    last = time.monotonic()
                    print(f"[stability] {name}: {_count_lines(out)}/{total} judged, {last - started:.0f} s", flush=True)
        finally:
            if proc.poll() is None:  # interrupted: the judge ends its own children when it ends
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    wall = time.monotonic() - started
    verdicts = [v for v in read_objects(out) if "verdict" in v]  # a torn last line (killed mid-write) is skipped
    if proc.returncode != 0 or len(verdicts) != total:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        print(f"[stability] {name}: kerneljudge run exited {proc.returncode} with {len(verdicts)}/{total} verdicts; "
              f"the end of {log}:\n{tail}", flush=True)
    return {"wall_s": round(wall, 2), "returncode": proc.returncode, "verdicts": verdicts, "log": str(log)}


def _count_lines(path: Path) -> int:
    try:
        return sum(1 for line in path.read_text().splitlines() if line.strip())
    except OSError:
        return 0


def schedule(quiet: int, busy: int) -> list[tuple[str, str]]:
    """quiet-1, busy-1, quiet-2, busy-2, ...: alternating, so drift over time is not read as load."""
    order = []
    for i in range(max(quiet, busy)):
        if i < quiet:
            order.append((f"quiet-{i + 1}", "quiet"))
        if i < busy:
            order.append((f"busy-{i + 1}", "busy"))
    return order


def machine_info(args: argparse.Namespace, runs: list[dict[str, Any]], layout: CoreLayout, n_load: int,
                 entries: list[Entry], started: str) -> dict[str, Any]:
    verdicts = [v for r in runs for v in r["verdicts"]]
    versions = next((v["versions"] for v in verdicts if v.get("versions")), {})
    device_name = next((v["device_name"] for v in verdicts if v.get("device_name")), args.device)
    driver = versions.get("driver") or (_nvidia_smi_driver() if args.device == "cuda" else None)
    examples = sum(e.kind.startswith("bundled") for e in entries)
    return {
        "title": f"Stability benchmark: {device_name}",
        "date": started, "device": args.device, "gpu": device_name, "driver": driver or "-",
        "versions": ", ".join(f"{k} {v}" for k, v in sorted(versions.items()) if k != "driver"),
        "kerneljudge commit": _git_commit(),
        "cpu cores": os.cpu_count(), "core layout": layout.describe(),
        "busy runs": f"busy-loop processes: {n_load}, one pinned to each core not reserved for timing",
        "solutions": f"{len(entries)}: bundled examples {examples}, benchmark solutions {len(entries) - examples}",
        "budget": f"--budget {args.budget} s per model", "work dir": str(args.work_dir),
        **({"shard": f"{args.shard[0]}/{args.shard[1]}"} if args.shard else {}),
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
    }


def _git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{head}{' (uncommitted changes)' if dirty else ''}" if head else "-"
    except (OSError, subprocess.TimeoutExpired):
        return "-"


def _nvidia_smi_driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        return out.splitlines()[0] if out else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def write_report(out_dir: Path, info: dict[str, Any], rows: list[dict[str, Any]],
                 runs: list[dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    """OUT_DIR/DATE-GPU-stability.md and .json; the path without suffix and the summary."""
    summary = summarize(rows, runs)
    slug = re.sub(r"[^a-z0-9]+", "-", info["gpu"].lower().replace("nvidia", "")).strip("-") or "device"
    shard = f"-shard{info['shard'].replace('/', 'of')}" if info.get("shard") else ""
    stem = out_dir / f"{info['date'][:10]}-{slug}-stability{shard}"
    out_dir.mkdir(parents=True, exist_ok=True)
    public_runs = [{**{k: v for k, v in r.items() if k != "verdicts"},
                    **dict(zip(("solutions", "correct"), run_counts(r)))} for r in runs]
    stem.with_suffix(".json").write_text(json.dumps({"info": info, "runs": public_runs, "summary": summary,
                                                     "solutions": rows}, indent=1, default=str))
    stem.with_suffix(".md").write_text(render_markdown(info, rows, runs, summary))
    return stem, summary


def report_runs(args: argparse.Namespace, runs: list[dict[str, Any]], layout: CoreLayout, entries: list[Entry],
                started: str, notes: list[str]) -> tuple[Path, dict[str, Any]]:
    timed = [r for r in runs if r["condition"] != "warmup"]
    meta = {e.solution.name: {"kind": e.kind, "baseline_ms": e.baseline_ms} for e in entries}
    info = {**machine_info(args, timed, layout, len(layout.builds), entries, started), "notes": notes}
    return write_report(args.out_dir, info, solution_rows(timed, meta), timed)


def merge_reports(paths: list[Path], out_dir: Path) -> tuple[Path, dict[str, Any]]:
    """One report from the .json reports of several shards (--shard 1/2, --shard 2/2)."""
    reports = [json.loads(p.read_text()) for p in paths]
    rows, runs = merge(reports)
    first = reports[0]["info"]
    gpus = sorted({r["info"].get("gpu", "") for r in reports})
    notes = [f"Merged from {len(paths)} shard reports ({', '.join(p.name for p in paths)}); each shard ran on "
             "its own (possibly different) machine, and a merged run's wall time is the sum of the shards'."]
    notes += list(dict.fromkeys(n for r in reports for n in r["info"].get("notes", [])))  # once each, in order
    info = {**{k: v for k, v in first.items() if k != "shard"}, "gpu": " + ".join(gpus),
            "solutions": f"{len(rows)} (from {len(paths)} shards)", "notes": notes,
            "command": "\n".join(r["info"].get("command", "") for r in reports)
            + "\n" + " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])}
    return write_report(out_dir, info, rows, runs)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "evidence",
                   help="where the report goes (default docs/evidence/)")
    p.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "kerneljudge-stability",
                   help="run logs, staging folder and build cache (default %(default)s)")
    p.add_argument("--cache-dir", type=Path, default=None, help="build cache (default WORK_DIR/cache)")
    p.add_argument("--runs-quiet", type=int, default=3, help="timed runs on a quiet host (default 3)")
    p.add_argument("--runs-busy", type=int, default=3, help="timed runs with the non-reserved cores busy (default 3)")
    p.add_argument("--budget", type=float, default=0.5, help="kerneljudge --budget, seconds per model (default 0.5)")
    p.add_argument("--only", action="append", default=[], metavar="GLOB",
                   help="judge only solution files matching GLOB (repeatable), e.g. '*softmax*'")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="judge every N-th solution starting with the K-th (1-based), to split the set over N "
                        "machine calls; combine the reports with --merge")
    p.add_argument("--merge", nargs="+", type=Path, default=None, metavar="REPORT.json",
                   help="judge nothing: write one report from the .json reports of the shards")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="default cuda")
    p.add_argument("--reserved-cores", type=int, default=None, help="kerneljudge --reserved-cores (default: its own)")
    p.add_argument("--jobs", type=int, default=None, help="kerneljudge --jobs (default: its own)")
    p.add_argument("--no-warmup", action="store_true", help="skip the warm-up run (only when the cache is warm)")
    p.add_argument("--deadline-min", type=float, default=None,
                   help="skip runs projected to end after this many minutes from the start "
                        "(default 9.5 on cuda, where the device tool allows 10; none on cpu)")
    args = p.parse_args(argv)
    if args.runs_quiet < 1 or args.runs_busy < 0:
        p.error("--runs-quiet must be at least 1 and --runs-busy at least 0")
    if args.budget <= 0:
        p.error("--budget must be positive")
    if args.shard is not None:
        m = re.fullmatch(r"(\d+)/(\d+)", args.shard)
        if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
            p.error("--shard takes K/N with 1 <= K <= N, e.g. 1/2")
        args.shard = (int(m.group(1)), int(m.group(2)))
    if args.deadline_min is None and args.device == "cuda":
        args.deadline_min = 9.5
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.merge:
        stem, summary = merge_reports(args.merge, args.out_dir)
        return _print_result(stem, summary, "merged")
    began = time.monotonic()
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    entries = select(args.device, args.only)
    if args.shard:
        k, n = args.shard
        entries = entries[k - 1::n]
    if not entries:
        raise SystemExit("no solutions selected (check --only and --shard)")
    session = args.work_dir / dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    cache = args.cache_dir or args.work_dir / "cache"
    problems, solutions = stage(entries, session / "staged")
    layout = core_layout(args.device, args.reserved_cores)
    load = CpuLoad(layout.builds)
    plan = ([("warm-up", "warmup")] if not args.no_warmup else []) + schedule(args.runs_quiet, args.runs_busy)
    print(f"[stability] {len(entries)} solutions; runs: {', '.join(n for n, _ in plan)}; logs in {session}")
    print(f"[stability] {layout.describe()}; busy runs load cores {','.join(map(str, layout.builds))}")
    signal.signal(signal.SIGTERM, _raise_interrupt)
    runs: list[dict[str, Any]] = []
    notes: list[str] = []
    if args.device == "cpu":
        notes.append("A CPU smoke test: the Triton interpreter's and the host clock's times say nothing about the "
                     "GPU bars below; it shows the benchmark runs end to end and renders.")
    try:
        for name, condition in plan:
            timed = [r for r in runs if r["condition"] != "warmup"]
            projected = max((r["wall_s"] for r in timed), default=0.0) * 1.05
            elapsed = time.monotonic() - began
            if args.deadline_min and timed and elapsed + projected > args.deadline_min * 60:
                notes.append(f"Stopped before {name}: {elapsed / 60:.1f} min elapsed and a run takes about "
                             f"{projected / 60:.1f} min, past --deadline-min {args.deadline_min:g}.")
                print(f"[stability] {notes[-1]}")
                break
            out = session / f"{name}.jsonl"
            cmd = judge_command(args, problems, solutions, out, cache)
            print(f"[stability] {name} ({condition}): {shlex.join(cmd)}", flush=True)
            if condition == "busy":
                load.start()
            try:
                run = judge_run(name, cmd, out, len(entries), session / f"{name}.log")
            finally:
                load.stop()
            runs.append({"name": name, "condition": condition, **run})
            ok = sum(v.get("verdict") == "correct" for v in run["verdicts"])
            print(f"[stability] {name}: {ok}/{len(entries)} correct in {run['wall_s']:.0f} s", flush=True)
            if condition != "warmup":  # rewritten after every run: an interrupted benchmark leaves its report
                report_runs(args, runs, layout, entries, started, notes)
    except KeyboardInterrupt:
        notes.append("Interrupted before every run had finished.")
        print("\n[stability] interrupted; load processes stopped", flush=True)
    finally:
        load.stop()
    if not any(r["condition"] != "warmup" for r in runs):
        print("[stability] no timed run finished: no report written")
        return 130 if notes else 1
    stem, summary = report_runs(args, runs, layout, entries, started, notes)
    print(f"[stability] {(time.monotonic() - began) / 60:.1f} min in all")
    return _print_result(stem, summary, "written")


def _print_result(stem: Path, summary: dict[str, Any], how: str) -> int:
    print(f"[stability] report {how}: {stem}.md and .json")
    for bar in summary["bars"].values():
        print(f"[stability]   {bar['status']:4}  {bar['label']}: {bar['passed']}/{bar['checked']}")
    return 0


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
