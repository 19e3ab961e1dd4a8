"""Rules that hold under every policy: constructs that attack the judge rather than solve the problem.

Timer/sync patches, patches of torch or builtins, tensor subclasses, judge introspection, threads and
processes, side streams without a sync back (stream_rules.py), global flag changes and runtime code
generation (GPU binaries loaded without source included; compiling readable CUDA C++ through CuPy or
cuda.core is normal, like load_inline).  They are checked over the whole file (module level, __init__,
helpers, kernels), not just what forward reaches.
"""

from __future__ import annotations

import ast
import re
import sys

from kerneljudge.analysis.findings import Hit
from kerneljudge.analysis.python_ast import Index, const_str, short
from kerneljudge.analysis.stream_rules import StreamRules

TIMER_NAMES = frozenset({
    "synchronize", "Event", "record", "elapsed_time", "query", "wait", "current_stream", "default_stream",
    "Stream", "set_stream", "stream", "perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic",
    "monotonic_ns", "process_time", "process_time_ns", "thread_time", "do_bench", "do_bench_cudagraph",
    "Timer", "CUDAGraph", "graph", "profiler", "profile", "benchmark",
    # the kernel libraries' timers and synchronisation: CuPy (get_elapsed_time, runtime.event*/stream*),
    # numba (event_elapsed_time), cuda.core (Stream.sync, Event.__sub__ is under `Event`)
    "get_elapsed_time", "event_elapsed_time", "sync", "eventElapsedTime", "eventRecord", "eventQuery",
    "eventSynchronize", "streamSynchronize", "streamWaitEvent", "deviceSynchronize", "ExternalStream",
    "external_stream", "create_stream", "get_current_stream",
})
# any use of these modules runs work elsewhere; of `threading` only what starts a thread (a Lock is fine)
THREAD_ROOTS = ("multiprocessing", "concurrent", "subprocess", "asyncio", "torch.multiprocessing")
THREAD_CREATORS = frozenset({"threading.Thread", "threading.Timer", "_thread.start_new_thread", "_thread.start_new"})
PROCESS_CALLS = frozenset({"os.fork", "os.forkpty", "os.system", "os.popen", "os.posix_spawn", "os.posix_spawnp",
                           "os.startfile", "os.register_at_fork", "pty.spawn", "signal.signal", "signal.alarm",
                           "signal.setitimer"})
INTROSPECTION = frozenset({
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "gc.callbacks", "inspect.stack", "inspect.currentframe",
    "inspect.getouterframes", "inspect.getinnerframes", "inspect.trace", "sys._getframe", "sys._current_frames",
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "threading.settrace", "threading.setprofile",
    "traceback.extract_stack", "traceback.walk_stack", "traceback.print_stack",
})
FRAME_ATTRS = frozenset({"f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame", "cr_frame",
                         "ag_frame", "__globals__", "__closure__"})
NATIVE_ROOTS = ("ctypes", "_ctypes", "cffi")
# the judge talks to the solution's process over inherited pipe descriptors named on its command line;
# nothing a kernel does needs raw descriptor I/O, and with it a solution could forge the judge's replies
DESCRIPTOR_IO = frozenset({"os.read", "os.write", "os.readv", "os.writev", "os.pread", "os.pwrite", "os.preadv",
                           "os.pwritev", "os.fdopen", "os.dup", "os.dup2", "os.sendfile", "os.splice",
                           "os.set_inheritable", "os.set_blocking", "os.get_blocking", "os.lseek", "os.close",
                           "os.closerange", "os.fstat", "os.isatty", "os.ttyname", "os.openpty", "os.pipe",
                           "os.pipe2", "os.mkfifo", "sys.argv", "sys.orig_argv", "socket.fromfd", "socket.socketpair",
                           "io.FileIO", "io.open_code", "_io.FileIO"})
