"""Runs as the reporting commands read them: a `bench` run folder or a JSONL verdict log (`run`, `examples`).

Everything read here (verdict rows, solution files, replies) is data written by or about untrusted
solutions: it is never executed, and whoever renders it must escape it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from kerneljudge.generate.runfolder import RunFolder, read_verdicts


class RunError(ValueError):
    """A run that cannot be read (missing, or holding no verdicts)."""


@dataclass
class Run:
    label: str                       # what tables and plots call the run
    source: Path                     # the run folder or the JSONL log
    rows: list[dict[str, Any]]       # verdict rows in log order
    dropped: int = 0                 # repeated (problem, sample, turn) rows ignored
    config: Optional[dict[str, Any]] = None   # config.json of a bench run folder

    @property
    def is_folder(self) -> bool:
        return self.source.is_dir()


def load_run(path: str | os.PathLike, label: str | None = None) -> Run:
    """A run folder or a JSONL log; RunError when it does not exist or holds no verdict."""
    p = Path(path)
    if not p.exists():
        raise RunError(f"{p} does not exist")
    rows, dropped = read_verdicts(p)
    if not rows:
        raise RunError(f"no verdicts in {p}" + (" (expected verdicts.jsonl in the folder)" if p.is_dir() else ""))
    config = RunFolder(p).read_config() if p.is_dir() else None
    return Run(label or default_label(p), p, rows, dropped, config)


def default_label(path: Path) -> str:
    return path.resolve().name if path.is_dir() else path.stem


def load_runs(paths: Sequence[str | os.PathLike], labels: Sequence[str] | None = None) -> list[Run]:
    """Several runs, with labels made unique (a second 'run' becomes 'run#2')."""
    if labels is not None and len(labels) != len(paths):
        raise RunError(f"{len(labels)} label(s) for {len(paths)} run(s)")
    runs = [load_run(p, labels[i] if labels else None) for i, p in enumerate(paths)]
    seen: dict[str, int] = {}
    for run in runs:
        n = seen.get(run.label, 0) + 1
        seen[run.label] = n
        if n > 1:
            run.label = f"{run.label}#{n}"
    return runs


# ---------------------------------------------------------------------------------------- source files


@dataclass(frozen=True)
class SourceText:
    text: Optional[str]              # None when no file could be read
    path: Optional[str]              # the file read (or looked for)
    note: str = ""                   # why there is no text, or that it was cut or changed since judged
    kind: str = "solution"           # "solution", or "reply" for a no_code item (the model's reply)


def solution_path(run: Run, row: Mapping[str, Any]) -> tuple[Optional[Path], str]:
    """Where the row's solution file is, and a note when it cannot be trusted to be the one judged.

    A bench row names its file relative to the run folder (`solution_file`); only paths inside the
    folder are followed. A `run` log names the judged file itself (`solution`), resolved against the
    log's folder when relative.
    """
    rel = row.get("solution_file")
    if run.is_folder and isinstance(rel, str) and rel:
        return _inside(run.source, rel)
    if run.is_folder and "solution_file" in row:
        return None, "no solution was extracted from the reply"
    sol = row.get("solution")
    if isinstance(sol, str) and sol:
        p = Path(sol)
        return (p if p.is_absolute() else run.source.resolve().parent / p), ""
    return None, "the verdict names no solution file"


def _inside(root: Path, rel: str) -> tuple[Optional[Path], str]:
    base = root.resolve()
    p = (base / rel).resolve()
    try:
        p.relative_to(base)
    except ValueError:
        return None, f"{rel!r} points outside the run folder; not read"
    return p, ""


def read_source(run: Run, row: Mapping[str, Any], limit_bytes: int) -> SourceText:
    """The row's solution text (for a no_code bench item: the model's reply), at most limit_bytes."""
    path, note = solution_path(run, row)
    kind = "solution"
    if path is None and run.is_folder and isinstance(row.get("reply_file"), str):
        reply, _ = _inside(run.source, row["reply_file"])
        if reply is not None:
            path, kind = reply, "reply"
    if path is None:
        return SourceText(None, None, note)
    try:
        if not path.is_file():
            return SourceText(None, str(path), "the file is no longer there", kind)
        with path.open("rb") as f:
            data = f.read(limit_bytes + 1)
    except OSError as exc:
        return SourceText(None, str(path), f"cannot read it: {exc.strerror or exc}", kind)
    text = data[:limit_bytes].decode("utf-8", errors="replace")
    notes = []
    if len(data) > limit_bytes:
        notes.append(f"cut at {limit_bytes // 1024} KiB")
    elif kind == "solution" and row.get("solution_sha256") and _sha256_as_judged(text) != row["solution_sha256"]:
        notes.append("the file changed since it was judged (its sha256 differs from the verdict's)")
    return SourceText(text, str(path), "; ".join(notes), kind)


def _sha256_as_judged(text: str) -> str:
    """The judge hashes the file as read in text mode (universal newlines)."""
    return hashlib.sha256(text.replace("\r\n", "\n").replace("\r", "\n").encode()).hexdigest()
