"""The bundled problem suite: where it lives and which problems it holds (read as text, never executed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TextIO

from kerneljudge.core.paths import problems_root
from kerneljudge.core.problem import Problem, read_problem

HF_LEVEL = 4   # level 4 wraps Hugging Face models and needs the optional transformers package


def suite_root() -> Path:
    """The folder holding level1/ .. level4/ (package data, kerneljudge/data/problems)."""
    return problems_root()


def transformers_available() -> bool:
    """Is the optional transformers package installed? (Looked up, not imported: importing is slow.)"""
    try:
        return importlib.util.find_spec("transformers") is not None
    except (ImportError, ValueError):
        return False


def levels() -> list[int]:
    root = suite_root()
    found = []
    for d in root.iterdir():
        if d.is_dir() and d.name.startswith("level") and d.name[5:].isdigit():
            found.append(int(d.name[5:]))
    return sorted(found)


def problem_files(level: int | None = None) -> list[Path]:
    """Problem files of one level (or all), ordered by level then problem number."""
    root = suite_root()
    chosen = [level] if level is not None else levels()
    files: list[Path] = []
    for lv in chosen:
        folder = root / f"level{lv}"
        if folder.is_dir():
            files.extend(p for p in folder.glob("*.py") if p.name != "__init__.py" and not p.name.startswith("_"))
    return sorted(files, key=_order)


def _order(p: Path) -> tuple[int, int, str]:
    level = int(p.parent.name[5:]) if p.parent.name[5:].isdigit() else 0
    head = p.stem.split("_", 1)[0]
    return level, int(head) if head.isdigit() else 1 << 30, p.stem


def list_problems(level: int | None = None, messages: TextIO | None = sys.stderr) -> list[Problem]:
    """The bundled problems (of one level, or all), read without executing them.

    Level 4 needs transformers: without it those problems are skipped and a message says so (on
    `messages`, stderr by default; None for silence).
    """
    files = problem_files(level)
    if not transformers_available():
        hf = [p for p in files if _order(p)[0] == HF_LEVEL]
        if hf:
            files = [p for p in files if _order(p)[0] != HF_LEVEL]
            if messages is not None:
                print(f"kerneljudge: skipping level {HF_LEVEL} ({len(hf)} problems): it needs the optional "
                      "transformers package (pip install 'kerneljudge[hf]')", file=messages, flush=True)
    return [read_problem(p) for p in files]
