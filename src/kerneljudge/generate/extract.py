"""Take the solution file out of a model's reply.

    extract_solution(reply, backend=None) -> Extraction(code, outcome, note)

outcome is "ok" (code holds the solution source) or "no_code" (code is None); note always says what was
found and what was done, so a reply is never dropped silently: a reply without usable code is a
"no_code" record with its reason.

How the code is chosen:
1. <think>/<thinking>/<reasoning> sections are set aside (also an opening tag never closed: a reply cut
   off while reasoning, and a closing tag with no opening one: APIs that strip the opening tag). Code
   inside them is used only when nothing outside them defines ModelNew (said in the note).
2. Fenced blocks (``` or ~~~, any length, indented fences too; a last fence never closed runs to the end
   of the reply and is noted as truncated). A block is a candidate when it defines `ModelNew` (a class or
   an assignment at module level; a regular-expression test when the block does not parse). A block
   tagged with another language (cuda, cpp, ...) is a candidate only when it parses as Python: a CUDA
   block alone is not a solution. Candidates are ranked by: parses > has a forward method > uses no
   names it does not define > fence closed > matches the requested backend > tagged python > later in the
   reply. A candidate that uses names defined by earlier Python blocks is joined with those blocks.
3. Without a fenced candidate: the text outside the fences is read as raw code. Lines that stop it
   parsing and look like prose (sentences, Markdown bullets, stray fences, lone tags) are turned into
   comments, prose at the start and end is dropped; code lines are never changed. If the text still does
   not parse it is returned as it is (the judge then reports the syntax error).
4. Nothing defines ModelNew: "no_code", with what was seen (empty reply, only prose, a CUDA-only block,
   Python without ModelNew).
"""

from __future__ import annotations

import ast
import builtins
import re
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Optional

from kerneljudge.analysis import BACKENDS as DETECTED_BACKENDS
from kerneljudge.core import pyast

OUTCOMES = ("ok", "no_code")
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "ipython", "python2", "pycon"})
_BUILTIN_NAMES = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__spec__", "__builtins__"}

_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*$")
_MODELNEW_RE = re.compile(r"^[ \t]*(class[ \t]+ModelNew\b|ModelNew[ \t]*=)", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
_LONE_TAG = re.compile(r"^</?[A-Za-z_][\w-]*>$")
_MARKDOWN_START = re.compile(r"^(?:[-*+]\s|>\s?|#{1,6}\s|\d+[.)]\s|\*\*|__|\|)")


@dataclass(frozen=True)
class Extraction:
    code: Optional[str]
    outcome: str          # "ok" | "no_code"
    note: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}; got {self.outcome!r}")
        if (self.code is None) != (self.outcome == "no_code"):
            raise ValueError("code must be None exactly when the outcome is no_code")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Block:
    number: int          # 1-based among the fenced blocks of the text
    lang: str            # "" when untagged
    code: str
    closed: bool


@dataclass
class _Candidate:
    code: str
    parses: bool
    complete: bool       # ModelNew has a forward
    self_contained: bool
    closed: bool
    backend_match: bool
    python_tag: bool
    position: int
    notes: list[str]

    def key(self) -> tuple:
        return (self.parses, self.complete, self.self_contained, self.closed, self.backend_match,
                self.python_tag, self.position)


# ---------------------------------------------------------------------------------------------------
# helpers


