"""Which module-level constants of a problem are sizes the judge may change, and which must stay.

Rules, first match wins (they read the constant's name AND its value AND how the file uses it):

 1. not an integer (or a tuple/list of integers): kept.
 1b. read by the problem's own class Model as a module global (VanillaRNN's `self.hidden = torch.randn(
    (batch_size, hidden_size))`), or an input of such a constant: kept. A solution that copies the problem copies
    the constant too, and the judge changes only the problem's, so a held-out shape would fail honest code.
 2. computed from other constants (`hidden = 4 * n_embd`): `dependent`, recomputed from its inputs, so
    relations written in the file survive.
 3. read nowhere in the file: kept (changing it changes nothing).
 4. passed as a `dim=` / `axis=` keyword anywhere: kept (an axis).
 5. named like an axis (`dim`, `axis`, `reduce_dim`, `*_axis`, ...) with every value in [-5, 5]: kept
    (`dim = 1` is an axis; `dim = 393216` is a size).
 6. named like structure: kernel_size, stride, padding, dilation, groups, heads, layers, experts, top-k,
    window, block/chunk, scale/factor/ratio, eps, dropout, seed, bins, bits, iterations, and a lowercase
    `k` (top-k; upstream writes a matmul's inner size as `K`): kept. `depth` is structure below 16 (a layer
    count) and a size from 16 up (a Conv3d depth), as is an uppercase `K` below 16.
 7. every value at most 1 (a flag, an axis, a unit size): kept.
 8. below 8 and not batch-like (in_channels = 3, num_layers = 6 under another name): kept, a small count
    whose change may change what the problem computes.
 9. otherwise a size: `batch` when the name says batch or rows (`batch_size`, `bs`, `B`, `num_samples`,
    `num_tokens`, `rows`), else `feature`.

Tuples and lists (`input_shape = (32768,)`, `layer_sizes = [1024, 512]`) follow the rules as one constant;
inside a size, elements at most 1 or below 8 stay as they are.

A width that is a multiple of a per-head or per-group size (`d_model = 1024`, `head_size = 64`) becomes
dependent on it (`d_model = 16 * head_size`), so the two stay consistent.

A size stays divisible by a kept constant of 2 or more that divides it and whose name says it partitions
that kind of size (PARTITIONS): embed_dim % num_heads, channels % num_groups and seq_len % chunk_size hold
in every variant; a batch size or a head_dim that happens to be a multiple of the head count does not.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kerneljudge.shapes.scan import Constant, Scan, is_int

BATCH = "batch"
FEATURE = "feature"
KEEP = "keep"
DEPENDENT = "dependent"

AXIS_NAME = re.compile(r"^(dim|axis|axes|dims|reduce_?dim|reduction_?dim|reduce_?axis|\w+_axis|"
                       r"(softmax|norm|concat|cat|split|scan|cum|cumsum|cumprod|sum|mean|max|min|arg\w*)_dim)$")
STRUCTURE_TOKENS = frozenset({
    "kernel", "ksize", "stride", "strides", "padding", "pad", "dilation", "groups", "group", "heads",
    "experts", "topk", "top", "window", "block", "chunk", "scale", "factor", "ratio",
    "expansion", "reduction", "eps", "epsilon", "momentum", "dropout", "pdrop", "prob", "seed", "bins",
    "bits", "iters", "iterations", "steps", "order", "degree", "split", "splits", "tile", "levels", "stages",
    "repeats", "shift", "offset", "causal", "bias", "affine",
})
STRUCTURE_NAMES = re.compile(r"^(p|k|n_?layers?|num_?layers?|layers|\w+_layers|n_?head|num_?head)$")
SMALL_STRUCTURE_TOKENS = frozenset({"depth", "k"})   # structure below 16, size from 16 up
# Which kept constants partition which sizes: {words in the partitioning constant's name: words in the
# size's name}. embed_dim % num_heads and channels % num_groups are kept; batch, sequence and per-head sizes
# are not tied to heads or groups, so they do not inherit a divisor by coincidence.
_WIDTHS = frozenset({"embed", "embedding", "embd", "emb", "hidden", "model", "dim", "features", "channels",
                     "channel", "planes", "filters"})
PARTITIONS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset({"heads", "head"}), _WIDTHS),
    (frozenset({"groups", "group"}), _WIDTHS),
    (frozenset({"factor"}), frozenset({"channels", "channel"})),
    (frozenset({"block", "chunk", "tile", "split", "splits"}),
     frozenset({"seq", "len", "length", "sequence", "tokens", "time"})),
)
PER_PART = frozenset({"head", "heads", "group", "groups", "block", "chunk"})   # head_dim, group_size: per part
PER_HEAD_OR_GROUP = frozenset({"head", "heads", "group", "groups"})
BATCH_NAMES = re.compile(r"^(batch|batch_?size|bs|b|n_?batch|num_?batch(es)?|num_?samples|n_?samples|samples|"
                         r"tokens|num_?tokens|n_?tokens|rows|num_?rows|n_?rows|\w*_batch|batch_\w+)$")
SMALL_COUNT = 8


@dataclass(frozen=True)
class Role:
    name: str
    kind: str                    # batch | feature | keep | dependent
    why: str
    divisor: int = 1             # every new value must be a multiple of this (lcm of partitioning constants)
    expr: str = ""               # dependent on a per-part size (d_model = 16 * head_size): how to recompute
    deps: tuple[str, ...] = ()


def tokens(name: str) -> list[str]:
    """`reduceDim2` -> ['reduce', 'dim']: lowercase words, digits dropped."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    return [t for t in re.sub(r"\d+", "", spaced.lower()).split("_") if t]


