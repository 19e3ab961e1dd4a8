"""Stage published honest KernelBench solutions, per source, for `kerneljudge run` (issue 32, item 4).

    bash scripts/fetch_upstream.sh /work/.mirror/ScalingIntelligence+KernelBench/repo   # upstream/KernelBench
    python3 lab/stage_honest_corpus.py [--sources a,b] [--mirror NAME=PATH ...] [--out upstream/honest]
        [--backends cuda,triton] [--per-problem N]

Reads each source's git mirror (lab/honest_sources.py: which repositories, commits and licences, and how
each is read) and writes, under the git-ignored OUT (nothing here is committed; the files stay their
authors'):

  OUT/<source>/solutions/level_{L}_problem_{P}_sample_{S}_kernel.py   upstream's run layout, so
                                                                      `kerneljudge run --problems upstream/KernelBench`
                                                                      maps each to its problem (docs/formats.md)
  OUT/<source>/problems -> upstream/KernelBench                       a relative link to the problems judged
  OUT/<source>/manifest.jsonl, OUT/manifest.jsonl                     one row per published file: source, repo,
                                                                      commit, original path, level, problem,
                                                                      sha256 (as the verdict's solution_sha256),
                                                                      staged file or the reason it was skipped
  OUT/SOURCES.json                                                    per source: repo, commit, licence, counts

A published file is skipped, with the reason in the manifest, when it is not honest by construction as far as
can be told cheaply, or cannot be judged as what it claims to be:
  outside_levels        not level 1-3
  no_upstream_problem   no level{L}/{P}_*.py in the problems folder
  source_incorrect      the source's own evaluation found it wrong or not compiling
  source_unverified     the source recorded no evaluation for it
  unparsable, no_modelnew
  not_cuda_or_triton    its kernels are neither load_inline CUDA nor Triton (analysis.detect_backend)
  known_hack            the same code (blank lines and trailing spaces aside) as a published reward hack:
                        lab/stage_trust_check.sh's list (upstream PR #118's hacks, the Sakana AI CUDA Engineer's
                        kernels) and upstream's own adversarial test kernels
  problem_changed       the source's reference Model class differs from upstream's now (KernelBench v0.1
                        replaced or changed some problems: level 1 problem 50 was a product reduction, now a
                        Conv2d), except the changes read and found equivalent (EQUIVALENT_CHANGES)
  duplicate             the same code as a file already staged (sources in the order given)
  over_per_problem      beyond --per-problem for its source and problem
Staged files are the published text with newlines normalised, nothing else changed. Each staged row also
carries `strict_findings`: the codes of the static findings that reject it under --policy strict before it
runs (analysis.analyze; most published kernels leave part of the work to PyTorch, or fall back to it, which
strict refuses by design), so the report can tell the strict policy's verdicts on those from the rest.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

LAB = Path(__file__).resolve().parent
ROOT = LAB.parent
sys.path.insert(0, str(LAB))

from honest_sources import SOURCES, Candidate, Mirror, fingerprint, known_hacks, staged_text  # noqa: E402

KERNELBENCH_MIRROR = Path("/work/.mirror/ScalingIntelligence+KernelBench/repo")
KERNEL_BACKENDS = ("cuda", "triton")

# (level, problem) -> why the difference between the source's reference and upstream's now is no difference
EQUIVALENT_CHANGES = {
    (1, 12): "torch.diag(A) @ B became A.unsqueeze(1) * B: the same product (upstream changelog v0.2)",
    (2, 83): "torch.tensor(min_value) gained device=x.device: the same values",
}


def model_signature(code: str | None) -> str | None:
    """The reference's class Model as an AST dump without docstrings, or None where there is none."""
    if not code:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for inner in ast.walk(node):
                if isinstance(inner, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and _docstring(inner):
                    inner.body = inner.body[1:] or [ast.Pass()]
            return ast.dump(node, annotate_fields=False)
    return None


def _docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", [])
    return bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str)


