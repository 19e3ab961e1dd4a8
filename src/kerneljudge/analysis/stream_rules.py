"""Side streams that are never joined back to the caller's stream (`unsynced_stream`): the judge's timer
records on torch's current stream, so work left on another stream makes the timer stop early.

A side stream is one the solution makes: torch.cuda.Stream, cupy.cuda.Stream (blocking or not), numba's
cuda.stream() and per_thread_default_stream(), cuda.core's Device().create_stream(); or a wrapper of a raw
handle (torch.cuda.ExternalStream, cupy.cuda.ExternalStream, numba's cuda.external_stream, cuda.core's
Stream.from_handle, create_stream(obj), tvm_ffi.use_raw_stream(device, handle), which TileLang's kernels launch
on) unless the handle comes from torch.cuda.current_stream() -- then it *is* the caller's stream. A function
that uses one (creates it, enters it, `.use()`s it, launches on it, reads a stored one) must also join back in
the same function: synchronize/sync, wait_stream, wait_event, an event wait, or the libraries' runtime calls of
the same meaning.
"""

from __future__ import annotations

import ast
from typing import Iterator

from kerneljudge.analysis.findings import Hit
from kerneljudge.analysis.python_ast import Index

# calls that always make a new stream
STREAM_CTORS = frozenset({
    "torch.cuda.Stream", "torch.cuda.streams.Stream", "torch.Stream", "cupy.cuda.Stream", "cupy.cuda.stream.Stream",
    "numba.cuda.stream", "numba.cuda.per_thread_default_stream",
})
# calls that wrap an existing stream handle: a side stream unless the handle is torch's current stream
STREAM_WRAPPERS = frozenset({
    "torch.cuda.ExternalStream", "torch.cuda.streams.ExternalStream", "cupy.cuda.ExternalStream",
    "cupy.cuda.stream.ExternalStream", "numba.cuda.external_stream", "cuda.core.Stream.from_handle",
    "cuda.core.experimental.Stream.from_handle", "tvm_ffi.use_raw_stream", "tvm_ffi.stream.use_raw_stream",
    "tvm_ffi.StreamContext", "tvm_ffi.stream.StreamContext",
})
# where a wrapper takes the handle, when not first: tvm_ffi's (device, stream)
HANDLE_SLOT = {"tvm_ffi.use_raw_stream": 1, "tvm_ffi.stream.use_raw_stream": 1, "tvm_ffi.StreamContext": 1,
               "tvm_ffi.stream.StreamContext": 1}
HANDLE_KEYWORDS = frozenset({"stream", "handle", "obj"})
WRAPPER_METHODS = frozenset({"create_stream"})  # cuda.core: Device().create_stream(obj=None, options=None)
STREAM_USES = frozenset({"torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.StreamContext",
                         "torch.cuda.streams.StreamContext", "torch.cuda.use_stream"})
# where a handle that is the caller's own stream comes from
CURRENT_STREAM = frozenset({"torch.cuda.current_stream", "torch.cuda.streams.current_stream",
                            "torch.accelerator.current_stream"})
# methods that join a stream back (torch, CuPy, numba: synchronize / wait_event; cuda.core: sync / wait;
# CuPy's runtime module: streamSynchronize, ...)
SYNC_METHODS = frozenset({"wait_stream", "synchronize", "wait_event", "wait", "sync", "streamSynchronize",
                          "deviceSynchronize", "eventSynchronize", "streamWaitEvent"})
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of one scope, not descending into nested functions/lambdas (they are scopes of their own)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))


