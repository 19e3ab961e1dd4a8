"""Tokenizer-level scan of the C++/CUDA text a solution embeds (load_inline sources, and any string that
looks like C++).  Comments and string literals are blanked first, so `// torch::matmul` or a printf
format never count; identifiers, `::` chains, template arguments and call parentheses are then read as
tokens.  This is no C++ parser: macros that build names from pieces and code generated at runtime are
left to the runtime defences (the profiler's kernel list).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Optional

from kerneljudge.analysis.cxx_tokens import Source, closure, is_ident
from kerneljudge.analysis.findings import Hit
from kerneljudge.analysis.python_ast import Segments, line_at, segments_text
from kerneljudge.analysis.safety import SENSITIVE_ENV
CXX_MARKERS = ("#include", "__global__", "PYBIND11_MODULE", "TORCH_LIBRARY", "torch::Tensor", "at::Tensor")

# namespaces under at::/torch:: whose functions are library compute
COMPUTE_NS = frozenset({"native", "nn", "functional", "_ops", "blas", "linalg", "fft", "special", "sparse",
                        "cudnn", "miopen", "mkldnn", "nested"})
# at::/torch:: functions that only allocate, reshape, inspect or schedule the solution's own code
ALLOWED = frozenset({
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "from_blob", "tensor", "scalar_tensor", "arange", "linspace", "eye", "rand", "randn", "randint", "rand_like",
    "randn_like", "manual_seed", "dtype", "device", "layout", "requires_grad", "ceil_div", "parallel_for",
    "parallel_reduce", "get_num_threads", "get_thread_num", "in_parallel_region", "globalContext",
    "elementSize", "toString", "typeMetaToScalarType", "scalarTypeToTypeMeta", "device_of", "view_as_real",
    "view_as_complex", "reshape", "flatten", "permute", "transpose", "squeeze", "unsqueeze", "narrow", "select",
    "chunk", "split", "unbind", "as_strided", "broadcast_to", "expand", "clone", "detach", "contiguous",
    "zero_", "fill_", "pad", "constant_pad_nd", "indexing", "infer_size", "make_optional", "nullopt",
})
# methods allowed on a known tensor (and on std::vector<Tensor>)
ALLOWED_METHODS = frozenset({
    "size", "sizes", "stride", "strides", "numel", "dim", "ndimension", "data_ptr", "const_data_ptr",
    "mutable_data_ptr", "data", "accessor", "packed_accessor32", "packed_accessor64", "generic_packed_accessor",
    "options", "scalar_type", "dtype", "device", "is_cuda", "is_cpu", "get_device", "defined", "item", "type",
    "layout", "is_contiguous", "is_floating_point", "element_size", "itemsize", "nbytes", "storage_offset",
    "suggest_memory_format", "requires_grad", "set_requires_grad", "contiguous", "view", "reshape", "view_as",
    "reshape_as", "flatten", "unflatten", "permute", "transpose", "t", "unsqueeze", "squeeze", "expand",
    "expand_as", "narrow", "select", "slice", "index", "chunk", "split", "unbind", "as_strided", "resize_",
    "to", "toType", "cpu", "cuda", "float", "half", "double", "bfloat16", "toBackend", "clone", "copy_",
    "detach", "zero_", "fill_", "new_empty", "new_zeros", "new_ones", "new_full", "vec",
    "sym_sizes", "sym_strides", "unsafeGetTensorImpl", "push_back", "emplace_back", "reserve", "begin", "end",
    "front", "back", "empty", "resize", "clear", "insert", "at", "value", "has_value", "record_stream",
    "is_pinned", "pin_memory", "storage", "scalarType", "is_same", "sym_numel",
})
# calls that are library compute whatever the receiver (a user struct rarely has these names)
STRONG = frozenset({"matmul", "mm", "bmm", "addmm", "addmm_", "baddbmm", "addbmm", "addmv", "mv", "einsum",
                    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                    "convolution", "linear", "softmax", "log_softmax", "logsumexp", "layer_norm", "batch_norm",
                    "group_norm", "instance_norm", "scaled_dot_product_attention", "max_pool2d", "avg_pool2d",
                    "relu", "relu_", "gelu", "sigmoid", "tanh", "cumsum", "matmul_out", "mm_out", "bmm_out"})
# calls whose result is a tensor (to know which `auto` variables hold tensors)
_TENSOR_RESULTS = frozenset({
    "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "from_blob", "tensor",
    "arange", "rand", "randn", "empty_strided", "contiguous", "view", "reshape", "to", "clone", "transpose",
    "permute", "t", "flatten", "unflatten", "unsqueeze", "squeeze", "expand", "narrow", "select", "slice", "index",
    "float", "half", "double", "cuda", "cpu", "detach", "view_as", "expand_as", "as_strided", "new_empty",
    "new_zeros", "new_ones", "new_full", "toType",
}) | STRONG
LIBRARY_PREFIXES = ("cublas", "cudnn", "cufft", "cusparse", "cusolver", "cutensor")
FLAG_CALLS = frozenset({"setAllowTF32CuBLAS", "setAllowTF32CuDNN", "setFloat32MatmulPrecision", "setBenchmarkCuDNN",
                        "setUserEnabledCuDNN", "setDeterministicCuDNN", "setDeterministicAlgorithms",
                        "setAllowFP16ReductionCuBLAS", "setAllowBF16ReductionCuBLAS", "setFlushDenormal",
                        "cublasSetMathMode"})
STREAM_MAKERS = frozenset({"cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority",
                           "getStreamFromPool", "cuStreamCreate", "cudaStreamPerThread"})
STREAM_SYNCS = frozenset({"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaStreamWaitEvent",
                          "cudaEventSynchronize", "synchronize", "device_synchronize", "stream_synchronize",
                          "cuStreamSynchronize", "cuCtxSynchronize", "cuStreamWaitEvent"})
PROCESS_CALLS = frozenset({"fork", "vfork", "popen", "system", "execv", "execve", "execvp", "execl", "execlp",
                           "posix_spawn", "posix_spawnp"})
# persisting-L2 controls (runtime and driver API names): data marked persisting survives an L2 flush (A10)
PERSISTING_L2 = frozenset({
    "cudaLimitPersistingL2CacheSize", "cudaAccessPolicyWindow", "accessPolicyWindow", "cudaAccessPropertyPersisting",
    "cudaStreamAttributeAccessPolicyWindow", "cudaKernelNodeAttributeAccessPolicyWindow",
    "cudaLaunchAttributeAccessPolicyWindow", "cudaCtxResetPersistingL2Cache", "CU_LIMIT_PERSISTING_L2_CACHE_SIZE",
    "CU_ACCESS_PROPERTY_PERSISTING", "CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW",
    "CU_KERNEL_NODE_ATTRIBUTE_ACCESS_POLICY_WINDOW", "CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW", "CUaccessPolicyWindow",
})
INTROSPECTION_CALLS = frozenset({"dlopen", "dlsym", "dlvsym", "dladdr", "ptrace", "process_vm_readv",
                                 "process_vm_writev"})


def looks_like_cxx(text: str) -> bool:
    return any(m in text for m in CXX_MARKERS)



# rules whose construct only matters if forward can reach the C++ function holding it; attacks
# (flags, introspection, operator overrides) count anywhere, since static initialisers run at import
SCOPED = frozenset({"unsynced_stream", "cxx_torch_compute", "thread"})
_INIT_BLOCKS = ("PYBIND11_MODULE", "TORCH_LIBRARY")
_JOINS = frozenset({"join", "pthread_join", "get", "wait"})
_STRICT = "under strict the work must happen in the solution's own kernels"


class Scanner:
    def __init__(self, text: str):
        self.src = Source(text)
        self.found: list[tuple[str, int, str, Optional[str]]] = []  # (code, offset, message, function)

    def add(self, code: str, i: int, message: str) -> None:
        self.found.append((code, self.src.toks[i].start, message, self.src.func_at[i]))

    def _in_reach(self, func: Optional[str], names: frozenset) -> bool:
        """Whether `func` (or, at file scope, the whole source) mentions one of `names`, callees included."""
        if func is None:
            return bool(self.src.idents & names)
        graph = self.src.mentions
        seen, todo = set(), [func]
        while todo:
            f = todo.pop()
            if f not in seen:
                seen.add(f)
                if graph.get(f, set()) & names:
                    return True
                todo.extend(m for m in graph.get(f, ()) if m in graph)
        return False

    def tensor_vars(self) -> set[str]:
        src, names = self.src, set()
        for i, t in enumerate(src.toks):
            if t.text == "Tensor" or (t.text == "vector" and "Tensor" in src.tok(i + 2) + src.tok(i + 4)):
                j = i + 1
                if src.tok(j) == "<":
                    j = src.match(j, "<", ">", limit=60) + 1 or i + 1
                while src.tok(j) in ("&", "&&", "*", "const", ">"):
                    j += 1
                if is_ident(src.tok(j)) and src.tok(j + 1) in ("=", ";", ",", ")", "(", "{", "["):
                    names.add(src.tok(j))
            elif t.text == "auto" and is_ident(src.tok(i + 1)) and src.tok(i + 2) == "=":
                if self._last_call(i + 3) in _TENSOR_RESULTS:  # auto y = x.contiguous(); not x.sizes().vec()
                    names.add(src.tok(i + 1))
        return names

    def _last_call(self, k: int) -> Optional[str]:
        """Name of the last call at bracket depth 0 in the expression starting at token k (up to `;`)."""
        src, depth, last = self.src, 0, None
        while k < len(src.toks) and not (depth == 0 and src.tok(k) in (";", ",", ")")):
            t = src.tok(k)
            if t in ("(", "[", "{"):
                if depth == 0 and is_ident(src.tok(k - 1)):
                    last = src.tok(k - 1)
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            elif t == "<" and depth == 0 and is_ident(src.tok(k - 1)):
                close = src.match(k, "<", ">", limit=60)
                if close > 0 and src.tok(close + 1) == "(":
                    last, k = src.tok(k - 1), close  # data_ptr<float>(...)
                    continue
            k += 1
        return last

    def _chain(self, i: int) -> tuple[list[str], int]:
        """`at::cuda::blas::gemm<float>` -> (["at", "cuda", "blas", "gemm"], index after it)."""
        src, comps, j = self.src, [self.src.tok(i)], i + 1
        while True:
            j2 = j
            if src.tok(j) == "<":
                close = src.match(j, "<", ">", limit=60)
                bad = close < 0 or any(src.tok(k) in (";", "{", "}") for k in range(j, close))
                j2 = j if bad else close + 1
            if src.tok(j2) == "::" and is_ident(src.tok(j2 + 1)):
                comps.append(src.tok(j2 + 1))
                j = j2 + 2
            else:
                return comps, j2

    def _receiver_root(self, k: int) -> Optional[str]:
        src = self.src
        while k >= 0:
            t = src.tok(k)
            if t in (")", "]", ">"):
                opener = {")": "(", "]": "[", ">": "<"}[t]
                k = src.match(k, t, opener, step=-1, limit=200) - 1
                if k < -1:
                    return None
                continue
            if is_ident(t):
                if src.tok(k - 1) in (".", "->"):
                    k -= 2
                    continue
                return t
            return None
        return None

    def run(self) -> "Scanner":
        src = self.src
        tensors, local = self.tensor_vars(), set(src.mentions)
        using_torch = any(src.tok(i) == "using" and src.tok(i + 1) == "namespace" and src.tok(i + 2) in ("at", "torch")
                          for i in range(len(src.toks)))
        for i, t in enumerate(src.toks):
            if not is_ident(t.text) or (src.tok(i - 1) == "::" and is_ident(src.tok(i - 2))):
                continue
            comps, after = self._chain(i)
            self._rules(i, comps, src.tok(after) == "(", src.tok(i - 1) in (".", "->"), tensors, local, using_torch)
        self._literals()
        return self

    def _rules(self, i, comps, call, method, tensors, local, using_torch) -> None:
        name, last = "::".join(comps), comps[-1]
        if comps[0] in ("at", "torch") and len(comps) > 1 and not method:
            middle = comps[1:-1]
            if any(c in COMPUTE_NS for c in comps[1:]):
                self.add("cxx_torch_compute", i,
                         f"embedded C++ uses {name} (torch library compute) at line {{line}}; {_STRICT}")
            elif call and all(c in ("at", "torch") for c in middle) and not (
                    last[:1].isupper() or re.match(r"k[A-Z]", last) or last in ALLOWED
                    or last.startswith(("get", "is", "check", "set", "to"))):
                self.add("cxx_torch_compute", i,
                         f"embedded C++ calls {name} (ATen compute) at line {{line}}; {_STRICT}")
            elif not call and last in STRONG and not middle:
                self.add("cxx_torch_compute", i,
                         f"embedded C++ refers to {name} (ATen compute) at line {{line}}; {_STRICT}")
        elif method and call and len(comps) == 1:
            if last in STRONG or (self._receiver_root(i - 2) in tensors and last not in ALLOWED_METHODS):
                self.add("cxx_torch_compute", i,
                         f"embedded C++ calls the tensor method .{last}() at line {{line}}; {_STRICT}")
        elif call and len(comps) == 1:
            if last.startswith(LIBRARY_PREFIXES):
                self.add("cxx_torch_compute", i,
                         f"embedded C++ calls {last} (vendor library compute) at line {{line}}; {_STRICT}")
            elif using_torch and last in STRONG and last not in local:
                self.add("cxx_torch_compute", i,
                         f"embedded C++ calls {last} from namespace at/torch at line {{line}}; {_STRICT}")
        if call and last in FLAG_CALLS:
            self.add("global_flag", i, f"embedded C++ calls {last} at line {{line}}; "
                     "numerics and speed flags must stay as the judge set them")
        if last in PERSISTING_L2:
            self.add("persisting_l2", i, f"embedded C++ uses {last} at line {{line}}: "
                     "persisting-L2 lines would keep data in L2 across the judge's cache flush "
                     "(the flush resets them; strict refuses them)")
        if call and last in INTROSPECTION_CALLS:
            self.add("judge_introspection", i, f"embedded C++ calls {last} at line {{line}}, "
                     "which can reach or hook the judge's process")
        if call and not method and last in PROCESS_CALLS and len(comps) <= 2:
            self.add("thread", i, f"embedded C++ starts a process ({last}) at line {{line}}; "
                     "work outside the call escapes the timed window")
        if name in ("TORCH_LIBRARY_IMPL", "TORCH_LIBRARY_FRAGMENT") and self.src.tok(i + 2) in ("aten", "prims"):
            self.add("torch_internals_patch", i,
                     f"embedded C++ registers kernels for torch's own {self.src.tok(i + 2)} operators "
                     "at line {line}; overriding torch operators is not allowed")
        if (last == "thread" and comps[:1] == ["std"]) or (call and last in ("pthread_create", "async") and not method):
            func = self.src.func_at[i]
            if "detach" in self.src.idents or "pthread_detach" in self.src.idents or not self._in_reach(func, _JOINS):
                self.add("thread", i, f"embedded C++ starts a thread ({name}) at line {{line}} "
                         "that is not joined before returning; work outside the call escapes the timed window")
        if last in STREAM_MAKERS and not self._in_reach(self.src.func_at[i], STREAM_SYNCS):
            self.add("unsynced_stream", i, f"embedded C++ uses a side stream ({last}) at line {{line}} "
                     "without synchronising back; the timer would stop early")

    def _literals(self) -> None:
        src = self.src
        starts = [t.start for t in src.toks]
        for offset, lit in src.literals:
            i = max(0, bisect_right(starts, offset) - 1)
            before = src.code[max(0, offset - 40):offset].rstrip(' "(')
            if lit.startswith("/proc") or "KERNELJUDGE" in lit.upper():
                self.add("judge_introspection", i, f"embedded C++ refers to {lit[:40]!r} at line {{line}}; "
                         "the judge's process state and settings are off limits")
            if before.endswith("getenv") and SENSITIVE_ENV.search(lit):
                self.add("judge_introspection", i, f"embedded C++ reads environment variable {lit!r} at line {{line}}; "
                         "the judge's settings and seeds are off limits")
            if lit.startswith(("aten::", "prims::")) and before.endswith("impl"):
                self.add("torch_internals_patch", i,
                         f"embedded C++ registers an implementation of {lit[:40]!r} at line {{line}}; "
                         "overriding torch operators is not allowed")


def scan_sources(sources: list[Segments], used: Optional[set[str]]) -> list[Hit]:
    """Scan every embedded source; `used` are the extension functions forward calls (None: unknown).
    Scoped findings in C++ functions forward cannot reach become non-blocking `cxx_unreached` notes."""
    scanned, graph, exports = [], {}, {}
    for segments in sources:
        text, marks = segments_text(segments)
        scanner = Scanner(text).run()
        scanned.append((scanner, text, marks))
        for name, mentions in scanner.src.mentions.items():
            graph.setdefault(name, set()).update(mentions)
        exports.update(scanner.src.exports)
    reach = closure({exports.get(n, n) for n in used}, graph) if used is not None else None
    hits = []
    for scanner, text, marks in scanned:
        for code, offset, message, func in scanner.found:
            line = line_at(text, marks, offset)
            message = message.replace("{line}", str(line))
            if (code in SCOPED and reach is not None and func and func not in reach
                    and not func.startswith(_INIT_BLOCKS)):
                hits.append(Hit("cxx_unreached", line, f"{message} -- noted only: it sits in C++ function {func}, "
                                "which forward does not reach"))
            else:
                hits.append(Hit(code, line, message))
    return hits