def defines_modelnew(code: str) -> bool | None:
    """True/False, or None where the file does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)


def upstream_problems(folder: Path) -> dict[tuple[int, int], Path]:
    found = {}
    for level in (1, 2, 3):
        for path in sorted((folder / f"level{level}").glob("*.py")):
            head = path.name.split("_", 1)[0]
            if head.isdigit():
                found[(level, int(head))] = path
    return found


def skip_reason(c: Candidate, problems: dict[tuple[int, int], str | None], hacks: dict[str, str],
                backend: str, backends: tuple[str, ...] = KERNEL_BACKENDS) -> str | None:
    """Why this published file is not staged, or None. `problems` maps (level, problem) to its model signature."""
    if c.level not in (1, 2, 3):
        return "outside_levels"
    if (c.level, c.problem) not in problems:
        return "no_upstream_problem"
    if c.source_correct is False:
        return "source_incorrect"
    if c.source_correct is None:
        return "source_unverified"
    has_modelnew = defines_modelnew(c.code)
    if has_modelnew is None:
        return "unparsable"
    if not has_modelnew:
        return "no_modelnew"
    if backend not in backends:
        return f"not_cuda_or_triton ({backend})"
    known = hacks.get(fingerprint(c.code))
    if known:
        return f"known_hack ({known})"
    theirs = model_signature(c.reference)
    if theirs is not None and theirs != problems[(c.level, c.problem)] and (c.level, c.problem) not in EQUIVALENT_CHANGES:
        return "problem_changed"
    return None


def sha256_text(text: str) -> str:
    """As kerneljudge's verdicts compute solution_sha256 (core.problem.sha256_text)."""
    return hashlib.sha256(text.encode()).hexdigest()


def stage(names: list[str], mirrors: dict[str, Path], problems_dir: Path, out: Path, kernelbench: Path,
          say=print, backends: tuple[str, ...] = KERNEL_BACKENDS, per_problem: int | None = None) -> list[dict[str, Any]]:
    """Stage every named source into out; return the manifest rows (also written to out).

    per_problem: stage at most this many solutions per source and problem (the first in the source's order;
    the rest are skipped as `over_per_problem`), for a smaller device run."""
    from kerneljudge.analysis import analyze, detect_backend  # the judge's own reading of the file

    upstream = upstream_problems(problems_dir)
    if not upstream:
        raise SystemExit(f"stage_honest_corpus: no level1..3 problems in {problems_dir} (run scripts/fetch_upstream.sh)")
    signatures = {key: model_signature(path.read_text()) for key, path in upstream.items()}
    hacks = known_hacks(kernelbench) if Mirror(kernelbench).exists() else {}
    if not hacks:
        say(f"stage_honest_corpus: no known hacks read (no KernelBench mirror at {kernelbench}); none skipped as such")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"problems": str(problems_dir), "problems_commit": _commit_file(problems_dir),
                               "known_hacks": len(hacks), "backends": list(backends), "per_problem": per_problem,
                               "sources": {}}
    seen: dict[str, str] = {}
    for name in names:
        source, reader = SOURCES[name]
        mirror = Mirror(mirrors.get(name, source.default_mirror), source.ref)
        info = {"repo": source.repo, "ref": source.ref, "mirror": str(mirror.path), "licence": source.licence}
        summary["sources"][name] = info
        if not mirror.exists():
            info["absent"] = True
            say(f"{name}: no mirror at {mirror.path} ({source.repo}); skipped")
            continue
        info["commit"] = mirror.commit()
        folder = out / name / "solutions"
        folder.mkdir(parents=True)
        os.symlink(os.path.relpath(problems_dir.resolve(), (out / name).resolve()), out / name / "problems")
        samples: Counter = Counter()
        candidates = sorted(reader(mirror), key=lambda c: (c.level, c.problem, c.original))
        for c in candidates:
            text = staged_text(c.code)
            backend = detect_backend(text)
            reason = skip_reason(c, signatures, hacks, backend, backends)
            key = fingerprint(text)
            if reason is None and key in seen:
                reason = f"duplicate (of {seen[key]})"
            if reason is None and per_problem is not None and samples[(c.level, c.problem)] >= per_problem:
                reason = "over_per_problem"
            row = {"source": name, "repo": source.repo, "commit": info["commit"], "original": c.original,
                   "level": c.level, "problem": c.problem, "sha256": sha256_text(text), "fingerprint": key,
                   "backend": backend, "source_correct": c.source_correct, "meta": c.meta}
            if reason is None:
                sample = samples[(c.level, c.problem)]
                samples[(c.level, c.problem)] += 1
                file = folder / f"level_{c.level}_problem_{c.problem}_sample_{sample}_kernel.py"
                file.write_text(text, encoding="utf-8", newline="")
                row.update(status="staged", file=str(file.relative_to(out)),
                           note=EQUIVALENT_CHANGES.get((c.level, c.problem), ""),
                           strict_findings=sorted({f.code for f in analyze(text, policy="strict") if f.blocking}))
                seen[key] = f"{name}:{file.name}"
            else:
                row.update(status="skipped", reason=reason)
            rows.append(row)
        mine = [r for r in rows if r["source"] == name]
        _write_jsonl(out / name / "manifest.jsonl", mine)
        info["counts"] = counts(mine)
        n = info["counts"]
        say(f"{name}: {n['published']} published, {n['staged']} staged (levels {n['staged_by_level']}; "
            f"{n['strict_clean']} with no blocking strict finding); skipped {n['skipped']}")
    _write_jsonl(out / "manifest.jsonl", rows)
    (out / "SOURCES.json").write_text(json.dumps(summary, indent=2) + "\n")
    return rows


def counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    staged = [r for r in rows if r["status"] == "staged"]
    skipped = Counter(r["reason"].split(" ", 1)[0] for r in rows if r["status"] == "skipped")
    by_level = Counter(f"L{r['level']}" for r in staged)
    return {"published": len(rows), "staged": len(staged), "staged_by_level": dict(sorted(by_level.items())),
            "strict_clean": sum(not r["strict_findings"] for r in staged),
            "problems": len({(r["level"], r["problem"]) for r in staged}), "skipped": dict(skipped.most_common())}


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def _commit_file(problems_dir: Path) -> str:
    marker = problems_dir / "COMMIT"
    return marker.read_text().strip() if marker.exists() else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated, of {', '.join(SOURCES)}")
    parser.add_argument("--mirror", action="append", default=[], metavar="NAME=PATH",
                        help="a source's git mirror (default /work/.mirror/<owner>+<name>/repo)")
    parser.add_argument("--problems", default=str(ROOT / "upstream" / "KernelBench"))
    parser.add_argument("--out", default=str(ROOT / "upstream" / "honest"))
    parser.add_argument("--backends", default=",".join(KERNEL_BACKENDS),
                        help="kernel forms staged, as analysis.detect_backend names them (default cuda,triton)")
    parser.add_argument("--per-problem", type=int, help="at most this many solutions per source and problem")
    parser.add_argument("--kernelbench", default=os.environ.get("KERNELBENCH_MIRROR", str(KERNELBENCH_MIRROR)),
                        help="upstream KernelBench's mirror, for the known reward hacks")
    args = parser.parse_args(argv)
    names = [n for n in args.sources.split(",") if n]
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        parser.error(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(SOURCES)}")
    mirrors = {}
    for item in args.mirror:
        name, _, path = item.partition("=")
        if name not in SOURCES or not path:
            parser.error(f"--mirror {item!r}: give NAME=PATH with NAME one of {', '.join(SOURCES)}")
        mirrors[name] = Path(path)
    rows = stage(names, mirrors, Path(args.problems), Path(args.out), Path(args.kernelbench),
                 backends=tuple(b for b in args.backends.split(",") if b), per_problem=args.per_problem)
    print(f"staged {sum(r['status'] == 'staged' for r in rows)} of {len(rows)} published files in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
