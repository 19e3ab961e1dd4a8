"""Small hand-made runs for the reporting tests: a bench run folder and a `run` JSONL log, written into a
temporary folder. Some of their text is hostile on purpose (markup and script in a solution, a reason,
an error excerpt and a problem id), as a model could write it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

HOSTILE_SOLUTION = (
    "import torch\n"
    "# </pre><img src=x onerror=\"window.__pwned = 'img'\">\n"
    "PAYLOAD = '<script>window.__pwned = \"script\"</script>'\n"
    "# </details></td></tr></table><svg onload=\"window.__pwned = 'svg'\"></svg>\n"
    "# \u2028 line separator and </script><script>window.__pwned = 'json'</script>\n"
    "class ModelNew(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x\n"
)
HOSTILE_REASON = "output differs <b onmouseover=\"window.__pwned='reason'\">here</b> & there"
HOSTILE_EXCERPT = "Traceback:\n  </pre><script>window.__pwned = 'excerpt'</script>\nRuntimeError: boom"
HOSTILE_PROBLEM = "level2/7_<i>italic</i>"

TIMING = {"median_ms": 1.0, "mean_ms": 1.05, "min_ms": 0.98, "max_ms": 1.3, "std_ms": 0.04, "ci95_low_ms": 0.99,
          "ci95_high_ms": 1.02, "samples": 20, "warmup_calls": 3, "clock": "cuda_event"}
PROFILE = [{"name": "my_softmax_kernel", "class": "custom", "device_us": 812.5, "calls": 1, "share": 0.9},
           {"name": "at::native::fill", "class": "allowed", "device_us": 90.0, "calls": 1, "share": 0.1},
           {"name": "(total)", "class": "total", "device_us": 902.5, "calls": 2, "share": 1.0, "clock": "cuda",
            "custom_share": 0.9, "library_compute_share": 0.0, "allowed_share": 0.1, "other_share": 0.0}]


def verdict(pid: str, verdict: str = "correct", speedup: float | None = None, **extra: Any) -> dict[str, Any]:
    """A verdict row with the fields the judge writes (and the lead's new fields where extra gives them)."""
    accepted = extra.pop("accepted", verdict == "correct")
    sol_ms = 2.0 / speedup if speedup else None
    row = {"verdict": verdict, "accepted": accepted, "reason": extra.pop("reason", "matches the reference"),
           "problem": f"/p/{pid}.py", "problem_id": pid, "backend": extra.pop("backend", "cuda"), "policy": "strict",
           "precision": "fp32", "device": "cuda", "device_name": "NVIDIA H200", "preset": "default",
           "speedup": speedup, "ref_ms": 2.0 if speedup else None, "sol_ms": sol_ms,
           "ref_timing": dict(TIMING, median_ms=2.0) if speedup else None,
           "sol_timing": dict(TIMING, median_ms=sol_ms) if speedup else None,
           "flags": extra.pop("flags", []), "findings": extra.pop("findings", []), "max_error": None,
           "error_excerpt": extra.pop("error_excerpt", ""), "versions": {"torch": "2.11.0", "cuda": "13.0"},
           "problem_sha256": "ab" * 32, "solution_sha256": "", "build_s": 1.5, "wall_s": 4.0,
           "phases_s": {"build": 1.5}, "profile": extra.pop("profile", [])}
    row.update(extra)
    return row


def unjudgeable(pid: str, kind: str = "degenerate_reference", **extra: Any) -> dict[str, Any]:
    """A verdict row for a problem whose reference could not judge (verdict `unjudgeable`)."""
    outcome = {"kind": kind, "reason": f"{kind.replace('_', ' ')} <b>here</b>", "figures": {"ref_rms": 3e-8}}
    return verdict(pid, "unjudgeable", accepted=False, reason=extra.pop("reason", outcome["reason"]),
                   problem_outcome=outcome, **extra)


def numerics(cls: str, err: float = 1e-6) -> dict[str, Any]:
    return {"max_abs_err": err, "max_rel_err": err * 10, "rel_l2": err / 2,
            "frac_over_tol": 0.0 if cls != "wrong" else 0.3, "class": cls, "contract": "tf32"}


def bench_rows() -> list[tuple[dict[str, Any], str | None]]:
    """(row, solution text or None for no_code) of a bench run: 5 problems, 2 levels, 2 samples, 2 turns."""
    ok = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    items = [
        ("level1/1_softmax", 0, 0, verdict("level1/1_softmax", speedup=1.6, numerics=numerics("fp32"),
                                           profile=PROFILE, clock="device", sol_device_ms=1.1, ref_device_ms=1.9,
                                           speedup_device=1.73, contract="tf32",
                                           sandbox={"layers": ["seccomp", "netns"], "missing": ["landlock"]},
                                           shapes=["default", "held_out"]), ok),
        ("level1/1_softmax", 1, 0, verdict("level1/1_softmax", "wrong_output", reason=HOSTILE_REASON,
                                           numerics=numerics("wrong", 0.5)), HOSTILE_SOLUTION),
        ("level1/1_softmax", 1, 1, verdict("level1/1_softmax", speedup=0.7, numerics=numerics("tf32", 1e-3)), ok),
        ("level1/2_relu", 0, 0, verdict("level1/2_relu", "build_error", error_excerpt=HOSTILE_EXCERPT,
                                        reason="the build failed"), ok),
        ("level1/2_relu", 0, 1, verdict("level1/2_relu", speedup=2.4, numerics=numerics("exact", 0.0)), ok),
        ("level1/2_relu", 1, 0, verdict("level1/2_relu", speedup=120.0, accepted=False, flags=["suspicious_speedup"],
                                        numerics=numerics("fp32")), ok),
        ("level2/3_gemm", 0, 0, verdict("level2/3_gemm", "rejected", reason="PyTorch compute in forward",
                                        flags=["policy:torch_compute"], backend="triton",
                                        findings=[{"code": "torch_compute", "line": 5, "blocking": True,
                                                   "message": "torch.matmul <in> forward"}]), ok),
        ("level2/3_gemm", 0, 1, verdict("level2/3_gemm", "no_code", reason="no code in the reply", accepted=False,
                                        backend="triton"), None),
        ("level2/3_gemm", 1, 0, verdict("level2/3_gemm", speedup=1.1, backend="triton"), ok),
        (HOSTILE_PROBLEM, 0, 0, verdict(HOSTILE_PROBLEM, "timeout", reason="ran past 300 s"), ok),
        ("level2/4_norm", 0, 0, verdict("level2/4_norm", "runtime_error", reason="CUDA error: illegal address"), ok),
        ("level2/4_norm", 0, 1, verdict("level2/4_norm", speedup=0.9, numerics=numerics("bf16", 1e-2)), ok),
    ]
    out = []
    for pid, sample, turn, row, text in items:
        stem = pid.split("/")[-1]
        row.update({"sample": sample, "turn": turn, "level": int(pid[5]), "model": "openai:test-model",
                    "item": f"{stem}__s{sample}_t{turn}",
                    "extraction": "ok" if row["verdict"] != "no_code" else "no_code",
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 400}, "cost_usd": None,
                    "finish_reason": "stop", "gen_latency_s": 3.2})
        out.append((row, text))
    return out


