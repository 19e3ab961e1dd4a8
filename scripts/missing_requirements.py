"""Which of kerneljudge's requirements this Python lacks (scripts/setup.sh asks before it installs).

    python scripts/missing_requirements.py [EXTRA ...]     # e.g. test triton

Prints one line per requirement of pyproject.toml's `dependencies` and of the named extras that no installed
distribution satisfies (absent, or a version outside its specifier), and nothing when all are met. When every
one is met, setup.sh installs kerneljudge with `--no-deps`, so a machine without a package index (a GPU image
with torch and the rest preinstalled) still gets its editable install.

Runs with the interpreter being set up, which may be as old as Python 3.10 (no tomllib): it reads the TOML and
the specifiers with the copies pip carries when the standard library lacks them. Exit 0 when it could tell,
3 when it could not (pyproject.toml unreadable, an unknown extra): setup.sh then installs as if something
were missing.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _toml_loads(text: str) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ImportError:
        try:
            import tomli as tomllib
        except ImportError:
            from pip._vendor import tomli as tomllib
    return tomllib.loads(text)


def _requirement_class():
    try:
        from packaging.requirements import Requirement
    except ImportError:
        from pip._vendor.packaging.requirements import Requirement
    return Requirement


def requirements(project: dict, extras: list[str]) -> list[str]:
    """The base dependencies and those of each named extra, in order, without repeats."""
    wanted = list(project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    unknown = [e for e in extras if e not in optional]
    if unknown:
        raise KeyError(f"pyproject.toml has no extra {', '.join(unknown)}")
    for extra in extras:
        wanted += optional[extra]
    return list(dict.fromkeys(wanted))


def unmet(specs: list[str]) -> list[str]:
    """The requirement strings that no installed distribution satisfies (markers that do not apply are met)."""
    Requirement = _requirement_class()
    missing = []
    for spec in specs:
        req = Requirement(spec)
        if req.marker is not None and not req.marker.evaluate():
            continue
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(spec)
            continue
        # a local build tag (2.11.0+cu130) still satisfies >=2.1
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            missing.append(spec)
    return missing


def main(argv: list[str]) -> int:
    try:
        project = _toml_loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
        specs = requirements(project, argv)
    except (OSError, KeyError, ValueError, ImportError) as exc:
        print(f"missing_requirements: {PYPROJECT}: {exc}", file=sys.stderr)
        return 3
    for spec in unmet(specs):
        print(spec)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
