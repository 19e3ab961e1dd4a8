"""ast.parse for a judge that parses in several threads at once (the service, a pool's workers).

CPython 3.11 keeps the AST constructor's recursion depth in per-interpreter state, not per thread, so two
threads turning parse trees into Python objects at the same time can fail with "SystemError: AST constructor
recursion depth mismatch". The service hit it under 32 concurrent clients (an HTTP 500 for a valid job, and
once an internal judge error for a solution). Parsing takes one lock; the trees are used freely afterwards.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_lock = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec", **kwargs: Any) -> Any:
    with _lock:
        return ast.parse(source, filename, mode, **kwargs)
