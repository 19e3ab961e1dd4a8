"""A precompiled torch/extension.h for the C++ binding unit that every load_inline build compiles.

That unit (torch's main.cpp: `#include <torch/extension.h>`, the declarations, the pybind11 module) spends
nearly all of its 30-40 s parsing torch's headers. g++ can load them from a .gch instead, if the .gch was
made with the same options; a macro the unit defines before the include (TORCH_EXTENSION_NAME, which names
every build differently) does not matter when the .gch was made without it. So one .gch serves every build
whose binding unit has the same flags apart from that name.

How it fits the box (judging/build/store.py):
- the build worker (in its box) wraps torch's ninja step: it reads the binding unit's flags from the ninja
  file torch wrote, keys them (`key`), and if the builder has a finished .gch for that key it adds
  `-I <that folder>` to the C++ flags, where a copy of extension.h sits beside its .gch (an -I folder is
  searched before torch's -isystem ones). Otherwise it prints `pch-wanted KEY FLAGS` and builds as before;
- the builder (trusted) checks those flags itself (`trusted_flags`, `key`: the line comes from a box whose
  flags may run code), then a maker process of its own (judging/build/pch_maker.py) makes the .gch in a box
  that writes only its folder (judging/build/pch_worker.py) and writes its marker once it is complete. g++ checks
  a .gch's options before using it and reads the header where they do not fit.
Only requests whose own C++ flags are plain options (no paths, no -include, no plugins) and which add no
include folders take part: a .gch bakes in what the files it read said when it was made.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

HEADER = os.path.join("torch", "extension.h")
NAME_FLAG = re.compile(r"^-DTORCH_EXTENSION_NAME=")
# the options a solution may add and still share a .gch: optimisation, standard, warnings, simple macros,
# code generation; nothing that names a file or passes options on to another tool (-Wp, -Wa, -Wl, -Xlinker)
SAFE_FLAG = re.compile(r"^(-O[0-3sgz]?|-O|-std=[\w+]+|-[DU][A-Za-z_]\w*(=[\w.+-]*)?|-w|-W(?![pal],)[\w=+-]+"
                       r"|-g[0-3]?|-pthread|-fopenmp|-f(?!plugin)[\w-]+(=[\w.+-]+)?|-m[\w=.+-]+)$")


def eligible(request: dict[str, Any]) -> bool:
    """Whether a validated build request may use (and ask for) a shared .gch."""
    if request.get("extra_include_paths"):
        return False
    return all(isinstance(f, str) and SAFE_FLAG.match(f.strip()) for f in request.get("extra_cflags") or [])


def binding_flags(ninja_text: str) -> list[str] | None:
    """The C++ units' compile options from a ninja file torch wrote, without the extension's name."""
    values = {}
    for line in ninja_text.splitlines():
        m = re.match(r"^(cflags|post_cflags) = ?(.*)$", line)
        if m:
            values[m.group(1)] = m.group(2).split()
    if "cflags" not in values:
        return None
    return [f for f in values["cflags"] + values.get("post_cflags", []) if not NAME_FLAG.match(f)]


def header_path(flags: list[str]) -> str | None:
    """torch/extension.h in the first -isystem folder of `flags` that has it (where g++ would find it)."""
    for option, folder in zip(flags, flags[1:]):
        if option == "-isystem" and os.path.isfile(os.path.join(folder, HEADER)):
            return os.path.join(folder, HEADER)
    return None


def key(flags: list[str], compiler: str, torch_version: str) -> str | None:
    """What a .gch made with `flags` is filed under; None where no torch/extension.h is on the path."""
    path = header_path(flags)
    if path is None:
        return None
    with open(path, "rb") as f:
        header = hashlib.sha256(f.read()).hexdigest()
    material = {"flags": flags, "compiler": compiler, "torch": torch_version, "header": header}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r + os.sep) for r in (os.path.realpath(x) for x in roots if x))


def _solution_folder(path: str) -> bool:
    """Inside a solution's scratch or output folder (judging/boxing.py names them kj-box-*, kj-out-*)."""
    return any(part.startswith(("kj-box-", "kj-out-")) for part in path.split(os.sep))


def trusted_flags(flags: list[str], header_roots: list[str], writable_roots: list[str]) -> bool:
    """Flags the builder may make a shared .gch with: plain options, and -isystem folders inside
    `header_roots` (torch's, Python's and CUDA's headers) and outside `writable_roots` (a .gch keeps what
    the headers said when it was made, so none may be a folder a build or a solution can write)."""
    expect_folder = False
    for flag in flags:
        if expect_folder:
            path = os.path.realpath(flag)
            if not _inside(path, header_roots) or _inside(path, writable_roots) or _solution_folder(path):
                return False
            expect_folder = False
        elif flag == "-isystem":
            expect_folder = True
        elif not SAFE_FLAG.match(flag):
            return False
    return not expect_folder


def include_dir(pch_root: str, pch_key: str) -> str:
    return os.path.join(pch_root, pch_key, "include")


def marker_path(pch_root: str, pch_key: str) -> str:
    return os.path.join(pch_root, f"{pch_key}.json")


def ready(pch_root: str, pch_key: str) -> str | None:
    """The -I folder of a finished .gch for `pch_key`, or None."""
    try:
        with open(marker_path(pch_root, pch_key)) as f:
            marker = json.load(f)
    except (OSError, ValueError):
        return None
    folder = include_dir(pch_root, pch_key)
    if isinstance(marker, dict) and marker.get("ok") and os.path.isfile(os.path.join(folder, HEADER + ".gch")):
        return folder
    return None


def with_include(ninja_text: str, folder: str) -> str:
    """The ninja file with `-I folder` added to the C++ units' flags (not to nvcc's)."""
    return re.sub(r"^cflags = ?(.*)$", lambda m: f"cflags = -I{folder} {m.group(1)}", ninja_text, count=1,
                  flags=re.MULTILINE)


def wanted_line(pch_key: str, flags: list[str]) -> str:
    return f"pch-wanted {pch_key} {json.dumps(flags)}"


def parse_wanted(output: str) -> tuple[str, list[str]] | None:
    m = re.search(r"^pch-wanted ([0-9a-f]{32}) (\[.*\])$", output, re.MULTILINE)
    if not m:
        return None
    try:
        flags = json.loads(m.group(2))
    except ValueError:
        return None
    return (m.group(1), flags) if all(isinstance(f, str) for f in flags) else None