def _parse(code: str) -> Optional[ast.Module]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # invalid escape sequences in non-raw C++ strings and the like
        try:
            return pyast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _module_statements(body: list[ast.stmt]):
    """Module-level statements, looking into if/try/with blocks (not into functions or classes)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(node, (ast.If, ast.Try, ast.With)) and isinstance(inner, list):
                yield from _module_statements(inner)
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                yield from _module_statements(handler.body)


def _modelnew(tree: ast.Module) -> tuple[bool, bool]:
    """(defines ModelNew, has forward) for a parsed module."""
    defines = complete = False
    for node in _module_statements(tree.body):
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            defines = True
            complete = complete or any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "forward"
                                       for n in node.body) or bool(node.bases and not _only_nn_module(node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in targets):
                defines = complete = True
    return defines, complete


def _only_nn_module(cls: ast.ClassDef) -> bool:
    """Whether every base is nn.Module / torch.nn.Module / Module (so forward must come from the class)."""
    for base in cls.bases:
        name = ast.unparse(base) if hasattr(ast, "unparse") else ""
        if name not in ("nn.Module", "torch.nn.Module", "Module"):
            return False
    return True


def _free_names(tree: ast.Module) -> set[str]:
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return set()   # a star import: cannot tell what it defines
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return loaded - bound - _BUILTIN_NAMES


def _top_bound(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in _module_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _detect_backend(code: str) -> Optional[str]:
    try:
        from kerneljudge.analysis import detect_backend
    except Exception:  # pragma: no cover - the analysis package is part of kerneljudge
        return None
    try:
        return detect_backend(code)
    except Exception:
        return None


def _lang(info: str) -> str:
    m = re.match(r"\s*\{?\s*\.?([\w+#.-]+)", info)
    if not m:
        return ""
    return m.group(1).split(":")[0].lower()


def _dedent(line: str, indent: int) -> str:
    i = 0
    while i < indent and i < len(line) and line[i] in " \t":
        i += 1
    return line[i:]


# ---------------------------------------------------------------------------------------------------
# reasoning sections and fences


def _split_thinking(text: str) -> tuple[str, list[str]]:
    """(text outside reasoning sections, the reasoning sections)."""
    thinking: list[str] = []
    first_close = _THINK_CLOSE.search(text)
    first_open = _THINK_OPEN.search(text)
    if first_close and (not first_open or first_close.start() < first_open.start()):
        thinking.append(text[:first_close.start()])
        text = text[first_close.end():]
    out: list[str] = []
    while True:
        m = _THINK_OPEN.search(text)
        if not m:
            out.append(text)
            break
        out.append(text[:m.start()])
        close = _THINK_CLOSE.search(text, m.end())
        if not close:
            thinking.append(text[m.end():])
            break
        thinking.append(text[m.end():close.start()])
        text = text[close.end():]
    return "".join(out), thinking


def _fenced_blocks(text: str) -> tuple[list[_Block], str]:
    """The fenced blocks of a text, and the text with the blocks (fences included) taken out."""
    lines = text.split("\n")
    blocks: list[_Block] = []
    outside: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            outside.append(lines[i])
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent").expandtabs(4))
        body: list[str] = []
        j, closed = i + 1, False
        while j < len(lines):
            c = _FENCE_CLOSE.match(lines[j])
            if c and c.group("fence")[0] == fence[0] and len(c.group("fence")) >= len(fence):
                closed = True
                break
            body.append(_dedent(lines[j], indent))
            j += 1
        blocks.append(_Block(len(blocks) + 1, _lang(m.group("info")), "\n".join(body), closed))
        i = j + 1
    return blocks, "\n".join(outside)


# ---------------------------------------------------------------------------------------------------
# choosing among fenced blocks


def _candidates(blocks: list[_Block], backend: Optional[str]) -> list[_Candidate]:
    parsed = [_parse(b.code) for b in blocks]
    found: list[_Candidate] = []
    for b, tree in zip(blocks, parsed):
        other_tag = bool(b.lang) and b.lang not in PYTHON_TAGS
        if tree is not None:
            defines, complete = _modelnew(tree)
        else:
            defines, complete = bool(_MODELNEW_RE.search(b.code)), "def forward" in b.code
        if not defines or (other_tag and tree is None):
            continue
        kind = b.lang or "untagged"
        notes = [f"fenced block {b.number} of {len(blocks)} ({kind})"]
        if other_tag:
            notes.append(f"tagged {b.lang} but it is Python")
        code = b.code
        free = _free_names(tree) if tree is not None else set()
        if free:
            helpers = []
            for prev, prev_tree in zip(blocks[:b.number - 1], parsed[:b.number - 1]):
                if prev_tree is None or (prev.lang and prev.lang not in PYTHON_TAGS) or _modelnew(prev_tree)[0]:
                    continue
                if _top_bound(prev_tree) & free:
                    helpers.append(prev)
            if helpers:
                joined = "\n\n".join([h.code.rstrip() for h in helpers] + [code])
                joined_tree = _parse(joined)
                if joined_tree is not None and len(_free_names(joined_tree)) < len(free):
                    code, tree = joined, joined_tree
                    free = _free_names(joined_tree)
                    many = len(helpers) > 1
                    notes.append(f"joined with earlier block{'s' if many else ''} "
                                 + ", ".join(str(h.number) for h in helpers)
                                 + f", which define{'' if many else 's'} names it uses")
        if free:
            notes.append("uses names it does not define: " + ", ".join(sorted(free)[:8]))
        if tree is None:
            notes.append("the code does not parse as Python")
        if not b.closed:
            notes.append("its fence is never closed: the reply looks truncated")
        detected = _detect_backend(code) if backend and tree is not None else None
        if backend and detected and detected != backend:
            notes.append(f"asked for {backend}, the code looks like {detected}")
        found.append(_Candidate(code, tree is not None, complete, not free, b.closed,
                                backend is None or detected in (None, backend), not other_tag and bool(b.lang),
                                b.number, notes))
    return found


# ---------------------------------------------------------------------------------------------------
# raw code without fences


def _looks_like_prose(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if "```" in stripped or "~~~" in stripped or _LONE_TAG.match(stripped):
        return True
    if line[:1] in " \t":
        return False   # indented lines are code (or inside code): never touched
    if _MARKDOWN_START.match(stripped):
        return True
    words = _WORD.findall(stripped)
    letters = sum(ch.isalpha() or ch.isspace() for ch in stripped)
    return len(words) >= 3 and letters >= 0.75 * len(stripped)


def _recover_raw(text: str) -> tuple[Optional[str], str]:
    """(code, note) from text without usable fences; code None when no ModelNew is in it."""
    if not _MODELNEW_RE.search(text):
        return None, ""
    lines = text.split("\n")
    commented: set[int] = set()
    tree = None
    for _ in range(min(len(lines), 400) + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tree = pyast.parse("\n".join(lines))
                break
            except SyntaxError as exc:
                lineno = min(max(exc.lineno or len(lines), 1), len(lines))
            except (ValueError, RecursionError, MemoryError):
                tree = None
                break
        i = lineno - 1
        if i in commented or not _looks_like_prose(lines[i]):
            tree = None
            break
        lines[i] = "# " + lines[i]
        commented.add(i)
    if tree is None:
        code = text.strip("\n")
        return code + "\n", "no usable code fence, and the text does not parse as Python: passed on as it is"
    # drop prose at the edges: lines this function commented out, blank lines, bare names ("Solution")
    keep = [i for i, ln in enumerate(lines) if ln.strip() and i not in commented]
    first, last = keep[0], keep[-1]
    for node in (tree.body[0], tree.body[-1]) if tree.body else ():
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Name, ast.Attribute)):
            if node.lineno - 1 == first and len(tree.body) > 1:
                first = next(i for i in keep if i > (node.end_lineno or node.lineno) - 1)
            elif (node.end_lineno or node.lineno) - 1 == last and len(tree.body) > 1:
                last = max(i for i in keep if i < node.lineno - 1)
    code = "\n".join(lines[first:last + 1]) + "\n"
    inner = len([i for i in commented if first < i < last])
    note = "no usable code fence: the reply read as raw code"
    if commented:
        dropped = len(commented) - inner
        parts = (([f"{dropped} dropped at the edges"] if dropped else [])
                 + ([f"{inner} kept as comments"] if inner else []))
        note += f" (prose lines: {', '.join(parts)})"
    return code, note


# ---------------------------------------------------------------------------------------------------
# entry point


def _from_text(text: str, backend: Optional[str]) -> tuple[Optional[str], str]:
    blocks, outside = _fenced_blocks(text)
    cands = _candidates(blocks, backend)
    if cands:
        best = max(cands, key=_Candidate.key)
        notes = list(best.notes)
        others = len(cands) - 1
        if others:
            notes.append(f"{others} other block{'s' if others > 1 else ''} also define{'s' if others == 1 else ''} "
                         "ModelNew; took the best-ranked (the last when equal)")
        code = best.code if best.code.endswith("\n") else best.code + "\n"
        return code, "; ".join(notes)
    code, note = _recover_raw(outside if blocks else text)
    if code is not None:
        if blocks:
            note += f"; outside {len(blocks)} fenced block{'s' if len(blocks) > 1 else ''} that define no ModelNew"
        return code, note
    if blocks:
        langs = ", ".join(b.lang or "untagged" for b in blocks)
        python = [b for b in blocks if (not b.lang or b.lang in PYTHON_TAGS)]
        if not python:
            return None, f"only non-Python code blocks ({langs}): no Python solution defining ModelNew"
        return None, f"{len(blocks)} code block{'s' if len(blocks) > 1 else ''} ({langs}), none defines class ModelNew"
    if _parse(text) is not None and text.strip():
        return None, "the reply parses as Python but defines no class ModelNew"
    return None, "no code in the reply (prose only)"


def extract_solution(reply: Optional[str], backend: Optional[str] = None) -> Extraction:
    """The solution source in a model's reply (see the module docstring for how it is chosen).

    backend: the backend that was asked for (cuda, triton, cpp, torch); it breaks ties between several
    solutions and a mismatch is mentioned in the note. It never turns a solution away.
    """
    if backend is not None and backend not in DETECTED_BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(DETECTED_BACKENDS)} or None; got {backend!r}")
    if reply is None or not str(reply).strip():
        return Extraction(None, "no_code", "empty reply")
    text = str(reply).replace("\r\n", "\n").replace("\r", "\n")
    visible, thinking = _split_thinking(text)
    prefix = []
    if thinking:
        prefix.append(f"{len(thinking)} reasoning section{'s' if len(thinking) > 1 else ''} set aside")
    if not visible.strip() and thinking:
        prefix.append("nothing outside the reasoning")
    code, note = _from_text(visible, backend) if visible.strip() else (None, "empty reply")
    if code is None and thinking:
        inner_code, inner_note = _from_text("\n".join(thinking), backend)
        if inner_code is not None:
            return Extraction(inner_code, "ok", "; ".join(prefix + [
                "no solution outside the reasoning, so the code was taken from inside it", inner_note]))
    if code is None:
        return Extraction(None, "no_code", "; ".join(prefix + [note]))
    return Extraction(code, "ok", "; ".join(prefix + [note]))
