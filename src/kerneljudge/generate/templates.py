"""The prompt template files and worked shot examples in prompts/ (package data): loading, filling, fencing code.

    template(name) -> str                              one template's text
    render(name, **values) -> str                      a template with its `$name` placeholders filled
    shot_examples(backend) -> [(problem, solution)]    the worked examples for a backend
    fenced(code, lang="python") -> str                 a Markdown code block that survives backticks in the code

Templates use `string.Template` placeholders (`$name`); every template is listed in TEMPLATES. The shot
examples are our own problem/solution pairs: prompts/examples/problems/ and one folder per backend
(prompts/examples/<backend>/, for every name in BACKENDS). Each backend has its instructions in
backend_<backend>.md (BACKEND_TEMPLATES).
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Any

from kerneljudge.core.paths import prompts_root
from kerneljudge.core.types import BACKENDS

SHOT_EXAMPLES = ("1_swish_residual", "2_rms_norm", "3_mean_pool_tanh")   # one-shot uses the first
BACKEND_TEMPLATES = tuple(f"backend_{b}.md" for b in BACKENDS)   # one instructions file per backend
TEMPLATES = (
    "system.md", "intro.md", "rules.md", *BACKEND_TEMPLATES,
    "hardware.md", "answer_format.md", "user_zero_shot.md", "user_one_shot.md", "user_few_shot.md",
    "example.md", "refine.md", "goal_fix.md", "goal_faster.md", "goal_flags.md", "goal_unjudgeable.md",
)


@lru_cache(maxsize=None)
def template(name: str) -> str:
    """The text of one template file (trailing whitespace removed)."""
    return (prompts_root() / name).read_text(encoding="utf-8").rstrip()


def render(name: str, **values: Any) -> str:
    """Fill a template; a missing placeholder raises KeyError."""
    return string.Template(template(name)).substitute({k: str(v) for k, v in values.items()})


def check_backend(backend: str) -> None:
    """Raise ValueError unless `backend` is one of BACKENDS."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")


@lru_cache(maxsize=None)
def _example_file(folder: str, stem: str) -> str:
    return (prompts_root() / "examples" / folder / f"{stem}.py").read_text(encoding="utf-8")


def shot_examples(backend: str) -> list[tuple[str, str]]:
    """(problem source, solution source) pairs for a backend, in SHOT_EXAMPLES order."""
    check_backend(backend)
    return [(_example_file("problems", s), _example_file(backend, s)) for s in SHOT_EXAMPLES]


def fenced(code: str, lang: str = "python") -> str:
    """A Markdown code block whose fence is longer than any backtick run inside the code."""
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{code.rstrip()}\n{fence}"
