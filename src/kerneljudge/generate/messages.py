"""The chat messages that ask a model for a kernel: first prompts (zero-, one- or few-shot) and refinements.

    build_messages(problem_text, backend, shots=0, hardware=None, precision="fp32") -> [system, user]
    build_refinement_messages(problem_text, backend, previous_solution, feedback, hardware=None) -> [system, user]

Messages are plain dicts ({"role": "system" | "user", "content": str}), ready for any chat API. The problem
is shown as scrub.problem_source_for_prompt() leaves it; the feedback comes from feedback.feedback_from_verdict().
"""

from __future__ import annotations

from typing import Any, Mapping

from kerneljudge.generate.feedback import finite, render_feedback
from kerneljudge.generate.hardware import render_hardware
from kerneljudge.generate.scrub import problem_source_for_prompt
from kerneljudge.generate.templates import SHOT_EXAMPLES, check_backend, fenced, render, shot_examples, template

BACKEND_NAMES = {"cuda": "CUDA", "triton": "Triton", "cpp": "C++ (CPU)", "cupy": "CuPy", "cuda_core": "cuda.core",
                 "numba": "Numba CUDA", "helion": "Helion", "cute": "CuTe DSL",
                 "tilelang": "TileLang"}   # as the intro names them
PRECISION_NAMES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def _shot_count(shots: int | str) -> int:
    if shots in (0, "0", "zero"):
        return 0
    if shots in (1, "1", "one"):
        return 1
    if shots == "few":
        return len(SHOT_EXAMPLES)
    if isinstance(shots, int) and not isinstance(shots, bool) and 2 <= shots <= len(SHOT_EXAMPLES):
        return shots
    raise ValueError(f"shots must be 0, 1, 'few' or 2..{len(SHOT_EXAMPLES)}; got {shots!r}")


def _common(problem_text: str, backend: str, hardware: Mapping[str, Any] | None, precision: str) -> dict[str, str]:
    check_backend(backend)
    if precision not in PRECISION_NAMES:
        raise ValueError(f"precision must be one of {', '.join(PRECISION_NAMES)}; got {precision!r}")
    return {
        "intro": render("intro.md", backend_name=BACKEND_NAMES[backend]),
        "rules": render("rules.md", dtype_name=PRECISION_NAMES[precision]),
        "backend_instructions": template(f"backend_{backend}.md"),
        "hardware": f"\n{render_hardware(hardware)}\n" if hardware else "",
        "problem": fenced(problem_source_for_prompt(problem_text)),
        "answer_format": template("answer_format.md"),
    }


def _examples(backend: str, count: int) -> str:
    pairs = shot_examples(backend)[:count]
    return "\n\n".join(render("example.md", number=i, problem=fenced(p), solution=fenced(s))
                       for i, (p, s) in enumerate(pairs, 1))


def build_messages(problem_text: str, backend: str, shots: int | str = 0,
                   hardware: Mapping[str, Any] | None = None, *, precision: str = "fp32") -> list[dict[str, str]]:
    """[system, user] messages asking for a `backend` solution of the problem (its source text).

    shots: 0 / "zero", 1 / "one" (the first example), "few" (all examples) or a count 2..3.
    hardware: a dict from hardware_from_spec(), or None for no hardware block.
    precision: the run precision the judge uses (fp32, fp16, bf16), named in the rules.
    """
    n = _shot_count(shots)
    values = _common(problem_text, backend, hardware, precision)
    if n == 0:
        user = render("user_zero_shot.md", **values)
    elif n == 1:
        user = render("user_one_shot.md", examples=_examples(backend, 1), **values)
    else:
        user = render("user_few_shot.md", examples=_examples(backend, n), count=n, **values)
    return [{"role": "system", "content": template("system.md")}, {"role": "user", "content": user}]


def build_refinement_messages(problem_text: str, backend: str, previous_solution: str,
                              feedback: Mapping[str, Any], hardware: Mapping[str, Any] | None = None, *,
                              shots: int | str = 0, precision: str = "fp32") -> list[dict[str, str]]:
    """[system, user] messages that carry the previous solution and the judge's feedback on it.

    feedback: a dict from feedback_from_verdict() (render_feedback() turns it into the report text).
    shots: as in build_messages; examples are inserted before the program when asked for.
    """
    n = _shot_count(shots)
    values = _common(problem_text, backend, hardware, precision)
    if n:
        label = "Here is an example" if n == 1 else f"Here are {n} examples"
        values["hardware"] += (f"\n{label} of programs and solutions of the required form:\n\n"
                               f"{_examples(backend, n)}\n")
    user = render("refine.md", previous_solution=fenced(previous_solution or "# (no code was extracted)"),
                  feedback=render_feedback(feedback), goal=_goal(feedback), **values)
    return [{"role": "system", "content": template("system.md")}, {"role": "user", "content": user}]


def _goal(feedback: Mapping[str, Any]) -> str:
    if feedback.get("verdict") == "unjudgeable":     # bench stops before such a prompt; said honestly if built
        return template("goal_unjudgeable.md")
    if feedback.get("verdict") != "correct":
        return template("goal_fix.md")
    if feedback.get("accepted"):
        speedup = feedback.get("speedup")
        speed = f"{speedup:.2f}x the speed of the PyTorch reference" if finite(speedup) else "it was not timed"
        return render("goal_faster.md", speed=speed)
    return template("goal_flags.md")
