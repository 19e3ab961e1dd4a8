"""Which kernels and ops in a profile are the solution's own, which are library compute, which only
allocate or copy (threat C3: a decoy kernel runs while a library does the real work).

Runs in the judge's (trusted) process on plain data: the solution's source text (never executed) and the
rows `worker/profiling.py` sent back from the solution's child. Every kernel or op gets one class:

  custom            the solution's own kernels: `__global__` functions and other C++ functions in its
                    embedded sources, `@triton.jit` functions, functions `load_inline` exports, ops it
                    registers itself; on the CPU also the time of the call spent outside every torch op
                    (the extension's own loops, the Triton interpreter)
  library_compute   torch and vendor compute: ATen compute ops (aten::mm, aten::add, ...) and everything
                    they launch, cuBLAS/cuBLASLt (nvjet, xmma, sm90_/ampere_ gemm), CUTLASS, cuDNN, cuFFT,
                    flash/memory-efficient attention, at::native kernels that compute, inductor's triton_*
  allowed           allocation and layout: aten::empty/zeros/view/reshape/contiguous/to/copy_/cat/index...,
                    memcpy, memset, fill and copy kernels (the same things strict static analysis allows)
  other             a kernel nothing above recognises (it is never counted as library compute)

A GPU kernel launched while an ATen op runs takes that op's class (kernels inside aten::mm are library
compute whatever their name; a copy kernel under aten::contiguous is allowed); a kernel launched outside
any op is classified by its name. Being wrongly accused is worse than a miss, so only positively
recognised library work counts against a solution, and the custom-share rule is applied only when the
solution's kernel names could be read from its source.

    custom_kernel_names(source) -> frozenset[str]
    classify(profile, custom) -> Summary        (profile: the child's plain-data reply)
    decide(summary) -> str | None                a reason to reject under strict, or None
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from kerneljudge.core import pyast
from kerneljudge.analysis.backend import find_builds, jit_functions
from kerneljudge.analysis.cxx_scan import looks_like_cxx
from kerneljudge.analysis.cxx_tokens import Source, is_ident
from kerneljudge.analysis.python_ast import Index, segments_text

CLASSES = ("custom", "library_compute", "allowed", "other")

# Strict rejects when library compute carries more than this share of the solution's device time
# (allocation and copies included in the total)...
LIBRARY_SHARE_LIMIT = 0.10
# ...or when library compute alone took at least this fraction of the time, or made at least this fraction
# of the calls, that the reference's own library compute took and made under the same profiler (or, when that
# is unknown, reached this fraction of the reference's median time): a slow decoy, or Python and interpreter
# overhead, cannot dilute it, and counting calls keeps the rule steady where tiny ops make times noisy...
LIBRARY_VS_REFERENCE = 0.50
# ...or when its own kernels carry less than this share of the device time spent on anything but
# allocation and copies (GPU only, and only when the solution's kernel names are known).
CUSTOM_SHARE_MIN = 0.50
# library time below this many microseconds is noise, never a reason to reject
LIBRARY_MIN_US = 2.0
TOP_ROWS = 20          # rows kept in Verdict.profile
NAME_CHARS = 120       # characters of a kernel name kept in Verdict.profile
REMAINDER_NAME = "(solution code outside torch ops)"
LEFT_OUT_NAME = "(small rows the profile left out)"

# op namespaces that belong to torch itself
TORCH_OP_NAMESPACES = frozenset({"aten", "prims", "prim", "quantized", "_quantized", "mkldnn", "torchvision",
                                 "_c10d_functional", "c10d", "inductor", "triton", "torch_tensorrt"})
# ATen ops that only allocate, view, reshape, cast, copy, fill, index or draw random numbers
ALLOWED_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor",
    "lift", "lift_fresh", "lift_fresh_copy", "zero_", "fill_", "copy_", "_copy_from", "_copy_from_and_resize",
    "clone", "contiguous", "to", "_to_copy", "type_as", "view", "_unsafe_view", "view_as", "reshape",
    "_reshape_alias", "reshape_as", "flatten", "unflatten", "ravel", "as_strided", "as_strided_", "expand",
    "expand_as", "broadcast_to", "broadcast_tensors", "permute", "movedim", "moveaxis", "transpose",
    "transpose_", "swapaxes", "swapdims", "t", "t_", "adjoint", "numpy_T", "mT", "mH", "squeeze", "squeeze_",
    "unsqueeze", "unsqueeze_", "narrow", "slice", "select", "split", "split_with_sizes", "tensor_split", "chunk",
    "unbind", "unfold", "diagonal", "detach", "detach_", "alias", "view_as_real", "view_as_complex",
    "resolve_conj", "resolve_neg", "_conj", "conj", "_neg_view", "resize_", "resize_as_", "set_", "item",
    "_local_scalar_dense", "is_nonzero", "result_type", "size", "stride", "numel", "dim", "sym_size",
    "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous", "is_same_size",
    "_has_compatible_shallow_copy_type", "record_stream", "pin_memory", "_pin_memory", "is_pinned", "arange",
    "linspace", "logspace", "range", "eye", "rand", "rand_like", "randn", "randn_like", "randint", "randint_like",
    "randperm", "normal", "normal_", "uniform_", "random_", "exponential_", "cauchy_", "log_normal_",
    "geometric_", "pad", "constant_pad_nd", "cat", "_cat", "concat", "concatenate", "stack", "hstack", "vstack",
    "index", "_unsafe_index", "index_put_", "_index_put_impl_", "dropout", "feature_dropout", "alpha_dropout",
    "_assert_async", "_assert_scalar", "detach_copy", "_efficientzerotensor", "align_to", "refine_names",
    "rename", "_nested_tensor_from_mask_left_aligned", "_version", "output_nr", "requires_grad_",
    "hsplit", "vsplit", "dsplit", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "atleast_1d",
    "atleast_2d", "atleast_3d", "is_floating_point", "is_complex", "is_signed", "can_cast", "promote_types",
    "masked_fill_", "new_tensor", "_share_memory_", "is_set_to", "copy", "_assert_tensor_metadata",
    "expand_copy", "permute_copy", "view_copy", "slice_copy", "select_copy", "transpose_copy", "unsqueeze_copy",
    "squeeze_copy", "alias_copy", "as_strided_copy", "t_copy", "diagonal_copy", "unbind_copy", "split_copy",
    "_reshape_copy", "fill_diagonal_", "empty_pinned", "_empty_affine_quantized",
})
# CPU annotations torch puts around compiled code (torch.compile / inductor): library compute
COMPILED_MARKERS = ("Torch-Compiled Region", "CompiledFxGraph", "CompiledFunction", "TorchDynamo",
                    "## Call CompiledFxGraph", "inductor")
# kernels of torch's own at::native machinery and bundled libraries; names with these are never custom
TORCH_KERNEL = re.compile(r"(?<![\w])(?:at|c10|at_cuda_detail|pytorch_flash|pytorch_fmha)::|fmha_cutlass")
# torch kernels that only copy, fill, concatenate, index or draw random numbers
ALLOWED_KERNEL = re.compile(
    r"copy|Copy|FillFunctor|fill_kernel|fill_|zero|CatArray|cat_|index_elementwise|index_put|indexing_backward|"
    r"arange|range_|linspace|logspace|elementwise_kernel_with_index|distribution|philox|random|normal|uniform|"
    r"bernoulli|pad|contiguous|clone|transpose|permute", re.IGNORECASE)
# vendor library kernels (cuBLAS, cuBLASLt, CUTLASS, cuDNN, cuFFT, cuSPARSE, ...) and inductor kernels
LIBRARY_KERNEL = re.compile(
    r"cublas|nvjet|xmma|cutlass|cudnn|cufft|regular_fft|vector_fft|cusparse|cusolver|cutensor|magma|"
    r"(?:^|[^a-z])(?:sm\d\d|ampere|volta|turing|hopper|maxwell|ada|blackwell)_[a-z0-9]*(?:gemm|conv|fprop|dgrad|"
    r"wgrad|sgemm|hgemm|s\d+gemm)|gemv2[TN]_kernel|gemvNSP|gemmSN|gemmk1_kernel|splitKreduce_kernel|"
    r"implicit_convolve_sgemm|fft[12]d_[rc]2[rc]|triton_(?:poi|red|per|tem|for|mm|bmm)_")
# header-only template libraries a solution may compile into its own kernels
# (name -> (how its kernels are named, how a source shows it uses the library))
HEADER_LIBRARIES = {
    "cub": (re.compile(r"(?<![\w])cub::"), re.compile(r"(?<![\w])cub::|<cub/")),
    "thrust": (re.compile(r"(?<![\w])thrust::"), re.compile(r"(?<![\w])thrust::|<thrust/")),
    "cutlass": (re.compile(r"(?<![\w])(?:cutlass|cute)::|cutlass_"),
                re.compile(r"(?<![\w])(?:cutlass|cute)::|<cutlass/|<cute/")),
}


# ----------------------------------------------------------------------------------- custom names
def custom_kernel_names(source: str) -> frozenset[str]:
    """Names of the solution's own kernels and functions, from its source text (never executed)."""
    try:
        tree = pyast.parse(source)
        index = Index(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names: set[str] = set()
    try:
        names.update(jit_functions(index))
        texts: list[str] = []
        for build in find_builds(index):
            for segments in build.sources:
                texts.append(segments_text(segments)[0])
            for kw in build.node.keywords:
                if kw.arg == "functions":
                    listed = index.strings(kw.value) or []
                    names.update(t.strip() for seg, _ in listed for t in seg.replace(",", "\n").splitlines()
                                 if is_ident(t.strip()))
        texts += [n.value for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and looks_like_cxx(n.value)]
        for text in texts:
            names |= cxx_function_names(text)
    except RecursionError:
        pass
    return frozenset(n for n in names if n and len(n) <= 200)


def cxx_function_names(text: str) -> set[str]:
    """`__global__` kernels, functions defined at top level, names bound by m.def/TORCH_LIBRARY."""
    try:
        src = Source(text)
    except RecursionError:
        return set()
    names = set(src.mentions) | set(src.exports) | set(src.exports.values())
    toks = src.toks
    for i, t in enumerate(toks):
        if t.text == "__global__":
            for j in range(i + 1, min(i + 40, len(toks) - 1)):
                word = toks[j].text
                if word in ("{", ";"):
                    break
                if is_ident(word) and toks[j + 1].text in ("(", "<") and word not in (
                        "__launch_bounds__", "__attribute__", "alignas", "__declspec", "void", "template"):
                    if toks[j + 1].text == "(" or word not in ("static", "inline"):
                        names.add(word)
                        break
        elif t.text in ("TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT") and i + 2 < len(toks) and is_ident(toks[i + 2].text):
            names.add(toks[i + 2].text)  # the solution's own op namespace
    return {n for n in names if n not in ("PYBIND11_MODULE", "TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT")}


def header_libraries(source: str) -> frozenset[str]:
    """Template libraries (CUB, Thrust, CUTLASS) the solution's own sources use."""
    return frozenset(lib for lib, (_, used) in HEADER_LIBRARIES.items() if used.search(source))


# ------------------------------------------------------------------------------------- names
def base_name(kernel: str) -> str:
    """`void ns::my_kernel<float, 4>(float const*, ...)` -> `my_kernel`; Triton names pass unchanged."""
    s = kernel.strip()
    for prefix in ("void ", "static ", "__global__ "):
        if s.startswith(prefix):
            s = s[len(prefix):]
    depth, cut = 0, len(s)
    for i, c in enumerate(s):  # the argument list starts at the first '(' outside template brackets
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif c == "(" and depth == 0 and i > 0:
            cut = i
            break
    s = s[:cut]
    out, depth = [], 0
    for c in s:  # drop template arguments
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    s = "".join(out).strip()
    return s.rsplit("::", 1)[-1].strip() if "::" in s else s


_TRITON_SUFFIX = re.compile(r"^(?:_[0-9][0-9a-z]*)+$")  # older Triton appends signature tags (_0d1d2d3de)


def is_custom(kernel: str, custom: frozenset[str]) -> bool:
    if not custom:
        return False
    name = base_name(kernel)
    if name in custom:
        return True
    return any(name.startswith(c) and _TRITON_SUFFIX.match(name[len(c):]) for c in custom if len(c) >= 3)


def op_class(name: str) -> str:
    """Class of a CPU-side op or annotation name (`aten::mm`, `myops::scale_relu`, a record_function)."""
    if any(m in name for m in COMPILED_MARKERS):
        return "library_compute"
    if "::" in name:
        ns, op = name.split("::", 1)
        if ns in TORCH_OP_NAMESPACES:
            op = op.split(".", 1)[0]  # overload names: aten::add.Tensor
            if ns in ("aten", "prims", "prim") and op in ALLOWED_OPS:
                return "allowed"
            return "library_compute"
    return "custom"  # the solution's own op or annotation: its time is its own code


def kernel_class(kernel: str, chain: list[str], custom: frozenset[str], libraries: frozenset[str] = frozenset(),
                 kind: str = "kernel") -> str:
    """Class of a device activity (kernel, memcpy, memset) launched under the ops in `chain` (outermost first)."""
    if chain:
        if op_class(chain[0]) == "allowed":
            return "allowed"
        if any(op_class(c) == "library_compute" for c in chain):
            return "library_compute"
    if kind in ("memcpy", "memset") or kernel.startswith(("Memcpy", "Memset", "memcpy", "memset")):
        return "allowed"
    if TORCH_KERNEL.search(kernel):
        return "allowed" if ALLOWED_KERNEL.search(kernel) else "library_compute"
    if is_custom(kernel, custom):
        return "custom"
    for lib in libraries:  # the solution compiled CUB/Thrust/CUTLASS templates into its own kernels
        if HEADER_LIBRARIES[lib][0].search(kernel):
            return "custom"
    return "library_compute" if LIBRARY_KERNEL.search(kernel) else "other"


def cpu_op_class(name: str, chain: list[str]) -> str:
    """Class of a CPU op row (CPU runs): everything inside an allowed torch op is allowed; anything inside
    (or being) a library op is library compute; the solution's own ops and annotations are custom."""
    if chain and op_class(chain[0]) == "allowed":
        return "allowed"
    if any(op_class(c) == "library_compute" for c in chain + [name]):
        return "library_compute"
    return op_class(name)


# ---------------------------------------------------------------------------------------- summary
@dataclass
class Row:
    name: str
    cls: str
    us: float
    calls: int


@dataclass
class Summary:
    device: str                      # "cuda": device time of kernels; "cpu": CPU time of the call
    rows: list[Row] = field(default_factory=list)
    by_class: dict[str, float] = field(default_factory=lambda: {c: 0.0 for c in CLASSES})
    total_us: float = 0.0
    custom_known: bool = False       # the solution's kernel names could be read from its source
    dropped: int = 0                 # rows the child left out (beyond its bound)
    library_calls: int = 0           # library compute ops called by the solution (outermost) / kernels launched
    reference_library_us: Optional[float] = None   # the reference's library compute, same profiler
    reference_library_calls: Optional[int] = None

    def share(self, cls: str) -> float:
        return self.by_class.get(cls, 0.0) / self.total_us if self.total_us > 0 else 0.0

    def custom_share_of_work(self) -> float:
        """The solution's own share of device time spent on anything but allocation and copies."""
        work = self.by_class["custom"] + self.by_class["library_compute"] + self.by_class["other"]
        return self.by_class["custom"] / work if work > 0 else 1.0

    def top(self, cls: str | None = None, n: int = 3) -> list[Row]:
        return [r for r in self.rows if cls is None or r.cls == cls][:n]

    def to_rows(self, limit: int = TOP_ROWS) -> list[dict[str, Any]]:
        """Bounded plain data for Verdict.profile: the top rows by time, then one totals row."""
        out = [{"name": _display(r.name), "class": r.cls, "device_us": round(r.us, 3), "calls": r.calls,
                "share": round(r.us / self.total_us, 4) if self.total_us > 0 else None} for r in self.rows[:limit]]
        out.append({"name": "(total)", "class": "total", "device_us": round(self.total_us, 3),
                    "calls": sum(r.calls for r in self.rows), "share": 1.0, "clock": self.device,
                    **{f"{c}_share": round(self.share(c), 4) for c in CLASSES},
                    "custom_names_known": self.custom_known,
                    "rows_left_out": max(0, len(self.rows) - limit) + self.dropped,
                    "library_calls": self.library_calls, "reference_library_calls": self.reference_library_calls,
                    "reference_library_us": (None if self.reference_library_us is None
                                             else round(self.reference_library_us, 3))})
        return out


class ProfileError(ValueError):
    """The child's profile reply is not usable."""


def _number(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        raise ProfileError(f"not a time: {x!r}")
    return float(x)


def _display(name: str) -> str:
    s = " ".join(name.split())
    if s.startswith("void "):
        s = s[5:]
    return s if len(s) <= NAME_CHARS else s[: NAME_CHARS - 3] + "..."


def classify(profile: Mapping[str, Any], custom: Iterable[str] = (), libraries: Iterable[str] = ()) -> Summary:
    """Classify the rows of a child's profile (see worker/profiling.py for the format). Raises ProfileError
    when the data is malformed (it came from the solution's process)."""
    if not isinstance(profile, Mapping):
        raise ProfileError("the profile is not an object")
    device = profile.get("device")
    if device not in ("cuda", "cpu"):
        raise ProfileError(f"unknown profile device {device!r}")
    rows = profile.get("rows")
    if not isinstance(rows, list):
        raise ProfileError("the profile has no rows")
    custom_set, libs = frozenset(custom), frozenset(libraries) & frozenset(HEADER_LIBRARIES)
    summary = Summary(device, custom_known=bool(custom_set))
    merged: dict[tuple[str, str], Row] = {}
    op_us = 0.0
    for raw in rows:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
            raise ProfileError("a profile row is malformed")
        name = raw["name"][:2000]
        chain = raw.get("chain") or []
        if not isinstance(chain, list) or not all(isinstance(c, str) for c in chain):
            raise ProfileError("a profile row has a malformed op chain")
        us = _number(raw.get("us", 0.0))
        calls = raw.get("calls", 1)
        calls = calls if isinstance(calls, int) and not isinstance(calls, bool) and calls >= 0 else 1
        kind = str(raw.get("kind", "kernel"))
        if device == "cuda":
            cls = kernel_class(name, chain, custom_set, libs, kind)
            summary.library_calls += calls if cls == "library_compute" else 0
        else:
            cls = cpu_op_class(name, chain)
            op_us += us
            outermost = not any(op_class(c) == "library_compute" for c in chain)
            summary.library_calls += calls if cls == "library_compute" and outermost else 0
        row = merged.setdefault((name, cls), Row(name, cls, 0.0, 0))
        row.us += us
        row.calls += calls
    left_out_us = _number(profile.get("left_out_us", 0.0))
    if left_out_us > 0:  # rows the child did not send: unknown, so never counted against the solution
        merged[(LEFT_OUT_NAME, "other")] = Row(LEFT_OUT_NAME, "other", left_out_us, 0)
    if device == "cpu":
        # the call's wall time not spent inside any torch op is the solution's own code
        wall = _number(profile.get("wall_us", 0.0))
        all_ops_us = max(op_us + left_out_us, _number(profile.get("op_us", 0.0)))
        remainder = max(0.0, wall - all_ops_us)
        if remainder > 0:
            merged[(REMAINDER_NAME, "custom")] = Row(REMAINDER_NAME, "custom", remainder, 1)
    summary.rows = sorted(merged.values(), key=lambda r: -r.us)
    for r in summary.rows:
        summary.by_class[r.cls] += r.us
    summary.total_us = sum(summary.by_class.values())
    dropped = profile.get("rows_left_out", 0)
    summary.dropped = dropped if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0 else 0
    return summary


def median_run(summaries: list[Summary]) -> Summary:
    """Of several profiled calls, the one with the median library compute time (noise in both directions)."""
    ordered = sorted(summaries, key=lambda s: s.by_class["library_compute"])
    return ordered[len(ordered) // 2]


def decide(summary: Summary, ref_ms: float | None = None) -> Optional[str]:
    """Why strict must reject this profile, or None. Conservative: only positively recognised library
    compute counts against the solution. `ref_ms`: the reference's median time at the same shape, used when
    `summary.reference_library_us` (the reference profiled the same way) is unknown."""
    if summary.total_us <= 0:
        return None
    library_us = summary.by_class["library_compute"]
    where = "device time" if summary.device == "cuda" else "time of the call"
    top = ", ".join(f"{_display(r.name)[:70]} ({_time(r.us)})" for r in summary.top("library_compute"))
    rule = "Under strict the work must happen in the solution's own kernels"
    if library_us >= LIBRARY_MIN_US and summary.share("library_compute") > LIBRARY_SHARE_LIMIT:
        return (f"library compute carries {100 * summary.share('library_compute'):.0f}% of the solution's {where} "
                f"(more than {100 * LIBRARY_SHARE_LIMIT:.0f}% is not allowed under strict): {top}; "
                f"the solution's own kernels carry {100 * summary.share('custom'):.0f}%. {rule}")
    reference_us, reference_calls = summary.reference_library_us, summary.reference_library_calls
    if library_us >= LIBRARY_MIN_US and reference_us is not None and reference_us >= LIBRARY_MIN_US:
        if library_us >= LIBRARY_VS_REFERENCE * reference_us:
            return (f"library compute took {_time(library_us)} of one call, {100 * library_us / reference_us:.0f}% "
                    f"of what the PyTorch reference's own library compute takes ({_time(reference_us)}): {top}. {rule}")
        if reference_calls and summary.library_calls >= LIBRARY_VS_REFERENCE * reference_calls:
            what = "kernels" if summary.device == "cuda" else "ops"
            return (f"the solution ran {summary.library_calls} library compute {what} in one call, where the PyTorch "
                    f"reference runs {reference_calls}: {top}. {rule}")
    elif library_us >= LIBRARY_MIN_US and isinstance(ref_ms, (int, float)) and ref_ms > 0 \
            and library_us >= LIBRARY_VS_REFERENCE * ref_ms * 1000:
        return (f"library compute took {_time(library_us)} of one call, {library_us / (ref_ms * 10):.0f}% of the "
                f"PyTorch reference's whole time ({ref_ms:.3g} ms): {top}. {rule}")
    if summary.custom_known and summary.device == "cuda" and library_us + summary.by_class["other"] >= LIBRARY_MIN_US \
            and summary.custom_share_of_work() < CUSTOM_SHARE_MIN:
        others = ", ".join(f"{_display(r.name)[:70]} ({_time(r.us)})"
                           for r in (summary.top("library_compute") + summary.top("other"))[:3])
        return (f"the solution's own kernels carry only {100 * summary.custom_share_of_work():.0f}% of the device "
                f"time spent on computation (at least {100 * CUSTOM_SHARE_MIN:.0f}% is required under strict); "
                f"the rest went to kernels that are not the solution's: {others}")
    return None


def _time(us: float) -> str:
    return f"{us / 1000:.3g} ms" if us >= 1000 else f"{us:.3g} us"


__all__ = ["CLASSES", "LIBRARY_SHARE_LIMIT", "LIBRARY_VS_REFERENCE", "CUSTOM_SHARE_MIN", "ProfileError", "Summary",
           "base_name", "classify", "cpu_op_class", "custom_kernel_names", "decide", "header_libraries", "kernel_class",
           "median_run", "op_class"]
