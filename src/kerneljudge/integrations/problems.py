"""Which problems an RL environment draws from: a named set, a folder, or a list of ids and files.

    resolve_problems("examples")            # the 4 bundled example problems
    resolve_problems("suite") / ("level1")  # the bundled suite, or one level of it
    resolve_problems("path/to/folder")      # every problem file in a folder (KernelBench layout too)
    resolve_problems(["level1/21_relu", "my_problem.py"])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from kerneljudge.core.mapping import find_problems
from kerneljudge.core.paths import examples_root
from kerneljudge.service.intake import suite_problem


@dataclass(frozen=True)
class ProblemRef:
    id: str       # what the judge is asked about: a suite id, or the path of a problem file on this machine
    name: str     # a short label for logs (the file stem)
    text: str     # the problem file's source, shown (scrubbed) in the prompt


def resolve_problems(problems: str | Sequence[str]) -> list[ProblemRef]:
    """The problems named by `problems` (module docstring), in a stable order; raises ValueError when empty."""
    names = [problems] if isinstance(problems, (str, Path)) else list(problems)
    found: list[ProblemRef] = []
    for name in names:
        found.extend(_one(str(name)))
    if not found:
        raise ValueError(f"no problems found for {problems!r}")
    return found


def _one(name: str) -> list[ProblemRef]:
    if name == "examples":
        return _folder(examples_root() / "problems")
    if name == "suite" or (name.startswith("level") and name[5:].isdigit()):
        from kerneljudge.suite.catalog import problem_files

        level = None if name == "suite" else int(name[5:])
        return [ProblemRef(f"{p.parent.name}/{p.stem}", p.stem, p.read_text()) for p in problem_files(level)]
    path = suite_problem(name)
    if path is not None:
        return [ProblemRef(name, path.stem, path.read_text())]
    local = Path(name)
    if local.is_dir():
        return _folder(local)
    if local.is_file():
        return [ProblemRef(str(local.resolve()), local.stem, local.read_text())]
    raise ValueError(f"{name!r} is not a problem set (examples, suite, levelN), a suite id, a folder or a file")


def _folder(folder: Path) -> list[ProblemRef]:
    # problem files travel by path: the judge reads them here, or sends their text to a service
    return [ProblemRef(str(Path(p.path).resolve()), Path(p.path).stem, Path(p.path).read_text())
            for p in find_problems(folder)]
