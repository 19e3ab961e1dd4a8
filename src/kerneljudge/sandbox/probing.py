"""Which layers of the box work here, measured by starting one tiny boxed child (once per process).

The child does not report what it was told: it compares its namespaces with the parent's, reads its
no_new_privs bit, and tries to write and read where the box must refuse (and write where it must allow).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

LAYERS = ("userns", "netns", "pidns", "landlock", "no_new_privs")
PROBE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class SandboxReport:
    layers: tuple[str, ...]          # active, in LAYERS order
    missing: tuple[str, ...]         # not active, each as "layer: why"
    landlock_abi: int
    complete: bool
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"layers": list(self.layers), "missing": list(self.missing), "landlock_abi": self.landlock_abi,
                "complete": self.complete, "notes": list(self.notes)}

    def missing_layers(self) -> tuple[str, ...]:
        return tuple(m.split(":", 1)[0] for m in self.missing)


def describe(report: SandboxReport | None = None) -> str:
    """One line for stderr: what the box is made of here, or what it lacks."""
    report = report or probe()
    active = ", ".join(f"landlock ABI {report.landlock_abi}" if layer == "landlock" else layer
                       for layer in report.layers) or "nothing"
    if report.complete:
        return f"kerneljudge sandbox: complete ({active})"
    return (f"kerneljudge sandbox: INCOMPLETE, solutions run with less isolation; missing "
            f"{'; '.join(report.missing)}; active: {active}")


@functools.lru_cache(maxsize=1)
def probe() -> SandboxReport:
    """Start one boxed child and report what it could and could not do. Cached for the process."""
    from kerneljudge.sandbox import landlock, launch, namespaces
    from kerneljudge.sandbox.spec import BoxSpec, boxed_env, default_execute_paths, default_list_paths
    from kerneljudge.sandbox.spec import default_read_paths, device_paths, prepare_scratch

    with tempfile.TemporaryDirectory(prefix="kj-probe-") as root:
        scratch, outside = os.path.join(root, "scratch"), os.path.join(root, "outside")
        os.makedirs(outside)
        prepare_scratch(scratch)
        secret = os.path.join(outside, "secret")
        with open(secret, "w") as f:
            f.write("not for the box")
        box = BoxSpec(read=default_read_paths(), write=[scratch, *device_paths(gpu=False)],
                      execute=default_execute_paths(), list_only=default_list_paths())
        env = boxed_env(_python_env(), scratch)
        parent = {"ns": namespaces.namespace_ids(), "scratch": scratch, "outside": outside, "secret": secret}
        command = launch.argv(box, "kerneljudge.sandbox.probing", [json.dumps(parent)], landlock_mode="start")
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return _failed(f"the probe child could not run: {exc}", landlock.abi_version())
        lines = done.stdout.strip().splitlines()
        try:
            seen = json.loads(lines[-1])
        except (IndexError, ValueError):
            why = (done.stderr or done.stdout).strip()[-500:]
            return _failed(f"the probe child failed (status {done.returncode}): {why}", landlock.abi_version())
    return _report(seen)


def _python_env() -> dict[str, str]:
    from kerneljudge.sandbox.spec import package_folder

    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELJUDGE_")}
    parent = os.path.dirname(package_folder())
    env["PYTHONPATH"] = os.pathsep.join([parent, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    return env


def _failed(why: str, abi: int) -> SandboxReport:
    return SandboxReport((), tuple(f"{layer}: {why}" for layer in LAYERS), abi, False)


def _report(seen: dict[str, Any]) -> SandboxReport:
    checks = seen.get("checks", {})
    layers, missing = [], []
    for layer in LAYERS:
        ok, why = checks.get(layer, (False, "not measured"))
        if ok:
            layers.append(layer)
        else:
            missing.append(f"{layer}: {why}")
    return SandboxReport(tuple(layers), tuple(missing), int(seen.get("landlock_abi", 0)), not missing,
                         tuple(str(n) for n in seen.get("notes", ())))


def _attempt(action) -> str:
    """'' when `action` succeeded, else the error's name."""
    try:
        action()
    except OSError as exc:
        return exc.__class__.__name__ + (f" ({os.strerror(exc.errno)})" if exc.errno else "")
    return ""


def _child(parent: dict[str, Any]) -> dict[str, Any]:
    """Runs inside the box: measure each layer."""
    import socket

    from kerneljudge.sandbox import landlock, namespaces

    mine, theirs = namespaces.namespace_ids(), parent["ns"]
    checks: dict[str, tuple[bool, str]] = {}
    for layer, kind in (("userns", "user"), ("netns", "net"), ("pidns", "pid")):
        same = mine[kind] == theirs[kind] or not mine[kind]
        checks[layer] = (not same, "shares the judge's namespace" if same else "")
    if checks["netns"][0]:
        names = sorted(name for _, name in socket.if_nameindex())
        if names != ["lo"]:
            checks["netns"] = (False, f"network interfaces visible: {names}")
    nnp = namespaces.no_new_privs()
    checks["no_new_privs"] = (nnp, "" if nnp else "not set")

    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write("x")

    def read(path: str) -> None:
        with open(path) as f:
            f.read()

    inside = _attempt(lambda: write(os.path.join(parent["scratch"], "tmp", "probe")))
    blocked_write = _attempt(lambda: write(os.path.join(parent["outside"], "planted")))
    blocked_read = _attempt(lambda: read(parent["secret"]))
    if inside:
        checks["landlock"] = (False, f"cannot write its own scratch folder: {inside}")
    elif not blocked_write or not blocked_read:
        checks["landlock"] = (False, "wrote or read outside the allowed folders")
    else:
        checks["landlock"] = (True, "")
    outcome = namespaces.RECORD.get("landlock", {})
    notes = list(namespaces.RECORD.get("notes", ()))
    notes += [f"{k}: {v}" for k, v in namespaces.RECORD.get("missing", {}).items()]
    if not checks["landlock"][0] and outcome.get("reason"):
        checks["landlock"] = (False, outcome["reason"])
    return {"checks": checks, "landlock_abi": landlock.abi_version(), "notes": notes}


if __name__ == "__main__":
    print(json.dumps(_child(json.loads(sys.argv[1]))))