class StreamRules:
    def __init__(self, index: Index):
        self.ix = index
        self.self_values: dict[str, list[ast.AST]] = {}  # self.<attr> -> values ever assigned to it
        for node in index.nodes:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        self.self_values.setdefault(t.attr, []).append(node.value)

    # ------------------------------------------------------------------------------- what a stream is
    def from_current(self, expr: ast.AST, depth: int = 0) -> bool:
        """Whether `expr` derives from torch.cuda.current_stream() (directly, or through names it was bound to)."""
        if depth > 6:
            return False
        for n in ast.walk(expr):
            if isinstance(n, ast.Call) and self.ix.qualname(n.func) in CURRENT_STREAM:
                return True
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                if any(self.from_current(v, depth + 1) for v in self.ix.bindings(n)):
                    return True
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                if any(self.from_current(v, depth + 1) for v in self.self_values.get(n.attr, ())):
                    return True
        return False

    def side_stream(self, call: ast.Call) -> bool:
        """Whether `call` makes a stream other than the caller's."""
        q = self.ix.qualname(call.func) or ""
        if q in STREAM_CTORS:
            return True
        wrapper = q in STREAM_WRAPPERS or (isinstance(call.func, ast.Attribute) and call.func.attr in WRAPPER_METHODS
                                           and not q.startswith("torch."))
        if not wrapper:
            return False
        slot = HANDLE_SLOT.get(q, 0)
        handle = call.args[slot] if len(call.args) > slot else next(
            (k.value for k in call.keywords if k.arg in HANDLE_KEYWORDS or (slot == 0 and k.arg != "options")), None)
        return handle is None or not self.from_current(handle)

    def _makes_stream(self, expr: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and self.side_stream(n) for n in ast.walk(expr))

    def _holders(self) -> tuple[set[str], set[str]]:
        """Module-level names and self attributes that hold streams made by the solution."""
        names, attrs = set(), set()
        module_level = set(map(id, scope_nodes(self.ix.tree)))
        for node in self.ix.nodes:
            if (isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
                    and self._makes_stream(node.value)):
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    if isinstance(t, ast.Name) and id(node) in module_level:
                        names.add(t.id)  # a module global (or class attribute) holding a stream
                        attrs.add(t.id)
                    elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        attrs.add(t.attr)
        return names, attrs

    # ------------------------------------------------------------------------------------- the rule
    def run(self) -> list[Hit]:
        names, attrs = self._holders()
        hits = []
        for scope in [self.ix.tree] + [n for n in self.ix.nodes if isinstance(n, SCOPES)]:
            first_use, synced = None, False
            for node in scope_nodes(scope):
                use = False
                if isinstance(node, ast.Call):
                    fq = self.ix.qualname(node.func) or ""
                    if fq in STREAM_USES:
                        use = True
                    elif scope is not self.ix.tree and self.side_stream(node):
                        use = not self._stored_on_self(node)
                    if fq == "torch.cuda.synchronize" or (isinstance(node.func, ast.Attribute)
                                                         and node.func.attr in SYNC_METHODS):
                        synced = True
                elif (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names
                      and scope is not self.ix.tree):
                    use = True
                elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in attrs
                      and isinstance(node.value, ast.Name) and node.value.id == "self"):
                    use = True
                if use and (first_use is None or node.lineno < first_use.lineno):
                    first_use = node
            if first_use is not None and not synced:
                where = getattr(scope, "name", "module-level code" if scope is self.ix.tree else "a lambda")
                line = first_use.lineno
                hits.append(Hit("unsynced_stream", line, f"{where} runs work on a side CUDA stream at line {line} "
                                "without synchronising back (wait_stream, synchronize or an event wait) in the same "
                                "function; the timer would stop early"))
        return hits

    def _stored_on_self(self, call: ast.Call) -> bool:
        parent = self.ix.parents.get(call)
        while isinstance(parent, (ast.List, ast.Tuple, ast.ListComp, ast.comprehension, ast.GeneratorExp, ast.Call)):
            parent = self.ix.parents.get(parent)
        return isinstance(parent, (ast.Assign, ast.AnnAssign)) and all(
            isinstance(t, ast.Attribute)
            for t in (parent.targets if isinstance(parent, ast.Assign) else [parent.target]))


__all__ = ["CURRENT_STREAM", "STREAM_CTORS", "STREAM_USES", "STREAM_WRAPPERS", "SYNC_METHODS", "StreamRules",
           "scope_nodes"]
