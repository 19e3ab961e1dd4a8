"""Benchmark `kerneljudge serve` under concurrent load from the reward function.

    python scripts/service_bench.py --out DIR [--device cuda] [--clients 16] [--variants 6] [--budget 0.5]

Starts the service (a real process, loopback, a fresh journal), then:
1. cold: judges each base solution once (builds them);
2. load: `--clients` threads each score a batch of model-style replies through KernelReward(url=...): every
   base solution in `--variants` textual variants (a comment line added, so each is a new job whose build is
   cached), repeats included; reports verdicts per hour of distinct judgements and the reward calls' latency;
3. latency: a new variant of an already-built solution, sent alone to the idle service, five times: the wall
   time from submit to verdict (the issue's bar: at most 3 s), with the verdict's phases.
Writes DIR/service-bench.json and prints it (the journal and the build cache go to --work-dir).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kerneljudge.service.client import JudgeClient  # noqa: E402
from kerneljudge.service.reward import KernelReward  # noqa: E402
from tests.service_proc import Service  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
GPU_SOLUTIONS = ["gpu_correct_cuda_scale_relu.py", "gpu_correct_cuda_shared_mem.py", "correct_triton_row_sum.py",
                 "correct_triton_small_matmul.py", "wrong_returns_input.py", "torch_plain.py"]
CPU_SOLUTIONS = ["correct_triton_row_sum.py", "wrong_returns_input.py", "torch_plain.py"]


def label(name: str, key: str) -> str | None:
    for line in (FIXTURES / "solutions" / name).read_text().splitlines()[:20]:
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return None


def reply(name: str, variant: int) -> str:
    code = (FIXTURES / "solutions" / name).read_text().rstrip("\n") + f"\n# sample {variant}\n"
    return f"Here is the kernel.\n\n```python\n{code}```\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--variants", type=int, default=6)
    p.add_argument("--budget", type=float, default=0.5, help="timing budget per model, seconds")
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--work-dir", default=None, help="journal and build cache (default: a new temporary folder)")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = GPU_SOLUTIONS if args.device == "cuda" else CPU_SOLUTIONS
    problems = {n: str(FIXTURES / "problems" / label(n, "problem")) for n in names}
    extra = ["--budget", str(args.budget)] + (["--jobs", str(args.jobs)] if args.jobs else [])
    if args.device == "cpu":
        extra += ["--no-timing"]
    # the journal and build cache live outside --out, which then holds only the report (and stays small)
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="kj-service-bench-"))
    service = Service(work / "journal", "--queue-limit", "4096", *extra, cache_dir=str(work / "cache"),
                      device=args.device, timeout_s=300)
    result: dict = {"device": args.device, "clients": args.clients, "variants": args.variants,
                    "budget_s": args.budget, "host": platform.node(), "python": platform.python_version()}
    try:
        reward = KernelReward(url=service.url, timeout_s=1800)
        client = JudgeClient(service.url)
        t0 = time.monotonic()
        cold = reward.score([reply(n, 0) for n in names], [problems[n] for n in names])
        result["cold"] = {"wall_s": round(time.monotonic() - t0, 2),
                          "verdicts": {n: r.verdict["verdict"] if r.verdict else None for n, r in zip(names, cold)}}
        before = client.status()["counters"]["judged_since_start"]
        batches = [[(n, v) for v in range(1 + (c % args.variants), 1 + args.variants) for n in names]
                   for c in range(args.clients)]
        latencies: list[float] = []
        lock = threading.Lock()

        def one_client(batch: list[tuple[str, int]]) -> list[float | None]:
            own = KernelReward(url=service.url, timeout_s=1800)
            started = time.monotonic()
            scores = own(prompts=[""] * len(batch), completions=[reply(n, v) for n, v in batch],
                         problem_id=[problems[n] for n, _ in batch])
            with lock:
                latencies.append(time.monotonic() - started)
            return scores

        t1 = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.clients) as pool:
            all_scores = list(pool.map(one_client, batches))
        load_wall = time.monotonic() - t1
        status = client.status()
        judged = status["counters"]["judged_since_start"] - before
        counted = [x for scores in all_scores for x in scores if x is not None]   # None: unjudgeable
        result["load"] = {"wall_s": round(load_wall, 2), "completions": sum(len(b) for b in batches),
                          "distinct_judged": judged, "verdicts_per_hour": round(judged / load_wall * 3600),
                          "reward_call_s_median": round(statistics.median(latencies), 2),
                          "mean_reward": round(sum(counted) / len(counted), 3) if counted else None,
                          "unjudgeable": sum(map(len, all_scores)) - len(counted),
                          "devices": status["devices"]}
        singles = []
        target = names[0]
        for k in range(5):
            t2 = time.monotonic()
            job = client.submit((FIXTURES / "solutions" / target).read_text() + f"\n# latency probe {k}\n",
                                problem_text=Path(problems[target]).read_text())
            verdict = client.wait(job, timeout_s=600)
            singles.append({"wall_s": round(time.monotonic() - t2, 3), "verdict": verdict["verdict"],
                            "phases_s": verdict.get("phases_s"), "judge_wall_s": verdict.get("wall_s")})
        result["latency_already_built"] = {"solution": target, "runs": singles,
                                           "median_s": statistics.median(s["wall_s"] for s in singles)}
        result["status"] = client.status()
    finally:
        service.stop()
    (out / "service-bench.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "status"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