DESCRIPTOR_ROOTS = ("select", "selectors", "fcntl", "termios", "multiprocessing.reduction")
JUDGE_ROOTS = ("__main__", "kerneljudge")
MOCK_ROOTS = ("unittest.mock", "mock")
DYNAMIC = frozenset({"builtins.exec", "builtins.eval", "builtins.compile", "types.FunctionType", "types.CodeType",
                     "marshal.loads", "pickle.loads", "runpy.run_path", "runpy.run_module", "runpy.run_code"})
FLAG_CALLS = frozenset({"torch.set_float32_matmul_precision", "torch.set_flush_denormal", "torch.set_default_dtype",
                        "torch.set_default_device", "torch.set_default_tensor_type",
                        "torch.use_deterministic_algorithms"})
TENSOR_BASES = frozenset({"torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase", "torch.nn.Parameter",
                          "torch.nn.parameter.Parameter", "torch.nn.Buffer", "torch.nn.parameter.Buffer",
                          "torch.nn.parameter.UninitializedParameter"})
MODE_BASES = ("TorchFunctionMode", "TorchDispatchMode", "BaseTorchFunctionMode")
SENSITIVE_ENV = re.compile(r"KERNELJUDGE|JUDGE|SEED|REFERENCE|EXPECTED|ANSWER", re.IGNORECASE)
TF32_ENV = frozenset({"NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"})
# modules a solution may look up in sys.modules: the standard library, torch and the kernel libraries
SAFE_MODULE_ROOTS = frozenset(sys.stdlib_module_names) - {"__main__"} | {
    "torch", "triton", "numpy", "cupy", "cupyx", "cupy_backends", "numba", "cuda", "helion", "cutlass", "nvmath",
    "tilelang", "tvm", "tvm_ffi"}
# GPU binaries loaded without source (a cubin can be lifted from a vendor library): `dynamic_code`, as exec is.
# Compiling readable CUDA C++ at runtime (cupy.RawKernel/RawModule(code=...), cuda.core Program) is normal.
BINARY_LOADERS = frozenset({"from_cubin", "from_ptx", "from_ltoir", "from_fatbin", "from_object", "from_library"})
BINARY_LOADER_ROOTS = ("cuda.core.",)
# library settings that only silence warnings (numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0): not a patch
QUIET_SETTINGS = ("numba.config.",)


def _under(q: str, roots) -> bool:
    return any(q == r or q.startswith(r + ".") for r in roots)


def patch_code(q: str) -> str:
    """Which code a reassignment of dotted name `q` gets."""
    parts = q.split(".")
    if q.startswith("torch.backends.") or (parts[0] == "torch" and "config" in parts):
        return "global_flag"
    if parts[0] == "time" or any(p in TIMER_NAMES for p in parts[1:]):
        return "timer_patch"
    return "torch_internals_patch"