def is_batch_name(name: str) -> bool:
    return bool(BATCH_NAMES.match(name.lower())) or "batch" in tokens(name)


def classify(scan: Scan) -> dict[str, Role]:
    roles: dict[str, Role] = {}
    pinned = _read_by_model(scan)
    for name, const in scan.constants.items():
        roles[name] = Role(name, KEEP, "read by the problem's Model itself (a module global its solutions copy)") \
            if name in pinned else _role(const, scan)
    for name, role in list(roles.items()):
        if role.kind in (BATCH, FEATURE):
            roles[name] = _per_part(scan.constants[name], roles, scan) or \
                Role(name, role.kind, role.why, _divisor(scan.constants[name], roles, scan))
    return roles


def _read_by_model(scan: Scan) -> set[str]:
    """The constants class Model reads as globals, and every constant they are computed from."""
    pinned: set[str] = set()
    todo = [name for name in scan.model_reads if name in scan.constants]
    while todo:
        name = todo.pop()
        if name not in pinned:
            pinned.add(name)
            todo += [d for d in scan.constants[name].deps if d in scan.constants]
    return pinned


def _per_part(const: Constant, roles: dict[str, Role], scan: Scan) -> Role | None:
    """A width that is a multiple of a per-head or per-group size (d_model = 16 x head_size) moves with it."""
    if not is_int(const.value) or is_batch_name(const.name) or not set(tokens(const.name)) & _WIDTHS \
            or set(tokens(const.name)) & PER_PART:
        return None
    for other, role in roles.items():
        value = scan.constants[other].value
        if role.kind == FEATURE and is_int(value) and set(tokens(other)) & PER_HEAD_OR_GROUP \
                and const.value % value == 0 and const.value // value >= 2:
            times = const.value // value
            return Role(const.name, DEPENDENT, f"{times} x {other}", expr=f"{other} * {times}", deps=(other,))
    return None


def _role(const: Constant, scan: Scan) -> Role:
    name, values = const.name, const.elements
    words = set(tokens(name))
    lowered = name.lower()
    if const.deps:
        return Role(name, DEPENDENT, f"computed from {', '.join(const.deps)} ({const.expr})")
    if name not in scan.read:
        return Role(name, KEEP, "read nowhere in the file")
    if name in scan.axis_uses:
        return Role(name, KEEP, "passed as a dim=/axis= argument (an axis)")
    if AXIS_NAME.match(lowered) and all(-5 <= v <= 5 for v in values):
        return Role(name, KEEP, "named like an axis, with an axis-sized value")
    structure = sorted(words & STRUCTURE_TOKENS) or (["name"] if STRUCTURE_NAMES.match(name) else [])
    if structure:
        return Role(name, KEEP, f"structure ({'/'.join(structure) if structure != ['name'] else name})")
    if words & SMALL_STRUCTURE_TOKENS and all(v < 16 for v in values):
        return Role(name, KEEP, "a small structural count (depth/k below 16)")
    if all(v <= 1 for v in values):
        return Role(name, KEEP, "at most 1 (a flag, an axis or a unit size)")
    batch = is_batch_name(name)
    if not batch and all(v < SMALL_COUNT for v in values):
        return Role(name, KEEP, f"a small count (below {SMALL_COUNT})")
    return Role(name, BATCH if batch else FEATURE, "batch-like size" if batch else "size")


def _divisor(const: Constant, roles: dict[str, Role], scan: Scan) -> int:
    """lcm of the kept constants that partition this size (PARTITIONS) and divide every changeable element."""
    words = set(tokens(const.name))
    if is_batch_name(const.name) or words & PER_PART:
        return 1
    divisor = 1
    elements = [v for v in const.elements if changeable(v, False)]
    for other, role in roles.items():
        value = scan.constants[other].value
        if role.kind != KEEP or not is_int(value) or value < 2:
            continue
        other_words = set(tokens(other))
        if not any(other_words & part and words & sized for part, sized in PARTITIONS):
            continue
        if elements and all(v % value == 0 for v in elements):
            divisor = math.lcm(divisor, value)
    return divisor


def changeable(value: int, batch: bool) -> bool:
    """Elements of a size that may change: above 1, and from SMALL_COUNT up unless batch-like."""
    return value > 1 and (batch or value >= SMALL_COUNT)


def sizes(roles: dict[str, Role]) -> list[str]:
    return [n for n, r in roles.items() if r.kind in (BATCH, FEATURE)]


def describe(roles: dict[str, Role], scan: Scan) -> str:
    """One line: which constants are sizes and which stay, with why (for plan notes)."""
    parts = []
    for name, role in roles.items():
        value = scan.constants[name].value
        extra = f", multiple of {role.divisor}" if role.divisor > 1 else ""
        parts.append(f"{name}={value} {role.kind} ({role.why}{extra})")
    return "; ".join(parts)
