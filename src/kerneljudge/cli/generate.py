"""Command-line subcommands for generation runs: `kerneljudge bench` and `kerneljudge score`.

    kerneljudge bench --model PROVIDER:NAME --problems suite|DIR --out RUN_DIR [options]
    kerneljudge score RUN_DIR [--json] [--baseline [NAME=]FILE|compile|eager ...]

Exit codes: 0 when the run finished (whatever the verdicts); 1 when some items could not be generated
or judged (logged in events.jsonl; re-run the same command to retry them); 2 for bad usage or settings
that do not match the run folder; 3 for unusable inputs (no problems, an unreadable baseline, an empty
run folder); 130 when interrupted (finished items are kept; re-run to resume).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kerneljudge.cli.options import ExitCode, add_held_out_option
from kerneljudge.cli.results import add_floor_option, load_floor
from kerneljudge.core.types import BACKENDS, DEVICES, POLICIES, PRECISIONS


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def register(subparsers: Any) -> None:
    """Add the `bench` and `score` subcommands to an argparse subparsers object."""
    p = subparsers.add_parser(
        "bench", help="have a model write solutions for problems, judge them (with refinement turns), score them",
        description="Prompts the model with each problem, extracts the solution from each reply, judges it, and "
                    "for --turns > 1 feeds the judge's report back for another attempt. Everything goes to the "
                    "run folder (config.json, prompts/, replies/, solutions/, events.jsonl, verdicts.jsonl, "
                    "cache/); re-running the same command resumes it without repeating finished items or model "
                    "requests. Keys come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY), never from "
                    "the command line. See docs/generation.md.")
    p.add_argument("--model", required=True, metavar="PROVIDER:NAME",
                   help="openai:MODEL (any OpenAI-compatible server: OpenAI, vLLM, SGLang), anthropic:MODEL, "
                        "or replay:FOLDER (recorded replies, offline)")
    p.add_argument("--problems", required=True, metavar="suite|DIR",
                   help="'suite' for the bundled suite, or a folder of problem files (or level*/ subfolders)")
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run folder (created, or resumed)")
    p.add_argument("--level", type=int, default=None, help="only problems of this level")
    p.add_argument("--problem-ids", type=_ids, default=None, metavar="ID,...",
                   help="only these problems (ids such as level1/19_ReLU, or file stems)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N selected problems")
    p.add_argument("--samples", type=int, default=1, metavar="K", help="independent samples per problem (default 1)")
    p.add_argument("--turns", type=int, default=1, metavar="T",
                   help="attempts per sample: turn t>0 sees the previous solution and the judge's report "
                        "(default 1)")
    p.add_argument("--all-turns", action="store_true",
                   help="keep refining after an accepted turn (default: a trajectory stops once accepted)")
    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="what the model is asked to write (default: cuda on a CUDA device, triton on the CPU)")
    p.add_argument("--shots", choices=("0", "1", "few"), default="0", help="worked examples in the prompt")
    p.add_argument("--hardware", choices=("auto", "none", "h200"), default="auto",
                   help="GPU facts in the prompt (auto: the H200 block when judging on an H200)")
    p.add_argument("--temperature", type=float, default=None,
                   help="sampling temperature (default 0 for one sample, 0.7 for several)")
    p.add_argument("--max-tokens", type=int, default=8192, help="reply length limit (default 8192)")
    p.add_argument("--seed", type=int, default=None,
                   help="send seed+sample with each request (servers that honour it repeat themselves)")
    p.add_argument("--base-url", default=None,
                   help="server URL, e.g. http://127.0.0.1:8000/v1 for vLLM (default: OPENAI_BASE_URL / "
                        "ANTHROPIC_BASE_URL, else the vendor's)")
    p.add_argument("--concurrency", type=int, default=4, help="model requests in flight (default 4)")
    p.add_argument("--max-attempts", type=int, default=6, help="tries per request on 429/5xx/timeouts (default 6)")
    p.add_argument("--request-timeout", type=float, default=600.0, help="seconds per model request (default 600)")
    p.add_argument("--device", choices=DEVICES + ("auto",), default="auto",
                   help="where solutions are judged (default cuda if present)")
    p.add_argument("--policy", choices=POLICIES, default="strict",
                   help="strict: work must happen in the solution's own kernels (default)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32", help="run precision")
    p.add_argument("--trials", type=int, default=5, help="correctness trials per solution (default 5)")
    p.add_argument("--budget", type=float, default=2.0, help="timing budget per model in seconds (default 2)")
    p.add_argument("--no-timing", action="store_true", help="check correctness only")
    add_held_out_option(p)
    p.add_argument("--run-timeout", type=float, default=300.0, help="seconds allowed after the build (default 300)")
    p.add_argument("--build-timeout", type=float, default=600.0, help="seconds allowed to build (default 600)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads for reference and solution (default 1)")
    p.add_argument("--judge-workers", type=int, default=None,
                   help="solutions judged at once; builds overlap, device use never does (default 1 on the "
                        "CPU, 4 on a GPU)")
    p.add_argument("--cache-dir", default=None, help="the judge's build cache (default ~/.cache/kerneljudge)")
    p.add_argument("--json", action="store_true", help="print the score summary as JSON instead of a table")
    p.set_defaults(func=cmd_bench)

    p = subparsers.add_parser(
        "score", help="score a bench run folder (fast_p, fast_p@k, pass@k, by turn, by level)",
        description="Reads RUN_DIR/verdicts.jsonl (or a JSONL log given directly) and prints fast_p for "
                    "p in {0, 0.5, 0.8, 1, 1.5, 2}, geometric-mean speedup, per level, best-so-far by refinement "
                    "turn, first-k samples and unbiased pass@k, with bootstrap intervals over problems.")
    p.add_argument("run", metavar="RUN_DIR", help="a bench run folder, or a verdicts JSONL file")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--baseline", action="append", default=[], metavar="[NAME=]FILE|compile|eager",
                   help="JSON object problem_id -> baseline ms (e.g. torch.compile times, measured at the same "
                        "preset and precision); fast_p is also scored against it. 'compile' (or 'eager') uses "
                        "the packaged torch.compile (or eager) reference times measured on the H200 at the "
                        "default preset in fp32 (docs/baselines.md). Repeatable")
    p.add_argument("--ks", type=lambda t: [int(x) for x in _ids(t)], default=[1, 5, 10], metavar="K,...",
                   help="k values for fast_p@k and pass@k (default 1,5,10)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (default 1000; 0 for none)")
    add_floor_option(p)
    p.set_defaults(func=cmd_score)


# ---------------------------------------------------------------------------------------------- bench


def _settings(args: argparse.Namespace):
    from kerneljudge.generate.bench_settings import BenchSettings

    return BenchSettings(
        model=args.model, problems=args.problems, out=args.out, level=args.level, samples=args.samples,
        turns=args.turns, all_turns=args.all_turns, backend=args.backend, shots=args.shots, device=args.device,
        policy=args.policy, precision=args.precision, hardware=args.hardware, limit=args.limit,
        problem_ids=args.problem_ids, temperature=args.temperature, max_tokens=args.max_tokens, seed=args.seed,
        base_url=args.base_url, concurrency=args.concurrency, max_attempts=args.max_attempts,
        request_timeout=args.request_timeout, judge_workers=args.judge_workers, trials=args.trials,
        budget=args.budget, run_timeout=args.run_timeout, build_timeout=args.build_timeout,
        timing=not args.no_timing, threads=args.threads, cache_dir=args.cache_dir, held_out=args.held_out)


def cmd_bench(args: argparse.Namespace) -> int:
    from kerneljudge.results import score, verdict_rows
    from kerneljudge.generate.bench import BenchError, run_bench
    from kerneljudge.generate.runfolder import RunFolder, generation_totals

    if args.problems != "suite" and not Path(args.problems).is_dir():
        print(f"kerneljudge: --problems must be 'suite' or a folder; {args.problems} is neither", file=sys.stderr)
        return ExitCode.INPUT
    from kerneljudge.core.progress import Progress

    try:
        with Progress(desc="bench") as progress:
            result = run_bench(_settings(args), say=progress.callback)
    except BenchError as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return {"input": ExitCode.INPUT, "provider": ExitCode.INCOMPLETE}.get(exc.kind, ExitCode.USAGE)
    except KeyboardInterrupt:
        print(f"kerneljudge: interrupted; finished items are in {args.out}/verdicts.jsonl; run the same command "
              "again to resume", file=sys.stderr)
        return 130
    stats = result.provider_stats
    gen = generation_totals(result.rows)
    counts = verdict_rows.verdict_counts(result.rows)
    tally = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    sent = stats.get("requests")
    print(f"bench: {result.new_rows} item(s) this run, {result.skipped} from before; {len(result.rows)} in the run "
          f"folder ({tally or 'none'}); {len(result.errors)} error(s)", file=sys.stderr)
    if sent == 0:
        print(f"bench: no model requests this run; {result.wall_s:.1f} s", file=sys.stderr)
    elif sent is not None:
        print(f"bench: {sent} request(s) sent, {stats.get('cache_hits', 0)} answered from the cache; this run "
              f"{stats.get('prompt_tokens', 0)}+{stats.get('completion_tokens', 0)} tokens, "
              f"{_cost(stats.get('cost_usd') if stats.get('calls_without_price', 0) == 0 else None)}; "
              f"{result.wall_s:.1f} s", file=sys.stderr)
    if result.errors:
        print(f"bench: {len(result.errors)} item(s) failed to generate or judge (see events.jsonl); run the same "
              "command again to retry them", file=sys.stderr)
    summary = _summarize(result.rows, {}, ks=(1, 5, 10), n_boot=1000)
    summary["generation"] = gen
    RunFolder(result.folder).write_summary(summary)
    if args.json:
        print(json.dumps(summary, sort_keys=True, default=str))
    elif result.rows:
        print(score.summary_table(summary))
    return ExitCode.INCOMPLETE if result.errors else ExitCode.OK


def _cost(value: Any) -> str:
    return "cost unknown (model not in the price table)" if value is None else f"${value:.4f}"


def _summarize(rows: list[dict[str, Any]], baselines: dict[str, dict[str, float]], ks, n_boot: int) -> dict[str, Any]:
    from kerneljudge.results import score

    return score.summary(rows, baselines=baselines or None, ks=tuple(ks), n_boot=n_boot)


# ---------------------------------------------------------------------------------------------- score


def cmd_score(args: argparse.Namespace) -> int:
    from kerneljudge.results import score
    from kerneljudge.results.baselines import load_baselines
    from kerneljudge.results.noise_floor import floor_summary
    from kerneljudge.generate.runfolder import RunFolder, generation_totals, missing_trajectories, read_verdicts

    path = Path(args.run)
    if not path.exists():
        print(f"kerneljudge: {path} does not exist", file=sys.stderr)
        return ExitCode.INPUT
    rows, dropped = read_verdicts(path)
    if not rows:
        print(f"kerneljudge: no verdicts in {path}", file=sys.stderr)
        return ExitCode.INPUT
    if dropped:
        print(f"kerneljudge: {dropped} repeated row(s) for the same (problem, sample, turn) ignored", file=sys.stderr)
    try:
        baselines = load_baselines(args.baseline, rows)
        floor = load_floor(args.floor, rows)
    except ValueError as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return ExitCode.INPUT
    if any(k < 1 for k in args.ks) or args.n_boot < 0:
        print("kerneljudge: --ks values must be at least 1 and --n-boot at least 0", file=sys.stderr)
        return ExitCode.USAGE
    summary = _summarize(rows, baselines, args.ks, args.n_boot)
    summary["generation"] = generation_totals(rows)
    if floor is not None:
        summary["noise_floor"] = floor_summary(rows, floor, args.floor)
    config = RunFolder(path).read_config() if path.is_dir() else None
    missing = missing_trajectories(config, rows)
    if missing:
        summary["missing_trajectories"] = [{"problem_id": pid, "sample": s} for pid, s in missing]
        print(f"kerneljudge: the run is incomplete: {len(missing)} (problem, sample) trajectory(ies) have no verdict "
              "yet and are left out of every average (resume the bench run to finish them)", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, sort_keys=True, default=str))
        return ExitCode.OK
    print(score.summary_table(summary))
    gen = summary["generation"]
    if gen["replies"]:
        print(f"\ngeneration: {gen['replies']} replies ({gen['no_code']} without code, {gen['truncated']} cut at "
              f"max tokens), {gen['prompt_tokens']}+{gen['completion_tokens']} tokens, {_cost(gen['cost_usd'])}"
              + (f" ({gen['replies_without_price']} replies without a price)"
                 if gen["replies_without_price"] and gen["cost_usd"] is not None else ""))
    return ExitCode.OK


__all__ = ["register", "cmd_bench", "cmd_score"]
