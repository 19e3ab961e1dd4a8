"""Prompts for kernel generation, built from the template files in prompts/ (package data).

    problem_source_for_prompt(text) -> str            the problem file as a model may see it
    build_messages(problem_text, backend, shots=0, hardware=None, precision="fp32") -> [system, user]
    feedback_from_verdict(verdict, profile=None, hidden_shapes=None) -> dict
    feedback_no_code(note) -> dict                    the same shape, for a reply without usable code
    build_refinement_messages(problem_text, backend, previous_solution, feedback, hardware=None) -> [system, user]
    hardware_from_spec(spec, sm_count=..., l2_bytes=...) -> dict      the optional hardware block's data

Messages are plain dicts ({"role": "system" | "user", "content": str}), ready for any chat API.

Templates use `string.Template` placeholders (`$name`); every template is listed in TEMPLATES. The shot
examples are our own problem/solution pairs in prompts/examples/{problems,cuda,triton,cpp}/.

Secrets. A model never sees the kerneljudge metadata of a problem (CATEGORY, TAGS, SMALL, HELD_OUT,
HELD_OUT_SMALL, TOLERANCE: removed from the source), nor, in feedback, a seed or a held-out shape: the
judge's "wrong at a held-out shape (k=v, ...)" reason is rewritten to "wrong at a shape not shown to you"
and the indices/shapes that follow it are hidden; with `hidden_shapes` (see held_out_shapes()) every
shape list or size from a held-out preset is also hidden in the reason and the error excerpt.
"""

from __future__ import annotations

import ast
import math
import re
import string
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Sequence

from kerneljudge.core import pyast
from kerneljudge.core.paths import prompts_root
from kerneljudge.core.problem import METADATA_NAMES, ProblemError

BACKENDS = ("cuda", "triton", "cpp")
BACKEND_NAMES = {"cuda": "CUDA", "triton": "Triton", "cpp": "C++ (CPU)"}
PRECISION_NAMES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
SHOT_EXAMPLES = ("1_swish_residual", "2_rms_norm", "3_mean_pool_tanh")   # one-shot uses the first
TEMPLATES = (
    "system.md", "intro.md", "rules.md", "backend_cuda.md", "backend_triton.md", "backend_cpp.md",
    "hardware.md", "answer_format.md", "user_zero_shot.md", "user_one_shot.md", "user_few_shot.md",
    "example.md", "refine.md", "goal_fix.md", "goal_faster.md", "goal_flags.md", "goal_unjudgeable.md",
)

# Facts the GpuSpec of suite/sol.py does not carry, from NVIDIA's published H100/H200 (GH100) figures:
# 132 SMs on the SXM part, 50 MiB of L2, compute capability 9.0, up to 228 KiB shared memory per SM.
H200_EXTRA: dict[str, Any] = {
    "sm_count": 132,
    "l2_bytes": 50 * 1024 ** 2,
    "compute_capability": "9.0",
    "shared_memory_per_sm_bytes": 228 * 1024,
}

# Order and labels of the hardware block; other keys are listed after these as "key: value".
_HARDWARE_FIELDS = (
    ("name", "GPU"),
    ("compute_capability", "Compute capability"),
    ("sm_count", "Streaming multiprocessors (SMs)"),
    ("memory_bandwidth", "Memory bandwidth"),
    ("fp32_flops", "Peak FP32 (CUDA cores)"),
    ("tf32_flops", "Peak TF32 (tensor cores)"),
    ("bf16_flops", "Peak BF16 (tensor cores)"),
    ("fp16_flops", "Peak FP16 (tensor cores)"),
    ("l2_bytes", "L2 cache"),
    ("shared_memory_per_sm_bytes", "Shared memory per SM"),
    ("memory_bytes", "Device memory"),
)


# ---------------------------------------------------------------------------------------------------
# templates and examples


@lru_cache(maxsize=None)
def template(name: str) -> str:
    """The text of one template file (trailing whitespace removed)."""
    return (prompts_root() / name).read_text(encoding="utf-8").rstrip()


