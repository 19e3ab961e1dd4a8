"""The orchestrator's handle on the trusted reference process, with a disk cache of reference times.

Only times are cached on disk (never outputs or seeds, which a solution could read there).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from . import environment
from .child import Child


class ReferenceError(RuntimeError):
    """The problem itself failed to run (not the solution's fault)."""


class ReferenceService:
    def __init__(self, device: str, precision: str, threads: int, cache_dir: str, timeout_s: float = 900.0,
                 env: dict[str, str] | None = None):
        self.env = dict(env or {})
        self.device, self.precision, self.threads = device, precision, threads
        self.cache_dir = cache_dir
        self.timeout_s = timeout_s
        self._child: Child | None = None
        self.environment: dict[str, Any] = {}
        self.flags: dict[str, Any] = {}

    def _ensure(self) -> Child:
        if self._child is None or self._child.proc.poll() is not None:
            if self._child is not None:
                self._child.kill()
            self._child = Child("kerneljudge.harness.reference_worker",
                                environment.child_env(self.device, self.threads, self.cache_dir, self.env))
            reply = self._request({"cmd": "hello", "device": self.device, "threads": self.threads})[0]
            self.environment = reply.get("environment", {})
            self.flags = reply.get("flags", {})
        return self._child

    def _request(self, header: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        child = self._child
        try:
            child.send(header)
            reply, tensors = child.recv(self.timeout_s)
        except Exception as exc:
            detail = child.output.text()
            self.close()
            raise ReferenceError(f"reference process failed ({type(exc).__name__}): {detail}") from None
        if reply.get("status") != "ok":
            raise ReferenceError(reply.get("message", "reference error"))
        return reply, tensors

    def hello(self) -> dict[str, Any]:
        self._ensure()
        return self.environment

    def expect(self, token: str, problem_path: str, preset: dict[str, Any], init_seed: int,
               seeds: list[int]) -> list[dict[str, Any]]:
        """Have the reference process compute and keep the outputs for these seeds (under `token`).

        Returns, per seed, the output's structure and tensor sizes; the values never leave that process.
        """
        self._ensure()
        reply, _ = self._request({"cmd": "expect", "token": token, "problem_path": problem_path, "preset": preset,
                                  "init_seed": init_seed, "seeds": seeds, "device": self.device,
                                  "precision": self.precision})
        return reply["outputs"]

    def check(self, token: str, index: int, structure: Any, path: str, metas: list[dict[str, Any]],
              tolerance: dict[str, Any] | None, transport: str = "file") -> dict[str, Any]:
        """Compare a solution output with kept output `index`: {"ok", "reason", "detail"}.

        The output is in the file `path`, or with transport="ipc" behind the CUDA IPC handles in `metas`.
        """
        reply, _ = self._request({"cmd": "check", "token": token, "index": index, "structure": structure,
                                  "path": path, "metas": metas, "precision": self.precision,
                                  "tolerance": tolerance, "transport": transport})
        return reply

    def forget(self, token: str) -> None:
        """Free kept outputs; best effort (a dead reference process has freed them already)."""
        if self._child is not None and self._child.proc.poll() is None:
            try:
                self._request({"cmd": "forget", "token": token})
            except ReferenceError:
                pass

    def timing(self, problem_sha: str, problem_path: str, preset: dict[str, Any], init_seed: int,
               budget_s: float, use_cache: bool = True, compiled: bool = False) -> dict[str, Any]:
        """Reference timing statistics (eager, or torch.compile with compiled=True), cached on disk."""
        self._ensure()
        key = self._cache_key(problem_sha, preset) + ("-compiled" if compiled else "")
        path = Path(self.cache_dir) / "reference_times" / f"{key}.json"
        if use_cache and path.exists():
            try:
                cached = json.loads(path.read_text())
                cached["cached"] = True
                return cached
            except ValueError:
                pass
        reply, _ = self._request({"cmd": "time", "problem_path": problem_path, "preset": preset,
                                  "init_seed": init_seed, "device": self.device, "precision": self.precision,
                                  "budget_s": budget_s, "compile": compiled})
        stats = reply["timing"]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(stats))
        os.replace(tmp, path)
        stats["cached"] = False
        return stats

    def _cache_key(self, problem_sha: str, preset: dict[str, Any]) -> str:
        env = self.environment
        material = [problem_sha, json.dumps(preset, sort_keys=True), env.get("device_name"), env.get("torch"),
                    env.get("cuda"), self.precision, self.threads, self.device]
        return hashlib.sha256(json.dumps(material).encode()).hexdigest()[:32]

    def close(self) -> None:
        if self._child is not None:
            self._child.close()
            self._child = None
