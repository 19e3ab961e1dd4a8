"""The .gch maker: makes one shared precompiled torch/extension.h (judging/build/pch.py), in a process of its own.

    python -m kerneljudge.judging.build.pch_maker < JOB

The build store (judging/build/store.py) checks the flags a build asked for, then starts this maker
(`start`, `send`); it outlives the judge that started it (a single `kerneljudge eval` ends before a .gch is
made).
The maker is trusted code: it takes <pch_root>/<key>.lock, runs judging/build/pch_worker.py in a build box
that may write <pch_root>/<key>/ only (the boxed runner, judging/build/boxed_run.py, as builds do), freezes
that folder and writes <pch_root>/<key>.json once it is complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from typing import Any

from kerneljudge.judging.build import pch
from kerneljudge.judging.build.boxed_run import LOG_CHARS, boxed_command, run_boxed
from kerneljudge.judging.build.folders import freeze, wipe, write_json
from kerneljudge.judging.child import TailBuffer
from kerneljudge.sandbox import spec as box_spec

PCH_TIMEOUT_S = 900.0


def start(env: dict[str, str]) -> subprocess.Popen:
    """Start a maker in a session of its own, so that it outlives this process; it is not waited for, and
    waits for its job (`send`) on stdin. Not boxed itself: it writes the lock and the marker beside its
    box's folder, and boxes its one untrusted step, the compile."""
    return subprocess.Popen([sys.executable, "-m", "kerneljudge.judging.build.pch_maker"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)


def send(maker: subprocess.Popen, job: dict[str, Any]) -> None:
    """Give a maker from `start` its job (flags already checked)."""
    with contextlib.suppress(OSError):
        maker.stdin.write(json.dumps(job).encode())
        maker.stdin.close()


def make_pch(job: dict[str, Any]) -> None:
    """Make the .gch `job` asks for (Builder._want_pch checked its flags), in a box that writes only its folder,
    then its marker. One maker per key at a time (an flock); a killed maker leaves a folder without a marker,
    which the next one wipes."""
    root, key, flags = job["pch_root"], job["key"], job["flags"]
    folder = os.path.join(root, key)
    with open(os.path.join(root, f"{key}.lock"), "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another judge process is making it
        if os.path.exists(pch.marker_path(root, key)):
            return  # made (or failed) before
        wipe(folder)
        box_spec.prepare_scratch(folder)
        command = boxed_command(folder, "kerneljudge.judging.build.pch_worker", nice=job["nice"],
                                require=job["require"])
        output = TailBuffer(LOG_CHARS)
        started = time.monotonic()
        code = run_boxed(command, box_spec.boxed_env(job["env"], folder), folder,
                         json.dumps({"flags": flags}).encode(), output, PCH_TIMEOUT_S, tuple(job["cores"]))
        ok = code == 0 and os.path.isfile(os.path.join(pch.include_dir(root, key), pch.HEADER + ".gch"))
        if ok:
            freeze(folder)
        else:
            wipe(folder)
        write_json(pch.marker_path(root, key), {"ok": ok, "seconds": round(time.monotonic() - started, 1),
                                                "flags": flags, "log": "" if ok else output.text(LOG_CHARS)})


if __name__ == "__main__":  # what `start` runs: python -m kerneljudge.judging.build.pch_maker < JOB
    make_pch(json.load(sys.stdin))
