"""Acceptance of the staged honest corpus per source, from `kerneljudge run` logs (issue 32, item 4).

    python3 lab/honest_corpus_report.py RUN.jsonl [RUN.jsonl ...] --manifest upstream/honest/manifest.jsonl
        [--policy strict] [--device cuda] [--json] [--bar 0.98]

Each staged solution of the manifest (lab/stage_honest_corpus.py) is matched to its verdict by sha256 (the
verdict's solution_sha256), else by its path under <source>/solutions/. Per source and policy: solutions
staged, judged, unjudgeable (the problem cannot judge: left out, as every score does), judgeable, accepted and
the share of judgeable accepted, against the bar (honest published kernels: >= 98% of the judgeable
accepted); the same for the strict-clean ones (the manifest's strict_findings empty: nothing the strict
policy refuses statically, such as PyTorch compute or a fallback to it). Every judgeable solution not
accepted is listed under its cause:

  shape_specialized, suspicious_speedup, ...   correct, but a blocking flag stops acceptance (the first one)
  rejected:library_compute, rejected:policy:<finding>   rejected, by the flag or static finding that decided it
  wrong_output, runtime_error, build_error, timeout
  missing                                      staged, but no verdict in the logs given (not judged yet)

A solution with verdicts under several policies is counted once per policy; under one policy the last verdict
in the logs counts (a resumed run appends).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

from kerneljudge.core.jsonl import read_objects
from kerneljudge.core.types import BLOCKING_FLAGS, NOTE_FLAGS

BAR = 0.98
# the order a correct verdict's blocking flags are named in when it has several: the most telling first
FLAG_ORDER = ("shape_specialized", "suspicious_speedup", "below_speed_of_light", "timed_output_mismatch",
              "timing_inconsistent", "thread_alive", "timer_tampered", "global_flags_changed", "judge_error")


def cause(verdict: dict[str, Any]) -> str | None:
    """Why a verdict does not count as accepted (None when it does; 'unjudgeable:<kind>' for the problem's own)."""
    if verdict.get("accepted"):
        return None
    kind = verdict.get("verdict", "")
    flags = [f for f in verdict.get("flags") or () if f not in NOTE_FLAGS]
    if kind == "unjudgeable":
        return f"unjudgeable:{(verdict.get('problem_outcome') or {}).get('kind', '?')}"
    if kind == "correct":
        blocking = [f for f in FLAG_ORDER if f in flags] + sorted(f for f in flags if f in BLOCKING_FLAGS
                                                                    and f not in FLAG_ORDER)
        return blocking[0] if blocking else "correct_not_accepted"
    if kind == "rejected":
        if flags:
            return f"rejected:{flags[0]}"
        codes = [f.get("code") for f in verdict.get("findings") or () if f.get("blocking")]
        return f"rejected:{codes[0]}" if codes else "rejected"
    return kind or "no_verdict"


def staged_rows(manifest: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in manifest if row.get("status") == "staged"]


def match(rows: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(staged file, policy) -> the last verdict for it under that policy."""
    by_sha = {row["sha256"]: row["file"] for row in rows}
    by_tail = {row["file"]: row["file"] for row in rows}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for v in verdicts:
        if "verdict" not in v:
            continue
        file = by_sha.get(v.get("solution_sha256", ""))
        if file is None:
            parts = Path(v.get("solution", "")).parts
            file = by_tail.get("/".join(parts[-3:])) if len(parts) >= 3 else None
        if file is not None:
            found[(file, v.get("policy", "?"))] = v
    return found


def summarise(rows: list[dict[str, Any]], matched: dict[tuple[str, str], dict[str, Any]],
              policy: str) -> dict[str, dict[str, Any]]:
    """Per source: the counts and the not-accepted solutions grouped by cause, under one policy."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        s = out.setdefault(row["source"], {"staged": 0, "judged": 0, "unjudgeable": Counter(), "judgeable": 0,
                                           "accepted": 0, "judgeable_clean": 0, "accepted_clean": 0,
                                           "causes": defaultdict(list)})
        clean = row.get("strict_findings") == []
        s["staged"] += 1
        v = matched.get((row["file"], policy))
        if v is None:
            s["causes"]["missing"].append(_entry(row, None))
            continue
        s["judged"] += 1
        why = cause(v)
        if why and why.startswith("unjudgeable:"):
            s["unjudgeable"][why.split(":", 1)[1]] += 1
            continue
        s["judgeable"] += 1
        s["judgeable_clean"] += clean
        if why is None:
            s["accepted"] += 1
            s["accepted_clean"] += clean
        else:
            s["causes"][why].append(_entry(row, v))
    for s in out.values():
        s["accepted_share"] = s["accepted"] / s["judgeable"] if s["judgeable"] else None
        s["accepted_clean_share"] = s["accepted_clean"] / s["judgeable_clean"] if s["judgeable_clean"] else None
        s["unjudgeable"] = dict(s["unjudgeable"])
        s["causes"] = {k: s["causes"][k] for k in sorted(s["causes"], key=lambda k: (-len(s["causes"][k]), k))}
    return out


