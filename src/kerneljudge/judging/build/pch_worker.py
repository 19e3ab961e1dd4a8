"""Make the shared precompiled torch/extension.h for one set of binding-unit flags (judging/build/pch.py).

    python -m kerneljudge.judging.build.pch_worker FOLDER < {"flags": [...]}

Started by judging/build/pch_maker.py in a box that may write FOLDER only, with flags the build store has
checked. Writes FOLDER/include/torch/extension.h (a copy of torch's) and, beside it, its .gch. Exit 0 when both
are there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from kerneljudge.judging.build.pch import HEADER, header_path


def make(flags: list[str], folder: str) -> subprocess.CompletedProcess:
    """Copy torch/extension.h into FOLDER/include/torch/ and compile its .gch beside it with `flags`."""
    source = header_path(flags)
    if source is None:
        raise FileNotFoundError("no torch/extension.h on the -isystem path")
    target = os.path.join(folder, "include", HEADER)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(source, target)
    return subprocess.run([os.environ.get("CXX", "c++"), "-x", "c++-header", *flags, target, "-o", target + ".gch"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def main() -> int:
    folder = sys.argv[1]
    try:
        done = make(json.load(sys.stdin)["flags"], folder)
    except FileNotFoundError as exc:
        print(exc)
        return 1
    print(done.stdout[-4000:])
    return 0 if done.returncode == 0 and os.path.isfile(os.path.join(folder, "include", HEADER + ".gch")) else 1


if __name__ == "__main__":
    sys.exit(main())