def render(name: str, **values: Any) -> str:
    """Fill a template; a missing placeholder raises KeyError."""
    return string.Template(template(name)).substitute({k: str(v) for k, v in values.items()})


@lru_cache(maxsize=None)
def _example_file(folder: str, stem: str) -> str:
    return (prompts_root() / "examples" / folder / f"{stem}.py").read_text(encoding="utf-8")


def shot_examples(backend: str) -> list[tuple[str, str]]:
    """(problem source, solution source) pairs for a backend, in SHOT_EXAMPLES order."""
    _check_backend(backend)
    return [(_example_file("problems", s), _example_file(backend, s)) for s in SHOT_EXAMPLES]


def fenced(code: str, lang: str = "python") -> str:
    """A Markdown code block whose fence is longer than any backtick run inside the code."""
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{code.rstrip()}\n{fence}"


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")


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


# ---------------------------------------------------------------------------------------------------
# the problem as a model sees it


def _metadata_target(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    else:
        return False
    names: list[str] = []
    for t in targets:
        for sub in ast.walk(t):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
    return any(n in METADATA_NAMES for n in names)


def _byte_prefix(line: str, col: int) -> str:
    return line.encode("utf-8")[:col].decode("utf-8", errors="ignore")


def _byte_suffix(line: str, col: int) -> str:
    return line.encode("utf-8")[col:].decode("utf-8", errors="ignore")


def problem_source_for_prompt(text: str) -> str:
    """The problem file without its kerneljudge metadata; everything else is kept byte for byte.

    Removed: every module-level assignment (also annotated or augmented) to CATEGORY, TAGS, SMALL,
    HELD_OUT, HELD_OUT_SMALL or TOLERANCE, found by its AST line/column range, together with a comment
    on its own last line and the block of full-line comments directly above it (no blank line between:
    such comments describe the metadata). Blank lines that the removal leaves at the end of the file are
    dropped. Raises ProblemError when the text is not valid Python.
    """
    try:
        tree = pyast.parse(text)
    except SyntaxError as exc:
        raise ProblemError(f"the problem is not valid Python: {exc.msg} (line {exc.lineno})") from None
    nodes = [n for n in tree.body if _metadata_target(n)]
    if not nodes:
        return text
    lines = text.splitlines(keepends=True)
    trailing_blank = _trailing_blank(lines)
    for node in reversed(nodes):   # bottom-up, so earlier line numbers stay valid
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        before = _byte_prefix(lines[first], node.col_offset)
        after = _byte_suffix(lines[last], node.end_col_offset or 0)
        ending = after[len(after.rstrip("\r\n")):]
        b = before.rstrip()
        if b.endswith(";"):
            b = b[:-1].rstrip()
        a = after.rstrip("\r\n")
        if a.lstrip().startswith(";"):
            a = a.lstrip()[1:].lstrip()
        a_is_code = bool(a.strip()) and not a.lstrip().startswith("#")
        if b and a_is_code:
            replacement = [f"{b}; {a}{ending}"]
        elif b:
            replacement = [f"{b}{ending}"]
        elif a_is_code:
            replacement = [f"{_leading_ws(before)}{a}{ending}"]
        else:
            replacement = []
            while first > 0 and lines[first - 1].lstrip().startswith("#") and not _inside_string(tree, first):
                first -= 1
        lines[first:last + 1] = replacement
    while _trailing_blank(lines) > trailing_blank:   # blank lines that sat between code and the metadata
        lines.pop()
    return "".join(lines)


def _trailing_blank(lines: list[str]) -> int:
    n = 0
    while n < len(lines) and not lines[len(lines) - 1 - n].strip():
        n += 1
    return n


def _leading_ws(s: str) -> str:
    return s[:len(s) - len(s.lstrip())]


def _inside_string(tree: ast.Module, line_no: int) -> bool:
    """Whether 1-based line `line_no` lies inside a multi-line string constant (so is not a comment)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            end = node.end_lineno or node.lineno
            if node.lineno < line_no <= end:
                return True
    return False


def held_out_shapes(text: str) -> list[dict[str, Any]]:
    """The HELD_OUT and HELD_OUT_SMALL presets of a problem (for feedback_from_verdict's hidden_shapes)."""
    try:
        tree = pyast.parse(text)
    except SyntaxError:
        return []
    found: list[dict[str, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in ("HELD_OUT", "HELD_OUT_SMALL"):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                continue
            found.extend(dict(p) for p in value or [] if isinstance(p, dict))
    return found


# ---------------------------------------------------------------------------------------------------
# hardware block


def hardware_from_spec(spec: Any, *, sm_count: int | None = None, l2_bytes: int | None = None,
                       **extra: Any) -> dict[str, Any]:
    """Hardware-block data from a suite.sol.GpuSpec (or any object with its fields) plus plain extras.

    GpuSpec carries name, memory_bandwidth (bytes/s) and peak FLOP/s; SM count, L2 size and the like come
    as arguments, e.g. hardware_from_spec(H200, **H200_EXTRA). None values are left out.
    """
    data: dict[str, Any] = {}
    for key in ("name", "memory_bandwidth", "fp32_flops", "tf32_flops", "bf16_flops", "fp16_flops"):
        value = getattr(spec, key, None)
        if value is not None:
            data[key] = value
    for key, value in (("sm_count", sm_count), ("l2_bytes", l2_bytes), *extra.items()):
        if value is not None:
            data[key] = value
    return data


def _si(value: float, unit: str) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _binary(nbytes: float) -> str:
    for factor, suffix in ((1024 ** 3, "GiB"), (1024 ** 2, "MiB"), (1024, "KiB")):
        if nbytes >= factor:
            return f"{nbytes / factor:.4g} {suffix}"
    return f"{nbytes:.0f} bytes"


def _hardware_value(key: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if key == "memory_bandwidth":
        return _si(value, "B/s")
    if key.endswith("_flops"):
        return _si(value, "FLOP/s")
    if key.endswith("_bytes"):
        return _binary(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def render_hardware(hardware: Mapping[str, Any]) -> str:
    """The hardware block for a dict from hardware_from_spec (unknown keys listed as they are)."""
    labels = dict(_HARDWARE_FIELDS)
    keys = [k for k, _ in _HARDWARE_FIELDS if hardware.get(k) is not None]
    keys += [k for k in hardware if k not in labels and hardware[k] is not None]
    facts = "\n".join(f"- {labels.get(k, k)}: {_hardware_value(k, hardware[k])}" for k in keys)
    return render("hardware.md", facts=facts)


# ---------------------------------------------------------------------------------------------------
# messages


def _common(problem_text: str, backend: str, hardware: Mapping[str, Any] | None, precision: str) -> dict[str, str]:
    _check_backend(backend)
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
        speed = f"{speedup:.2f}x the speed of the PyTorch reference" if _finite(speedup) else "it was not timed"
        return render("goal_faster.md", speed=speed)
    return template("goal_flags.md")


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


# ---------------------------------------------------------------------------------------------------
# feedback from a verdict

_SEED = re.compile(r"\b((?:init_)?seeds?)\b(\s*[=:]?\s*)-?\d+", re.IGNORECASE)
_LONG_INT = re.compile(r"(?<![\w.])\d{14,}(?![\w.])")
_HELD_OUT_OPEN = "at a held-out shape ("
_INT_SEQ = re.compile(r"torch\.Size\(\[\s*(?:-?\d+\s*,?\s*)*\]\)|[\[(]\s*-?\d+\s*(?:,\s*-?\d+\s*)*,?\s*[\])]")
_COUNT_OF = re.compile(r"\b\d+ of \d+\b")
_ERROR_LINE = re.compile(r"error|exception|traceback|undefined|fatal|failed|assert", re.IGNORECASE)
_DIFFERS_AT = re.compile(r"output differs at (\[[^\]]*\]|\S+): got (\S+), expected (\S+) "
                         r"\(\|err\| (\S+) > allowed ([^)\s]+)\)")
_REL_L2 = re.compile(r"relative L2 error (\S+) exceeds (\S+)")
_TRIAL = re.compile(r"^(trial \d+):\s*")


def _redact_seeds(text: str) -> str:
    text = _SEED.sub(lambda m: f"{m.group(1)}{m.group(2)}<hidden>", text)
    return _LONG_INT.sub("<number>", text)


def _redact_held_out_reason(text: str) -> tuple[str, bool]:
    """Replace "at a held-out shape (k=v, ...)" and hide the shape details after it."""
    start = text.find(_HELD_OUT_OPEN)
    if start < 0:
        return text, False
    depth, i = 1, start + len(_HELD_OUT_OPEN)
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    tail = text[i:]
    tail = _INT_SEQ.sub(lambda m: "(hidden)" if m.group(0).lstrip().startswith(("(", "torch")) else "[hidden]", tail)
    tail = _COUNT_OF.sub("some", tail)
    return f"{text[:start]}at a shape not shown to you{tail}", True


def _hidden_values(hidden_shapes: Iterable[Mapping[str, Any]] | None) -> tuple[set[int], list[tuple[str, str]]]:
    values: set[int] = set()
    pairs: list[tuple[str, str]] = []
    for preset in hidden_shapes or []:
        product = 1
        for key, value in preset.items():
            pairs.append((str(key), str(value)))
            ints = [v for v in _flatten(value) if isinstance(v, int) and not isinstance(v, bool)]
            values.update(ints)
            for v in ints:
                product *= v
        if product > 1:
            values.add(product)
    return values, pairs


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _redact_hidden(text: str, values: set[int], pairs: list[tuple[str, str]]) -> str:
    if not values and not pairs:
        return text
    for key, value in pairs:
        text = re.sub(rf"\b{re.escape(key)}\s*=\s*{re.escape(value)}(?![\w.])", f"{key}=<hidden>", text)

    def seq(m: re.Match) -> str:
        ints = {int(x) for x in re.findall(r"-?\d+", m.group(0))}
        if ints & values:
            return "(hidden)" if m.group(0).lstrip().startswith(("(", "torch")) else "[hidden]"
        return m.group(0)

    text = _INT_SEQ.sub(seq, text)
    big = sorted((v for v in values if abs(v) >= 10), key=lambda v: -len(str(v)))
    if big:
        text = re.sub(r"(?<![\w.])(" + "|".join(str(v) for v in big) + r")(?![\w.])", "<hidden>", text)
    return text


def sanitize_text(text: str, hidden_shapes: Iterable[Mapping[str, Any]] | None = None) -> str:
    """A judge's text with seeds, very long integers and held-out shapes removed."""
    text, _ = _redact_held_out_reason(text or "")
    values, pairs = _hidden_values(hidden_shapes)
    return _redact_seeds(_redact_hidden(text, values, pairs))


def bound_excerpt(text: str, max_chars: int = 2400, max_line_chars: int = 300) -> str:
    """At most about max_chars of an error log: lines that report errors (with a little context) and the
    last lines first, then the first lines; gaps are marked with the number of lines left out."""
    text = (text or "").replace("\r\n", "\n").strip("\n")
    if not text:
        return ""
    lines = [ln if len(ln) <= max_line_chars else ln[:max_line_chars - 40] + " [...] " + ln[-33:]
             for ln in text.split("\n")]
    if sum(len(ln) + 1 for ln in lines) <= max_chars:
        return "\n".join(lines)
    order: list[int] = list(range(len(lines) - 1, max(len(lines) - 6, -1), -1))   # the last 5 lines
    for i, ln in enumerate(lines):
        if _ERROR_LINE.search(ln):
            order += [j for j in (i - 1, i, i + 1, i + 2) if 0 <= j < len(lines)]
    order += list(range(len(lines)))
    keep: set[int] = set()
    used = 60   # room for the gap markers
    for i in order:
        if i in keep:
            continue
        cost = len(lines[i]) + 1
        if used + cost > max_chars:
            continue
        keep.add(i)
        used += cost
    out: list[str] = []
    skipped = 0
    for i, ln in enumerate(lines):
        if i in keep:
            if skipped:
                out.append(f"[... {skipped} lines left out ...]")
                skipped = 0
            out.append(ln)
        else:
            skipped += 1
    if skipped:
        out.append(f"[... {skipped} lines left out ...]")
    return "\n".join(out)


def _number(text: str) -> float | None:
    try:
        return float(text.rstrip(",;"))
    except ValueError:
        return None


def _mismatch(verdict: Mapping[str, Any], reason: str, hidden: bool) -> dict[str, Any] | None:
    if verdict.get("verdict") != "wrong_output":
        return None
    info: dict[str, Any] = {"kind": "other", "at_hidden_shape": hidden}
    trial = _TRIAL.match(reason)
    if trial:
        info["where"] = trial.group(1)
    elif hidden:
        info["where"] = "a shape not shown to you"
    m = _DIFFERS_AT.search(reason)
    if m:
        info["kind"] = "values"
        if not hidden and m.group(1).startswith("["):
            info["index"] = [int(x) for x in re.findall(r"-?\d+", m.group(1))]
        info.update(got=_number(m.group(2)), expected=_number(m.group(3)), abs_err=_number(m.group(4)),
                    allowed=_number(m.group(5)))
    elif (m := _REL_L2.search(reason)):
        info.update(kind="rel_l2", rel_l2=_number(m.group(1)), rel_l2_allowed=_number(m.group(2)))
    elif "output shape" in reason:
        info["kind"] = "shape"
    elif "dtype" in reason:
        info["kind"] = "dtype"
    elif "NaN/Inf" in reason:
        info["kind"] = "nonfinite"
    elif "structure" in reason:
        info["kind"] = "structure"
    elif "elements differ" in reason:
        info["kind"] = "integer_values"
    info["detail"] = reason
    return info


_PROFILE_SUMMARY_CLASSES = ("total", "error")   # Verdict.profile rows that are no kernel


def _profile_rows(profile: Iterable[Any] | None, limit: int,
                  clean: Callable[[str], str] = lambda s: s) -> list[dict[str, Any]]:
    """Top kernels by time from (name, ms) pairs, dicts with kernel/name and ms/time_ms, or Verdict.profile
    rows ({name, class, device_us, calls, share}); the judge's share and class are kept when given."""
    rows: list[tuple[str, float, Any, Any]] = []
    for item in profile or []:
        share = kind = None
        if isinstance(item, Mapping):
            if item.get("class") in _PROFILE_SUMMARY_CLASSES:
                continue
            name = item.get("kernel", item.get("name"))
            ms = next((item[k] for k in ("ms", "time_ms", "time", "self_ms", "cuda_time_ms") if k in item), None)
            if ms is None and "device_us" in item:
                try:
                    ms = float(item["device_us"]) / 1000.0
                except (TypeError, ValueError):
                    continue
            share = item.get("share") if _finite(item.get("share")) else None
            kind = str(item["class"]) if isinstance(item.get("class"), str) else None
        else:
            try:
                name, ms = item[0], item[1]
            except (TypeError, IndexError, KeyError):
                continue
        try:
            ms = float(ms)
        except (TypeError, ValueError):
            continue
        if name is None or not math.isfinite(ms):
            continue
        name = clean(str(name))
        rows.append((name if len(name) <= 160 else name[:157] + "...", ms, share, kind))
    total = sum(ms for _, ms, _, _ in rows)
    rows.sort(key=lambda r: -r[1])
    out = []
    for n, ms, share, kind in rows[:limit]:
        row: dict[str, Any] = {"kernel": n, "ms": ms,
                               "share": share if share is not None else (ms / total) if total > 0 else None}
        if kind:
            row["class"] = kind
        out.append(row)
    return out


def _finding_dict(f: Any) -> dict[str, Any]:
    d = f.to_dict() if hasattr(f, "to_dict") else dict(f)
    return {"line": d.get("line"), "code": d.get("code", ""), "message": str(d.get("message", ""))[:400],
            "blocking": bool(d.get("blocking", False))}


def feedback_from_verdict(verdict: Mapping[str, Any], profile: Sequence[Any] | None = None, *,
                          hidden_shapes: Iterable[Mapping[str, Any]] | None = None,
                          max_excerpt_chars: int = 2400, max_findings: int = 20,
                          max_profile: int = 10) -> dict[str, Any]:
    """What the model is told about its previous solution, from a Verdict dict (Verdict.to_dict()).

    Returns a JSON-able dict:
      verdict, accepted        as judged
      reason                   the judge's one-line reason, secrets removed
      error_excerpt            build/runtime error output, bounded (bound_excerpt), secrets removed; "" if none
      mismatch                 for wrong_output: {kind: values|rel_l2|shape|dtype|nonfinite|structure|
                               integer_values|other, where, index, got, expected, abs_err, allowed, rel_l2,
                               at_hidden_shape, detail}; None otherwise (index only at a shown shape)
      rel_l2                   the worst relative L2 error of a correct solution, when known
      speedup, ref_ms, sol_ms  timing at the benchmark shape (None when not timed)
      flags                    the judge's flags
      findings                 static-analysis findings [{line, code, message, blocking}], at most max_findings
      findings_left_out        how many more there were
      profile                  [{kernel, ms, share, class?}] top max_profile by time, from `profile` (or, when
                               None, the verdict's own `profile`, Verdict.profile rows): (name, ms) pairs or
                               dicts with kernel/name and ms/time_ms/device_us; class is the judge's
                               (custom, library_compute, allowed, other) where it gave one
    Never included: seeds, the solution/problem paths, held-out shapes (see the module docstring).
    """
    raw_reason = str(verdict.get("reason") or "")
    reason, hidden = _redact_held_out_reason(raw_reason)
    values, pairs = _hidden_values(hidden_shapes)
    clean = lambda s: _redact_seeds(_redact_hidden(s, values, pairs))  # noqa: E731
    reason = clean(reason)
    excerpt = clean(bound_excerpt(str(verdict.get("error_excerpt") or ""), max_excerpt_chars))
    findings = [_finding_dict(f) for f in verdict.get("findings") or []]
    for f in findings:
        f["message"] = clean(f["message"])
    max_error = verdict.get("max_error") or {}
    rel_l2 = max_error.get("rel_l2") if isinstance(max_error, Mapping) else None
    return {
        "verdict": str(verdict.get("verdict", "")),
        "accepted": bool(verdict.get("accepted", False)),
        "reason": reason,
        "error_excerpt": excerpt,
        "mismatch": _mismatch(verdict, reason, hidden),
        "rel_l2": rel_l2 if _finite(rel_l2) and verdict.get("verdict") == "correct" else None,
        "speedup": verdict.get("speedup") if _finite(verdict.get("speedup")) else None,
        "ref_ms": verdict.get("ref_ms") if _finite(verdict.get("ref_ms")) else None,
        "sol_ms": verdict.get("sol_ms") if _finite(verdict.get("sol_ms")) else None,
        "flags": [str(f) for f in verdict.get("flags") or []],
        "findings": findings[:max_findings],
        "findings_left_out": max(0, len(findings) - max_findings),
        "profile": _profile_rows(profile if profile is not None else verdict.get("profile"), max_profile, clean),
    }


def feedback_no_code(note: str) -> dict[str, Any]:
    """Feedback for a reply from which no solution could be extracted (extract.Extraction.note)."""
    return {
        "verdict": "no_code", "accepted": False,
        "reason": f"no solution could be taken from the reply ({_redact_seeds(str(note))}); answer with the "
                  "complete file in one ```python block that defines class ModelNew",
        "error_excerpt": "", "mismatch": None, "rel_l2": None, "speedup": None, "ref_ms": None, "sol_ms": None,
        "flags": [], "findings": [], "findings_left_out": 0, "profile": [],
    }


_PROFILE_CLASS_WORDS = {
    "custom": "your code",
    "library_compute": "library compute, not your kernel",
    "allowed": "allocation or copy",
    "other": "not recognised",
}

_VERDICT_WORDS = {
    "no_code": "no usable code in the reply",
    "correct": "correct",
    "wrong_output": "wrong output",
    "build_error": "failed to build",
    "runtime_error": "failed while running",
    "timeout": "ran out of time",
    "rejected": "rejected",
    "unjudgeable": "not judged (the problem's reference cannot tell right from wrong)",
}


def render_feedback(feedback: Mapping[str, Any]) -> str:
    """The judge's report as text, for the refinement prompt."""
    verdict = str(feedback.get("verdict", ""))
    accepted = "accepted" if feedback.get("accepted") else "not accepted"
    parts = [f"Verdict: {_VERDICT_WORDS.get(verdict, verdict)} ({accepted})."]
    if feedback.get("reason"):
        parts.append(f"Reason: {feedback['reason']}")
    mismatch = feedback.get("mismatch")
    if mismatch and mismatch.get("kind") == "values":
        where = f" at index {mismatch['index']}" if mismatch.get("index") is not None else ""
        shape = " (at a shape not shown to you)" if mismatch.get("at_hidden_shape") else ""
        parts.append(f"Mismatch{shape}: the worst element{where} is {mismatch.get('got')} where "
                     f"{mismatch.get('expected')} was expected (|error| {mismatch.get('abs_err')}, allowed "
                     f"{mismatch.get('allowed')}).")
    elif mismatch and mismatch.get("kind") == "rel_l2":
        parts.append(f"Mismatch: relative L2 error {mismatch.get('rel_l2')} where {mismatch.get('rel_l2_allowed')} "
                     "is allowed (too much precision lost, or an output that is constant or zero).")
    if feedback.get("error_excerpt"):
        parts.append("Error output (excerpt):\n" + fenced(feedback["error_excerpt"], "text"))
    findings = feedback.get("findings") or []
    if findings:
        lines = [f"- line {f.get('line')} [{f.get('code')}{', blocks acceptance' if f.get('blocking') else ''}]: "
                 f"{f.get('message')}" for f in findings]
        if feedback.get("findings_left_out"):
            lines.append(f"- ... and {feedback['findings_left_out']} more")
        parts.append("Static analysis of your source:\n" + "\n".join(lines))
    flags = feedback.get("flags") or []
    if flags:
        parts.append("Flags: " + ", ".join(flags))
    speedup = feedback.get("speedup")
    if _finite(speedup):
        times = ""
        if _finite(feedback.get("ref_ms")) and _finite(feedback.get("sol_ms")):
            times = f" (reference {feedback['ref_ms']:.4g} ms, yours {feedback['sol_ms']:.4g} ms)"
        relation = "faster than" if speedup > 1 else "slower than" if speedup < 1 else "as fast as"
        parts.append(f"Speed: {speedup:.3g}x, {relation} the PyTorch reference{times}.")
    if _finite(feedback.get("rel_l2")):
        parts.append(f"Accuracy: worst relative L2 error {feedback['rel_l2']:.3g}.")
    profile = feedback.get("profile") or []
    if profile:
        lines = [f"- {p['kernel']}: {p['ms']:.4g} ms" + (f" ({100 * p['share']:.0f}%)" if _finite(p.get("share")) else "")
                 + (f" [{_PROFILE_CLASS_WORDS.get(p['class'], p['class'])}]" if p.get("class") else "")
                 for p in profile]
        parts.append("Profile of your solution (kernels by time):\n" + "\n".join(lines))
    return "\n\n".join(parts)
