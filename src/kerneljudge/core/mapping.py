"""Which problem a solution file belongs to (documented in docs/formats.md)."""

from __future__ import annotations

import re
from pathlib import Path

from kerneljudge.core.problem import Problem, ProblemError, read_problem

UPSTREAM_SAMPLE = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel$")


def find_problems(root: str | Path) -> list[Problem]:
    """Every problem file in a folder: directly inside it and in its level* subfolders (upstream layout)."""
    base = Path(root)
    if not base.is_dir():
        raise ProblemError(f"problems folder {base} does not exist")
    files = sorted(base.glob("*.py")) + sorted(base.glob("level*/*.py"))
    problems = []
    for f in files:
        if f.name.startswith("_"):
            continue
        try:
            problems.append(read_problem(f))
        except ProblemError:
            continue  # not a problem file (a helper module, say)
    return problems


def match_solution(solution: Path, problems: list[Problem]) -> Problem | None:
    stem = solution.stem
    upstream = UPSTREAM_SAMPLE.match(stem)
    if upstream:
        level, number = int(upstream.group(1)), int(upstream.group(2))
        candidates = [p for p in problems if p.number == number and p.level in (level, 0)]
        candidates.sort(key=lambda p: p.level != level)  # prefer an exact level match
        return candidates[0] if candidates else None
    # the problem's own stem, or the longest one followed by "__" and a tag: upstream names hold "__" themselves
    # ("50_conv_standard_2D__square_input__square_kernel") and may end in "_"
    by_stem = {Path(p.path).stem: p for p in problems}
    if stem in by_stem:
        return by_stem[stem]
    tagged = [s for s in by_stem if stem.startswith(s + "__")]
    return by_stem[max(tagged, key=len)] if tagged else None


def pair_solutions(solutions_dir: str | Path, problems: list[Problem]) -> tuple[list[tuple[Problem, Path]], list[Path]]:
    """(problem, solution) pairs in a stable order, and the solution files that matched no problem."""
    folder = Path(solutions_dir)
    if not folder.is_dir():
        raise ProblemError(f"solutions folder {folder} does not exist")
    pairs, unmatched = [], []
    for sol in sorted(folder.glob("*.py")):
        problem = match_solution(sol, problems)
        if problem is None:
            unmatched.append(sol)
        else:
            pairs.append((problem, sol))
    return pairs, unmatched