def _entry(row: dict[str, Any], v: dict[str, Any] | None) -> dict[str, Any]:
    entry = {"file": row["file"], "level": row["level"], "problem": row["problem"], "original": row["original"]}
    if v is not None:
        entry.update(verdict=v.get("verdict"), flags=list(v.get("flags") or ()),
                     reason=" ".join(str(v.get("reason", "")).split())[:200])
    return entry


def total(summary: dict[str, dict[str, Any]]) -> dict[str, Any]:
    t = {k: sum(s[k] for s in summary.values())
         for k in ("staged", "judged", "judgeable", "accepted", "judgeable_clean", "accepted_clean")}
    t["accepted_share"] = t["accepted"] / t["judgeable"] if t["judgeable"] else None
    t["accepted_clean_share"] = t["accepted_clean"] / t["judgeable_clean"] if t["judgeable_clean"] else None
    return t


def render(summaries: dict[str, dict[str, dict[str, Any]]], bar: float = BAR) -> str:
    lines = []
    for policy, summary in summaries.items():
        t = total(summary)
        lines += [f"## policy {policy}", "",
                  "| source | staged | judged | unjudgeable | judgeable | accepted | accepted of judgeable "
                  "| judgeable, strict-clean | accepted of those |", "|---|---|---|---|---|---|---|---|---|"]
        for name, s in [*summary.items(), ("all", dict(t, unjudgeable={"": t["judged"] - t["judgeable"]}))]:
            unj = sum(s["unjudgeable"].values())
            lines.append(f"| {name} | {s['staged']} | {s['judged']} | {unj} | {s['judgeable']} | {s['accepted']} | "
                         f"{_share(s['accepted_share'])} | {s['judgeable_clean']} | "
                         f"{_share(s['accepted_clean_share'])} |")
        met = t["accepted_share"] is not None and t["accepted_share"] >= bar
        lines += ["", f"Bar: {bar:.0%} of the judgeable accepted: {'met' if met else 'not met'}"
                  + ("" if t["judged"] == t["staged"] else f" ({t['staged'] - t['judged']} staged not judged yet)"),
                  "(strict-clean: no static finding that --policy strict blocks, as staged; under strict the others "
                  "are rejected by design)", ""]
        for name, s in summary.items():
            if not s["causes"]:
                continue
            lines += [f"### {name}: not accepted, by cause", ""]
            for why, entries in s["causes"].items():
                lines.append(f"- **{why}**: {len(entries)}")
                if why == "missing":
                    continue
                for e in entries:
                    flags = ",".join(e.get("flags") or ()) or "-"
                    lines.append(f"  - L{e['level']}/{e['problem']} `{Path(e['file']).name}` ({e['original']}): "
                                 f"{e.get('verdict')} [{flags}] {e.get('reason', '')}")
            lines.append("")
    return "\n".join(lines)


def _share(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", help="kerneljudge run logs (JSONL)")
    parser.add_argument("--manifest", required=True, help="upstream/honest/manifest.jsonl (or a source's own)")
    parser.add_argument("--policy", help="only verdicts judged under this policy")
    parser.add_argument("--device", help="only verdicts judged on this device (cuda, cpu)")
    parser.add_argument("--bar", type=float, default=BAR)
    parser.add_argument("--json", action="store_true", help="the summary as one JSON object")
    args = parser.parse_args(argv)
    rows = staged_rows(read_objects(args.manifest))
    if not rows:
        print(f"honest_corpus_report: no staged solutions in {args.manifest}", file=sys.stderr)
        return 3
    verdicts = [v for log in args.logs for v in read_objects(log) if not args.device or v.get("device") == args.device]
    matched = match(rows, verdicts)
    policies = sorted({p for _, p in matched}) or ["strict"]
    if args.policy:
        policies = [args.policy]
    summaries = {p: summarise(rows, matched, p) for p in policies}
    if args.json:
        print(json.dumps({p: {"sources": s, "all": total(s)} for p, s in summaries.items()}, indent=1))
    else:
        print(render(summaries, args.bar))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
