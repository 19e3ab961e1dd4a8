"""A small C++/CUDA tokenizer: blanks comments and string literals, splits identifiers, `::` and
punctuation, and finds top-level function definitions with the names each one mentions (its calls and
kernel launches), so rules can tell which function a construct sits in and whether forward reaches it.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.']*|::|->|\S")
_IDENT = re.compile(r"[A-Za-z_]\w*$")
_RAW = re.compile(r'R"([^()\\\s]{0,16})\(')
_NOT_FUNCTIONS = frozenset({"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "namespace",
                            "defined", "alignof", "static_assert", "__launch_bounds__"})


class Tok(NamedTuple):
    text: str
    start: int


def is_ident(text: str) -> bool:
    return bool(_IDENT.match(text))


def blank(text: str) -> tuple[str, list[tuple[int, str]]]:
    """Comments and literal contents replaced by spaces (newlines kept, so offsets and lines still match),
    plus each literal's (offset, contents)."""
    out, literals, i, n = list(text), [], 0, len(text)

    def wipe(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) \
                and _RAW.match(text, i):
            m = _RAW.match(text, i)
            end = text.find(")" + m.group(1) + '"', m.end())
            end = n if end < 0 else end
            literals.append((m.end(), text[m.end():end]))
            close = min(end + len(m.group(1)) + 2, n)
            wipe(i + 1, close - 1)
            i = close
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum())):
            j = i + 1  # a quote between two alphanumerics is a digit separator (1'000), not a char literal
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            literals.append((i + 1, text[i + 1:j]))
            wipe(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out), literals


class Source:
    """Tokens of one embedded source, with its function structure."""

    def __init__(self, text: str):
        self.code, self.literals = blank(text)
        self.toks = [Tok(m.group(), m.start()) for m in _TOKEN.finditer(self.code)]
        self.idents = {t.text for t in self.toks}
        self.func_at: list[Optional[str]] = [None] * len(self.toks)
        self.mentions: dict[str, set[str]] = {}  # function -> identifiers in its body
        self._functions()
        self.exports = self._exports()

    def tok(self, i: int) -> str:
        return self.toks[i].text if 0 <= i < len(self.toks) else ""

    def match(self, i: int, open_: str, close: str, step: int = 1, limit: int = 100000) -> int:
        """Index of the bracket matching the one at i (scanning forward, or backward with step=-1)."""
        depth, k = 0, i
        while 0 <= k < len(self.toks) and abs(k - i) <= limit:
            t = self.tok(k)
            depth += (t == open_) - (t == close)
            if depth == 0:
                return k
            k += step
        return -1

    def _functions(self) -> None:
        """Definitions `name(...) [const|noexcept|-> T] {` outside other functions (namespaces are
        transparent); every token of the body is attributed to `name`."""
        i, n = 0, len(self.toks)
        while i < n:
            t = self.tok(i)
            if is_ident(t) and t not in _NOT_FUNCTIONS and self.tok(i + 1) == "(":
                close = self.match(i + 1, "(", ")")
                k = close + 1
                while 0 < k < n and self.tok(k) not in ("{", ";", "}", "(", "=") and k - close < 12:
                    k += 1  # const, noexcept, override, trailing return types
                if close > 0 and self.tok(k) == "{":
                    end = self.match(k, "{", "}")
                    end = n - 1 if end < 0 else end
                    for j in range(i, end + 1):
                        self.func_at[j] = t
                    self.mentions.setdefault(t, set()).update(self.tok(j) for j in range(k, end + 1)
                                                              if is_ident(self.tok(j)))
                    i = end + 1
                    continue
            i += 1

    def _exports(self) -> dict[str, str]:
        """Python name -> C++ function from `m.def("name", &func)` / `m.impl("name", &func)` bindings."""
        by_start = {t.start: i for i, t in enumerate(self.toks)}
        out = {}
        for offset, lit in self.literals:
            i = by_start.get(offset - 1)
            if i is None or self.tok(i - 2) not in ("def", "impl"):
                continue
            k = i + 2 if self.tok(i + 1) == '"' else i + 1
            if self.tok(k) == ",":
                k += 2 if self.tok(k + 1) == "&" else 1
                while is_ident(self.tok(k)) and self.tok(k + 1) == "::":
                    k += 2
                if is_ident(self.tok(k)):
                    out[lit.split("(")[0].split("::")[-1].strip()] = self.tok(k)
        return out



def closure(names: set[str], graph: dict[str, set[str]]) -> set[str]:
    """Functions reachable from `names` through the mention graph."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(m for m in graph.get(name, ()) if m in graph)
    return seen
