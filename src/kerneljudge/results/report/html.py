"""HTML building blocks that escape by default.

Text from verdicts, solutions and run folders is untrusted. Every value goes through `esc` unless it is
`Markup` (made here, from escaped parts). JSON put inside <script> escapes <, >, & and U+2028/2029 so it
can neither close the element nor break the script. The page's content security policy allows no
loads at all except data: images, and only the page's own <style> and <script>, named by their sha256.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Union


class Markup(str):
    """A string that is already HTML (built from escaped parts): inserted as is."""


def esc(value: Any) -> Markup:
    """Escaped text (quotes included, so it is safe in attribute values too); None becomes ''."""
    if isinstance(value, Markup):
        return value
    return Markup("" if value is None else html.escape(str(value), quote=True))


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    return Markup(esc(sep).join(esc(p) for p in parts))


VOID = frozenset({"input", "img", "br", "meta", "link", "hr"})


def tag(name: str, content: Any = "", **attrs: Any) -> Markup:
    """<name attrs>content</name>; attribute names use '_' for '-' and a trailing '_' (class_); True is
    a bare boolean attribute."""
    rendered = "".join(f' {k.rstrip("_").replace("_", "-")}' + ("" if v is True else f'="{esc(v)}"')
                       for k, v in attrs.items() if v is not None and v is not False)
    if name in VOID:
        return Markup(f"<{name}{rendered}>")
    return Markup(f"<{name}{rendered}>{esc(content)}</{name}>")


def json_for_script(obj: Any) -> Markup:
    """JSON safe inside <script type="application/json">: no '<', '>', '&' or line separators as such."""
    text = json.dumps(_finite(obj), sort_keys=True, ensure_ascii=False, default=str, allow_nan=False)
    for ch, repl in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                     ("\u2029", "\\u2029")):
        text = text.replace(ch, repl)
    return Markup(text)


def _finite(obj: Any) -> Any:
    """NaN and infinities (not JSON) become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


@dataclass(frozen=True)
class Cell:
    """A table cell: what it shows, and the key a sortable column sorts it by."""

    content: Any
    sort: Optional[Union[float, str]] = None
    cls: Optional[str] = None


def _cell(c: Any) -> Markup:
    if not isinstance(c, Cell):
        c = Cell(c)
    sort = None if c.sort is None else (f"{c.sort:.9g}" if isinstance(c.sort, float) else str(c.sort))
    return tag("td", c.content, data_v=sort, class_=c.cls)


def table(headers: Sequence[Any], rows: Iterable[Sequence[Any]], *, cls: str = "data", id: Optional[str] = None,
          numeric: Sequence[int] = (), row_attrs: Optional[Sequence[dict[str, Any]]] = None) -> Markup:
    """A table; headers at indexes in `numeric` sort numerically (by each cell's sort key)."""
    head = "".join(tag("th", h, data_col=str(i), data_type="num" if i in numeric else "text")
                   for i, h in enumerate(headers))
    body = []
    for j, r in enumerate(rows):
        attrs = row_attrs[j] if row_attrs else {}
        body.append(tag("tr", Markup("".join(_cell(c) for c in r)), **attrs))
    return Markup(f'<table class="{esc(cls)}"' + (f' id="{esc(id)}"' if id else "") +
                  f"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def pre(text: Any, cls: str = "code") -> Markup:
    return tag("pre", text, class_=cls)


def fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{digits}g}" if abs(x) < 1e4 else f"{x:.0f}"
    return str(x)


def csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def page(title: str, body: Markup, css: str, script: str) -> str:
    """The whole document. The policy names the exact <style> and <script> by hash: nothing else runs,
    styles or loads (images only as data: URIs)."""
    policy = (f"default-src 'none'; img-src data:; style-src {csp_hash(css)}; script-src {csp_hash(script)}; "
              "base-uri 'none'; form-action 'none'")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{esc(title)}</title>\n"
            '<link rel="icon" href="data:,">\n'
            f"<style>{css}</style>\n</head>\n<body>\n{body}\n<script>{script}</script>\n</body></html>\n")