class SafetyRules:
    def __init__(self, index: Index):
        self.ix = index
        self.hits: list[Hit] = []

    def add(self, code: str, node: ast.AST, message: str) -> None:
        line = getattr(node, "lineno", 1)
        self.hits.append(Hit(code, line, message.replace("{line}", str(line))))

    def run(self) -> list[Hit]:
        for node in self.ix.nodes:
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for t in targets:
                    self._target(t, node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node)
            elif isinstance(node, ast.ClassDef):
                self._classdef(node)
            elif (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.name in ("__torch_function__", "__torch_dispatch__")):
                self.add("tensor_subclass", node, f"defines {node.name} at line {{line}}; "
                         "tensor subclasses and dispatch hooks can return lazy or fake outputs")
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.Attribute) and node.attr in FRAME_ATTRS:
                self.add("judge_introspection", node,
                         f"reads frame/function internals `{short(node)}` at line {{line}}, "
                         "which can reach the judge's state")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/proc"):
                self.add("judge_introspection", node, f"refers to {node.value[:40]!r} at line {{line}}; "
                         "reading /proc can reach the judge's process state")
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                self._reference(node)
        self.hits += StreamRules(self.ix).run()
        return self.hits

    # ------------------------------------------------------------------------------ patches & flags
    def _target(self, t: ast.AST, stmt: ast.AST) -> None:
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e, stmt)
            return
        if isinstance(t, ast.Starred):
            return self._target(t.value, stmt)
        if isinstance(t, ast.Attribute):
            q = self.ix.qualname(t)
            if q:
                self._patch(q, t)
        elif isinstance(t, ast.Subscript):
            if (isinstance(t.value, ast.Call)
                    and self.ix.qualname(t.value.func) in ("builtins.globals", "builtins.locals")):
                return  # rebinding the solution's own names
            q = self.ix.qualname(t)
            base = self.ix.qualname(t.value)
            if q:
                self._patch(q, t)
            elif base == "sys.modules" or (isinstance(t.value, ast.Attribute) and t.value.attr == "__dict__"
                                           and self.ix.qualname(t.value.value)):
                self.add("torch_internals_patch", t, f"writes `{short(t)}` at line {{line}}; "
                         "replacing modules or module attributes is not allowed")
            elif base in ("os.environ", "os.environb") and not isinstance(stmt, ast.Delete):
                key = const_str(t.slice)
                if key in TF32_ENV:
                    self.add("global_flag", t, f"sets environment variable {key} at line {{line}}, "
                             "which changes matmul precision (TF32)")

    def _patch(self, q: str, node: ast.AST) -> None:
        if q.startswith(QUIET_SETTINGS) and "WARN" in q.upper():
            return
        code = patch_code(q)
        if code == "global_flag":
            self.add(code, node, f"changes the global flag {q} at line {{line}}; "
                     "numerics and speed flags must stay as the judge set them")
        elif code == "timer_patch":
            self.add(code, node, f"reassigns {q} at line {{line}}; "
                     "patching timers or synchronisation fakes the measured time")
        else:
            self.add(code, node, f"reassigns {q} at line {{line}}; "
                     "patching torch, builtins or other imported modules is not allowed")

    def _setattr_like(self, node: ast.Call, fq: str) -> bool:
        func, args = node.func, node.args
        if fq in ("builtins.setattr", "builtins.delattr") and args:
            target, name = args[0], (const_str(args[1]) if len(args) > 1 else None)
        elif isinstance(func, ast.Attribute) and func.attr in ("__setattr__", "__delattr__"):
            if self.ix.qualname(func.value) in ("builtins.object", "builtins.type") and args:
                target, name = args[0], (const_str(args[1]) if len(args) > 1 else None)
            else:
                target, name = func.value, (const_str(args[0]) if args else None)
        else:
            return False
        base = self.ix.qualname(target)
        if base:
            self._patch(f"{base}.{name if name is not None else '<dynamic>'}", node)
        return True

    # -------------------------------------------------------------------------------------- calls
    def _call(self, node: ast.Call) -> None:
        fq = self.ix.qualname(node.func) or ""
        if self._setattr_like(node, fq):
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault", "pop", "__setitem__", "clear",
                                                             "popitem"):
            owner = self.ix.qualname(func.value)
            if owner == "sys.modules" or (isinstance(func.value, ast.Attribute) and func.value.attr == "__dict__"
                                          and self.ix.qualname(func.value.value)):
                self.add("torch_internals_patch", node, f"modifies `{short(func.value)}` at line {{line}}; "
                         "replacing modules or module attributes is not allowed")
            elif owner in ("os.environ", "os.environb") and func.attr in ("update", "setdefault", "__setitem__"):
                keys = [const_str(a) for a in node.args[:1]] + [k.arg for k in node.keywords]
                if isinstance(node.args[0] if node.args else None, ast.Dict):
                    keys += [const_str(k) for k in node.args[0].keys]
                if any(k in TF32_ENV for k in keys):
                    self.add("global_flag", node, "sets a TF32 override environment variable at line {line}, "
                             "which changes matmul precision")
        if fq == "os.putenv" and node.args and const_str(node.args[0]) in TF32_ENV:
            self.add("global_flag", node, f"sets environment variable {const_str(node.args[0])} at line {{line}}, "
                     "which changes matmul precision (TF32)")
        if fq in FLAG_CALLS or (fq.startswith("torch.backends.") and fq.rsplit(".", 1)[-1].startswith(
                ("enable_", "preferred_", "flags", "allow_", "set_", "sdp_kernel"))):
            self.add("global_flag", node, f"calls {fq} at line {{line}}; "
                     "numerics and speed flags must stay as the judge set them")
        if fq.rsplit(".", 1)[-1] in ("_make_subclass", "_make_wrapper_subclass") or (
                isinstance(func, ast.Attribute) and func.attr in ("as_subclass", "_make_subclass",
                                                                  "_make_wrapper_subclass")):
            self.add("tensor_subclass", node, f"calls {short(func)} at line {{line}}; "
                     "outputs must be plain, materialised tensors")
        if fq.rsplit(".", 1)[-1].startswith("register_module_") and fq.startswith("torch.nn."):
            self.add("torch_internals_patch", node, f"calls {fq} at line {{line}}; "
                     "global module hooks change every torch module in the process")
        if fq.startswith("torch.library.") and any((const_str(a) or "").startswith(("aten", "prims", "prim::"))
                                                   for a in node.args):
            self.add("torch_internals_patch", node, f"registers through {fq} for a built-in torch operator "
                     "at line {line}; overriding torch's own operators is not allowed")
        if fq in ("builtins.__import__", "importlib.import_module", "importlib.__import__") and node.args \
                and self.ix.known_str(node.args[0]) is None:
            self.add("dynamic_code", node, f"imports a module whose name is computed at runtime ({fq}) "
                     "at line {line}; it cannot be checked statically")
        if fq in ("os.getenv", "os.getenvb", "os.environ.get") and node.args:
            self._env_key(node.args[0], node)
        self._binary(node, fq)

    def _binary(self, node: ast.Call, fq: str) -> None:
        """GPU code loaded as a binary (cuda.core ObjectCode.from_cubin, cupy.RawModule(path=...))."""
        name = fq.rsplit(".", 1)[-1]
        cupy_path = fq.split(".")[0] == "cupy" and name == "RawModule" and any(k.arg == "path" for k in node.keywords)
        if (fq.startswith(BINARY_LOADER_ROOTS) and name in BINARY_LOADERS) or cupy_path:
            self.add("dynamic_code", node, f"loads a precompiled GPU binary ({short(node.func)}) at line {{line}}; "
                     "kernels without readable source cannot be checked (compile CUDA C++ source instead)")

    def _env_key(self, key_node: ast.AST, node: ast.AST) -> None:
        key = const_str(key_node)
        if key is None:
            self.add("judge_introspection", node, "reads an environment variable with a computed name at line {line}; "
                     "the environment may hold the judge's seeds")
        elif SENSITIVE_ENV.search(key):
            self.add("judge_introspection", node, f"reads environment variable {key!r} at line {{line}}; "
                     "the judge's settings and seeds are off limits")

    # ------------------------------------------------------------------------------- module usage
    def _classify(self, q: str, node: ast.AST) -> None:
        if (_under(q, THREAD_ROOTS) or q in THREAD_CREATORS or q in PROCESS_CALLS
                or q.startswith(("os.spawn", "os.exec"))):
            self.add("thread", node, f"uses {q} at line {{line}}; "
                     "work started in threads or processes can escape the timed window")
        if q in INTROSPECTION:
            self.add("judge_introspection", node, f"uses {q} at line {{line}}, "
                     "which can reach the judge's frames or objects")
        if q in DESCRIPTOR_IO or _under(q, DESCRIPTOR_ROOTS):
            self.add("judge_introspection", node, f"uses {q} at line {{line}}; "
                     "raw descriptor I/O can reach the judge's private channel")
        if _under(q, NATIVE_ROOTS):
            self.add("judge_introspection", node, f"uses {q} at line {{line}}; "
                     "ctypes/cffi give raw memory and native calls outside the extension build")
        if _under(q, JUDGE_ROOTS):
            self.add("judge_introspection", node, f"uses {q} at line {{line}}; the judge's own modules are off limits")
        if _under(q, MOCK_ROOTS):
            self.add("torch_internals_patch", node, f"uses {q} at line {{line}}; "
                     "mocking replaces functions the judge relies on")
        if q in DYNAMIC:
            self.add("dynamic_code", node, f"uses {q} at line {{line}}; "
                     "code built at runtime cannot be checked statically")

    def _import(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            module = node.module or ""
            names = [module] + [f"{module}.{a.name}" for a in node.names if a.name != "*"]
        for q in names:
            self._classify(q, node)

    def _reference(self, node: ast.AST) -> None:
        parent = self.ix.parents.get(node)
        q = self.ix.qualname(node)
        if not q:
            return
        if q in ("os.environ", "os.environb"):
            self._environ_use(node, parent)
        elif q == "sys.modules":
            self._modules_use(node, parent)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return  # only the longest dotted chain is classified, once
        self._classify(q, node)

    def _environ_use(self, node: ast.AST, parent: ast.AST) -> None:
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Load):
                self._env_key(parent.slice, parent)
        elif isinstance(parent, ast.Attribute):
            if parent.attr in ("items", "keys", "values", "copy", "__iter__", "__repr__", "__str__", "_data"):
                self.add("judge_introspection", node, "enumerates os.environ at line {line}; "
                         "the environment may hold the judge's seeds")
        elif isinstance(parent, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
            pass  # membership of a fixed name is harmless; its key was checked if it was read
        else:
            self.add("judge_introspection", node, "reads the whole os.environ at line {line}; "
                     "the environment may hold the judge's seeds")

    def _modules_use(self, node: ast.AST, parent: ast.AST) -> None:
        key = None
        own = lambda k: isinstance(k, ast.Name) and k.id == "__name__"  # noqa: E731  (the solution's own module)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, ast.Load) or own(parent.slice):
                return  # stores and deletes are reported as patches
            key = const_str(parent.slice)
        elif isinstance(parent, ast.Attribute) and parent.attr in ("update", "setdefault", "pop", "__setitem__",
                                                                   "clear", "popitem"):
            return
        elif isinstance(parent, ast.Attribute) and parent.attr == "get":
            call = self.ix.parents.get(parent)
            if isinstance(call, ast.Call) and call.args and own(call.args[0]):
                return
            key = const_str(call.args[0]) if isinstance(call, ast.Call) and call.args else None
        elif isinstance(parent, ast.Compare):
            return
        if key is None or key.split(".")[0] not in SAFE_MODULE_ROOTS:
            what = f"sys.modules[{key!r}]" if key else "sys.modules"
            self.add("judge_introspection", node, f"looks up {what} at line {{line}}; "
                     "modules outside the standard library and torch may be the judge's")

    # ------------------------------------------------------------------------------------- classes
    def _classdef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            q = self.ix.qualname(base) or ""
            if q in TENSOR_BASES:
                self.add("tensor_subclass", node, f"defines class {node.name} as a subclass of {q} at line {{line}}; "
                         "outputs must be plain, materialised tensors")
            elif q.rsplit(".", 1)[-1] in MODE_BASES:
                self.add("tensor_subclass", node,
                         f"defines class {node.name} as a {q.rsplit('.', 1)[-1]} at line {{line}}; "
                         "dispatch modes intercept every torch call")
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name)
                                                    and t.id in ("__torch_function__", "__torch_dispatch__")
                                                    for t in stmt.targets):
                self.add("tensor_subclass", stmt, f"sets a torch dispatch hook in class {node.name} at line {{line}}; "
                         "outputs must be plain, materialised tensors")
