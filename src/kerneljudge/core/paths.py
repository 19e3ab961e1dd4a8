"""Where the package data lives: the bundled problems, the examples, the prompt templates and the measured
tables (all under kerneljudge/data/, shipped as package data; code never lives there)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path


def data_root() -> Path:
    """kerneljudge/data/ of the installed package."""
    return Path(str(resources.files("kerneljudge") / "data"))


def problems_root() -> Path:
    """The bundled suite: level1/ .. level4/ problem files."""
    return data_root() / "problems"


def examples_root() -> Path:
    """The bundled examples: problems/ and solutions/ (`kerneljudge examples`)."""
    return data_root() / "examples"


def prompts_root() -> Path:
    """Prompt templates (*.md) and the worked examples of each backend (examples/<backend>/)."""
    return data_root() / "prompts"


def suite_tables_root() -> Path:
    """Measured tables of the suite: H200 baselines, device ceilings, speed-of-light counts."""
    return data_root() / "suite"


def default_cache_dir() -> str:
    """The trusted cache (builds, counts, floors): $KERNELJUDGE_CACHE, else $XDG_CACHE_HOME/kerneljudge."""
    env = os.environ.get("KERNELJUDGE_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kerneljudge")
