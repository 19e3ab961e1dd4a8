"""How busy the GPU and the host are while a command runs (scripts/upstream_sweep.py): GPU utilisation and
memory every 0.5 s, the host's load average every second, and the samples as CSV files.

A sample's `t` is seconds since the start the sampler was given; see scripts/upstream_sweep_report.py for
what is made of them.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

GPU_EVERY_S = 0.5
HOST_EVERY_S = 1.0


class GpuSampler:
    """GPU utilisation and memory every 0.5 s: through pynvml when importable, else `nvidia-smi -lms 500` in a
    background process, else nothing (`status` says why)."""

    def __init__(self, started_monotonic: float, started_at: float):
        self.t0, self.started_at = started_monotonic, started_at
        self.samples: list[dict[str, Any]] = []
        self.status = "not started"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen | None = None

    def start(self) -> None:
        try:
            import pynvml

            pynvml.nvmlInit()
            handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        except Exception as exc:  # noqa: BLE001  (not importable, or no driver: try nvidia-smi)
            self._start_smi(f"pynvml unavailable ({type(exc).__name__})")
            return
        self.status = f"pynvml, {len(handles)} GPU(s), every {GPU_EVERY_S} s"
        self._thread = threading.Thread(target=self._poll_nvml, args=(pynvml, handles), daemon=True)
        self._thread.start()

    def _poll_nvml(self, pynvml: Any, handles: list[Any]) -> None:
        try:
            self._sample_nvml(pynvml, handles)
        finally:
            pynvml.nvmlShutdown()

    def _sample_nvml(self, pynvml: Any, handles: list[Any]) -> None:
        while not self._stop.is_set():
            t = time.monotonic() - self.t0
            for index, handle in enumerate(handles):
                try:
                    util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
                    mem = pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20
                except Exception:  # noqa: BLE001  (a failed read is a missing sample)
                    continue
                self.samples.append({"t": round(t, 3), "gpu": index, "util": float(util), "mem_mib": round(mem, 1)})
            self._stop.wait(GPU_EVERY_S)

    def _start_smi(self, why_not_nvml: str) -> None:
        if shutil.which("nvidia-smi") is None:
            self.status = f"unavailable: {why_not_nvml} and no nvidia-smi on PATH"
            return
        # timestamp and index beside the brief's two fields: nvidia-smi's own sample times do not depend on
        # how its output is buffered, and a machine with several GPUs prints one line per GPU
        command = ["nvidia-smi", "--query-gpu=timestamp,index,utilization.gpu,memory.used",
                   "--format=csv,noheader,nounits", "-lms", str(int(GPU_EVERY_S * 1000))]
        self._proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.status = f"nvidia-smi -lms {int(GPU_EVERY_S * 1000)} ({why_not_nvml})"
        self._thread = threading.Thread(target=self._read_smi, daemon=True)
        self._thread.start()

    def _read_smi(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            sample = parse_smi_line(line, self.started_at, time.monotonic() - self.t0)
            if sample is not None:
                self.samples.append(sample)
        code = self._proc.wait()
        if code not in (0, -15):  # -15: stopped by stop()
            error = (self._proc.stderr.read() if self._proc.stderr else "").strip().splitlines()
            self.status = f"nvidia-smi exited with {code}: {error[0] if error else 'no message'}"

    def stop(self) -> None:
        self._stop.set()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()


def parse_smi_line(line: str, started_at: float, arrived_t: float) -> dict[str, Any] | None:
    """One `timestamp, index, utilization.gpu, memory.used` line as a sample; None for anything else
    ("[N/A]" on a MIG slice, a warning). The sample's time is nvidia-smi's own (local time) when it parses."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != 4:
        return None
    stamp, index, util, mem = fields
    try:
        util_value, mem_value, gpu = float(util), float(mem), int(index)
    except ValueError:
        return None
    try:
        t = dt.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").timestamp() - started_at
    except ValueError:
        t = arrived_t
    return {"t": round(t, 3), "gpu": gpu, "util": util_value, "mem_mib": mem_value}


class HostSampler:
    """Every second: the 1-minute load average, the CPU busy share (psutil, when importable) and how many
    lines the run log has (so an idle stretch can be placed between verdicts)."""

    def __init__(self, started_monotonic: float, log: Path):
        self.t0, self.log = started_monotonic, log
        self.samples: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._offset, self._lines = 0, 0

    def start(self) -> None:
        self._thread.start()

    def _poll(self) -> None:
        try:
            import psutil

            psutil.cpu_percent(None)  # the first call only starts the interval
        except ImportError:
            psutil = None
        while not self._stop.wait(HOST_EVERY_S):
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
            cpu = psutil.cpu_percent(None) if psutil else None
            self.samples.append({"t": round(time.monotonic() - self.t0, 3), "load1": load, "cpu_percent": cpu,
                                 "verdicts": self._count_lines()})

    def _count_lines(self) -> int | None:
        """Lines in the log so far, read incrementally (the log only grows while the judge runs)."""
        try:
            with self.log.open("rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return self._lines if self._offset else None
        self._offset += len(chunk)
        self._lines += chunk.count(b"\n")
        return self._lines

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def write_samples(path: Path, samples: list[dict[str, Any]], fields: list[str]) -> None:
    """Written beside and renamed: a reader (or a run cut off while writing) never finds the file half written."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(list(samples))   # a copy: the sampler's thread may be appending
    os.replace(partial, path)


def read_samples(path: Path) -> list[dict[str, Any]]:
    """A samples CSV back as dicts of numbers (an empty cell is None)."""
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return [{k: _cell(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _cell(text: str | None) -> int | float | None:
    if text in ("", None):
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)