def write_bench_run(root: Path) -> Path:
    """A bench run folder with config.json, solutions/, replies/ and verdicts.jsonl."""
    (root / "solutions").mkdir(parents=True)
    (root / "replies").mkdir()
    lines = []
    for row, text in bench_rows():
        item = row["item"].replace("<", "_").replace(">", "_").replace("/", "_")
        row["item"] = item
        if text is None:
            row["solution_file"] = None
            row["reply_file"] = f"replies/{item}.md"
            (root / row["reply_file"]).write_text("I cannot do that. <script>window.__pwned='reply'</script>\n")
        else:
            row["solution_file"] = f"solutions/{item}.py"
            (root / row["solution_file"]).write_text(text)
            row["solution"] = f"/tmp/private-copy/{item}.py"
            row["solution_sha256"] = hashlib.sha256(text.encode()).hexdigest()
        lines.append(json.dumps(row, sort_keys=True))
    (root / "verdicts.jsonl").write_text("\n".join(lines) + "\n")
    (root / "config.json").write_text(json.dumps({"format": "kerneljudge.bench.v1", "model": "openai:test-model",
                                                  "generation": {"samples": 2, "turns": 2}}))
    return root


def write_run_log(path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """A `kerneljudge run` log (no sample or turn), its solutions next to it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sols = path.parent / "sols"
    sols.mkdir(exist_ok=True)
    if rows is None:
        rows = [verdict("level1/1_softmax", speedup=1.2), verdict("level1/2_relu", speedup=3.0),
                verdict("level2/3_gemm", "wrong_output"), verdict("level2/5_conv", speedup=0.5)]
    for i, row in enumerate(rows):
        if "solution" not in row:
            sol = sols / f"{row['problem_id'].split('/')[-1]}__{i}.py"
            sol.write_text(f"# solution {i}\n")
            row["solution"] = str(sol)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return path


def cli(*argv: str) -> int:
    """Run one of the results commands (report, export, compare, import-hf) as the CLI would."""
    import argparse

    from kerneljudge.cli.results import register

    parser = argparse.ArgumentParser(prog="kerneljudge")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args.func(args)
