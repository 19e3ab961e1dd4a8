"""`kerneljudge import-hf PATH --out DIR`: the KernelBench dataset from the Hugging Face hub (a local copy of
its parquet files) as a problem folder that `run`, `bench` and `suite` take.

The dataset (ScalingIntelligence/KernelBench) has one split per level, stored as
data/level_<L>-00000-of-00001.parquet, one row per problem with the columns code, level, name and
problem_id; `name` is the upstream file stem, e.g. "1_Square_matrix_multiplication_". Each row becomes
DIR/level<L>/<problem_id>_<name>.py (the number is not repeated when the name starts with it), which
is where `run` looks for upstream solution files level_<L>_problem_<P>_sample_<S>_kernel.py. A row is
written only when its code parses and defines Model, get_inputs and get_init_inputs (read_problem,
which never executes it); every other row is reported and skipped. Nothing is downloaded here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from kerneljudge.core.extras import MissingExtra, require
from kerneljudge.core.problem import ProblemError, read_problem

COLUMNS = ("code", "level", "name", "problem_id")
MANIFEST = "kernelbench_hf_import.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9_+-]")  # no dots or separators: a name cannot leave its folder


class HFImportError(ValueError):
    """Input that cannot be imported at all (no parquet files, missing columns, files in the way)."""


@dataclass
class Skipped:
    source: str
    row: int
    why: str


@dataclass
class ImportResult:
    written: list[str] = field(default_factory=list)     # problem ids written (or rewritten with --force)
    unchanged: list[str] = field(default_factory=list)   # already there with the same text
    skipped: list[Skipped] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"written": self.written, "unchanged": self.unchanged,
                "skipped": [s.__dict__ for s in self.skipped]}


@dataclass(frozen=True)
class Planned:
    source: str
    row: int
    level: int
    problem_id: int
    rel: str                          # level<L>/<file>.py
    code: str


def parquet_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.parquet") if p.is_file() and ".cache" not in p.parts)
        if files:
            return files
    raise HFImportError(f"{path}: no parquet file (give a .parquet file or a folder holding the dataset's files)")


def read_rows(files: Iterable[Path]) -> list[tuple[str, int, dict[str, Any]]]:
    """(file, row number, row) of every file; HFImportError when a file lacks a column."""
    pq = require("pyarrow.parquet", "report", "kerneljudge import-hf")
    out = []
    for f in files:
        try:
            table = pq.read_table(f)
        except Exception as exc:  # pyarrow raises its own errors for files that are not parquet
            raise HFImportError(f"{f}: not a readable parquet file ({exc})") from None
        missing = [c for c in COLUMNS if c not in table.column_names]
        if missing:
            raise HFImportError(f"{f}: no column {', '.join(missing)} (has {', '.join(table.column_names)}); "
                               "expected the KernelBench dataset's code, level, name, problem_id")
        for i, row in enumerate(table.select(list(COLUMNS)).to_pylist()):
            out.append((str(f), i, row))
    return out


def _whole(x: Any) -> Optional[int]:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, str) and x.strip().isdigit():
        return int(x)
    return None


def file_stem(problem_id: int, name: str) -> str:
    """<problem_id>_<name> with the name made safe for a file name and not numbered twice."""
    stem = name.strip()
    if stem.endswith(".py"):
        stem = stem[:-3]
    stem = _UNSAFE.sub("_", stem) or "problem"
    return stem if stem.startswith(f"{problem_id}_") else f"{problem_id}_{stem}"


def plan(rows: Iterable[tuple[str, int, Mapping[str, Any]]], levels: Optional[set[int]] = None
         ) -> tuple[list[Planned], list[Skipped]]:
    """What each row becomes, or why it is skipped (bad fields, a (level, problem_id) seen before)."""
    planned, skipped, seen = [], [], {}
    for source, i, row in rows:
        level, pid, code, name = (_whole(row.get("level")), _whole(row.get("problem_id")), row.get("code"),
                                  row.get("name"))
        if level is None or level < 1:
            why = f"level {row.get('level')!r} is not a positive whole number"
        elif pid is None or pid < 0:
            why = f"problem_id {row.get('problem_id')!r} is not a whole number"
        elif not isinstance(code, str) or not code.strip():
            why = "no code"
        elif not isinstance(name, str) or not name.strip():
            why = "no name"
        elif levels and level not in levels:
            continue
        elif (level, pid) in seen:
            why = f"level {level} problem {pid} already came from {seen[(level, pid)]}"
        else:
            seen[(level, pid)] = f"{Path(source).name} row {i}"
            planned.append(Planned(source, i, level, pid, f"level{level}/{file_stem(pid, name)}.py", code))
            continue
        skipped.append(Skipped(source, i, why))
    return planned, skipped


def import_hf(path: str | os.PathLike, out: str | os.PathLike, *, force: bool = False,
              levels: Optional[set[int]] = None) -> ImportResult:
    """Convert the dataset at path into out/level<L>/*.py; HFImportError (nothing written) when a file that
    differs is already there and force is False."""
    files = parquet_files(Path(path))
    planned, skipped = plan(read_rows(files), levels)
    root = Path(out)
    clashes = [p.rel for p in planned if (root / p.rel).exists() and (root / p.rel).read_bytes() != p.code.encode()]
    if clashes and not force:
        raise HFImportError(f"{len(clashes)} file(s) in {root} differ from the dataset ({', '.join(clashes[:3])}"
                           f"{' ...' if len(clashes) > 3 else ''}); nothing written; pass --force to overwrite them")
    result = ImportResult(skipped=skipped)
    for p in planned:
        target = root / p.rel
        if target.exists() and target.read_bytes() == p.code.encode():
            result.unchanged.append(p.rel[:-3])
            continue
        _check_and_write(p, target, result)
    _write_manifest(root, files, result)
    return result


def _check_and_write(p: Planned, target: Path, result: ImportResult) -> None:
    """Write through a temporary name in the same folder, validated there (read as text, never run)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.stem}.tmp.py")
    tmp.write_bytes(p.code.encode())
    try:
        read_problem(tmp)
    except ProblemError as exc:
        tmp.unlink()
        result.skipped.append(Skipped(p.source, p.row, str(exc).replace(str(tmp), p.rel)))
        return
    os.replace(tmp, target)
    result.written.append(p.rel[:-3])


def _write_manifest(root: Path, files: list[Path], result: ImportResult) -> None:
    root.mkdir(parents=True, exist_ok=True)
    manifest = {"format": "kerneljudge.results.hf_import.v1", "dataset": "ScalingIntelligence/KernelBench",
                "files": [{"path": str(f.resolve()), "sha256": hashlib.sha256(f.read_bytes()).hexdigest()}
                          for f in files],
                **result.to_dict()}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------- CLI


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "import-hf", help="turn a local copy of the KernelBench dataset (parquet) into a problem folder",
        description="Reads the parquet files of the Hugging Face dataset ScalingIntelligence/KernelBench (download "
                    "them once, e.g. hf download ScalingIntelligence/KernelBench --repo-type dataset --local-dir "
                    "DIR; see docs/results.md) and writes OUT/level<L>/<problem_id>_<name>.py for each row whose "
                    "code defines Model, get_inputs and get_init_inputs. Nothing is downloaded. The folder is "
                    "what run, bench (--problems OUT) and suite take. Needs pip install 'kerneljudge[report]'.")
    p.add_argument("path", metavar="PATH", help="a .parquet file, or a folder searched for them")
    p.add_argument("--out", required=True, metavar="DIR", help="the problem folder to write")
    p.add_argument("--force", action="store_true", help="overwrite problem files that differ from the dataset")
    p.add_argument("--level", type=int, action="append", default=None, help="only this level (repeatable)")
    p.add_argument("--json", action="store_true", help="print what was written and skipped as JSON")
    p.set_defaults(func=cmd_import_hf)


def cmd_import_hf(args: argparse.Namespace) -> int:
    try:
        result = import_hf(args.path, args.out, force=args.force, levels=set(args.level) if args.level else None)
    except (HFImportError, MissingExtra) as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return 3
    for s in result.skipped:
        print(f"skipped {Path(s.source).name} row {s.row}: {s.why}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict(), sort_keys=True))
    print(f"import-hf: {len(result.written)} problem file(s) written, {len(result.unchanged)} unchanged, "
          f"{len(result.skipped)} row(s) skipped -> {args.out}", file=sys.stderr)
    return 0 if result.written or result.unchanged else 3


__all__ = ["import_hf", "plan", "file_stem", "read_rows", "parquet_files", "ImportResult", "register"]
