"""Where published KernelBench solutions live, and how each source's files are read (for stage_honest_corpus.py).

Every source is a git mirror as the `fetch` tool leaves it (/work/.mirror/<owner>+<name>/repo, a git directory
read with `git show`; no work tree). Each reader yields Candidates: one published ModelNew file, the upstream
problem (level, number) it targets, how the source itself judged it, and the reference code the source's
authors saw (where they published it), so the stager can tell a solution written for a problem upstream has
since changed. Sources as found on 2026-12-07 (commit = the mirror's HEAD then; the manifest records the HEAD
each staging actually read):

  leaderboard      anneouyang/KernelBenchLeaderboard @ 170ca7965f53bba599d1078b6fcaa5dd2658ec50 (2024-12-03).
                   The first KernelBench leaderboard (paper runs, 7 models). docs/assets/raw_data.json: 413
                   entries {level, problem_id (0-based: problem = problem_id + 1, as docs/assets/data.json's
                   "Level L: P_name" keys show for 383 of them), model, torch_speedup, code}; the same code is in
                   docs/assets/solutions/<md5>.py. Taken as passing upstream's check: the leaderboard ranks them
                   by speedup, and every entry has one. References: docs/assets/problems/l{L}_p{P}.py. Levels 1-3.
                   Licence: none in the repository (KernelBench itself is MIT).
  cuda_l1          deepreinforce-ai/CUDA-L1 @ 51e8356bf844101cab2aeeca4bdff47ebb1953b8 (2025-11-03). CUDA-L1's
                   RL-optimised kernels: optimized_cuda_code/{h100,a100,h20,l40,3090}.json, one JSON line per
                   problem {level_id, task_id, ref_code, custom_code, score_*}; custom_code is null where the RL
                   found nothing faster (README). codes/*.json hold the same custom_code again. Levels 1-3.
                   Licence: MIT. Its README says RL found reward hacks (timing, caching) and its eval added a
                   "laziness" check on 2025-11-03: not honest by construction, so its rejections need reading.
  upstream_triton  ScalingIntelligence/KernelBench, branch sokserey/tritonDump @ 6842d4f293f6736d758f5e1d19fee7cd1982e3fa
                   (2025-08-18), a contributor's Triton generations on an H200, on upstream's own repository:
                   triton_runs/level{1,2}_triton/kernels/level{L}_problem{P}_triton.py, one line each in
                   results.jsonl (speedup measured, so correct by upstream's check). References: the branch's own
                   KernelBench/level{L}/. Levels 1-2 (64 + 70). Licence: MIT.
  technoabsurdist  technoabsurdist/KernelBench @ 9202a5c5786ab959fcaa3b4ce0356348bb87c86a (2025-09-07), a fork with
                   committed runs (A100): runs/<run>/level_{L}_problem_{P}_sample_{S}_kernel.py with
                   eval_results.json {problem: {compiled, correctness}}, and runs/opus4_*/problem_{P}_kernel.py with
                   detailed_results.json. Only those its eval found correct are staged. References: the fork's
                   KernelBench/level{L}/ (its runs read the Hugging Face copy; the fork's files stand in). Levels 1-3.
                   Licence: MIT (the fork's LICENSE, upstream's).
  kb_leaderboard   AffectionateCurry/KernelBench-Leaderboard (the 2025 leaderboard, H100, Gemini 3 runs):
                   data/kernels.json {kernels: [{level, problem_id, filename, reference_code, models: {run:
                   {compiled, correct, code}}}]}. No snapshot could be fetched on 2026-12-07; staged when a mirror
                   is given (--mirror kb_leaderboard=PATH); its reader is tested on a synthetic copy only. Licence:
                   no LICENSE file in the stored listing.

Found and not used: hzeng2000/KernelBench (runs/level_2_backend_*: raw level-2 generations in CUDA, CuTe, TileLang
and Triton with no evaluation results, so nothing says which are correct); ScalingIntelligence/KernelBench's
sakana_kernels/ (branch sakana-kernel-repro) and unit_tests/test_kernels/, and PR #118's *_hack.py: known reward
hacks, used as the skip list; the Sakana AI CUDA Engineer archive and Kevin-32B's samples live on Hugging Face,
not GitHub, so `fetch` cannot bring them.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

MIRRORS = Path("/work/.mirror")


@dataclass(frozen=True)
class Source:
    name: str
    repo: str              # owner/name on GitHub
    ref: str               # the git ref the reader reads (a branch of upstream for upstream_triton)
    licence: str
    levels: str            # what it holds, for the summary

    @property
    def default_mirror(self) -> Path:
        return MIRRORS / self.repo.replace("/", "+") / "repo"


@dataclass
class Candidate:
    source: str
    original: str          # where in the mirror: a path, or a path and the JSON entry's keys
    level: int
    problem: int
    code: str
    source_correct: bool | None   # the source's own verdict: True correct, False not, None not recorded
    reference: str | None = None  # the problem's code as the source's authors had it
    meta: dict[str, Any] = field(default_factory=dict)


class Mirror:
    """A git directory read with `git show` (the fetch tool's mirrors have no work tree)."""

    def __init__(self, path: str | Path, ref: str = "HEAD"):
        self.path, self.ref = Path(path), ref

    def exists(self) -> bool:
        return self._git("rev-parse", "--verify", "-q", f"{self.ref}^{{commit}}", check=False) is not None

    def commit(self) -> str:
        return (self._git("rev-parse", f"{self.ref}^{{commit}}") or "").strip()

    def show(self, path: str) -> str:
        out = self._git("show", f"{self.ref}:{path}")
        if out is None:
            raise FileNotFoundError(f"{self.path}: no {path} at {self.ref}")
        return out

    def files(self, folder: str) -> list[str]:
        out = self._git("ls-tree", "-r", "--name-only", self.ref, "--", folder.rstrip("/") + "/", check=False)
        return sorted(out.split("\n")) if out else []

    def _git(self, *args: str, check: bool = True) -> str | None:
        run = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True)
        if run.returncode != 0:
            if check and args[0] != "show":
                raise RuntimeError(f"git {' '.join(args)} in {self.path}: {run.stderr.decode(errors='replace')}")
            return None
        return run.stdout.decode("utf-8", errors="replace")


def staged_text(code: str) -> str:
    """The published text as staged: newlines as \\n and one at the end, nothing else changed."""
    text = code.replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") else text + "\n"


def fingerprint(code: str) -> str:
    """Equal for two files that differ only in blank lines and trailing whitespace (duplicates, known hacks)."""
    lines = (line.rstrip() for line in staged_text(code).split("\n"))
    return hashlib.sha256("\n".join(line for line in lines if line).encode()).hexdigest()


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def leading_number(name: str) -> int | None:
    m = re.match(r"(\d+)_", Path(name).name)
    return int(m.group(1)) if m else None


def problem_files(mirror: Mirror, level: int) -> dict[int, str]:
    """Problem number -> path of KernelBench/level{L}/{P}_*.py in the mirror."""
    found = {}
    for path in mirror.files(f"KernelBench/level{level}"):
        number = leading_number(path)
        if number is not None and path.endswith(".py") and path.count("/") == 2:
            found[number] = path
    return found


def read_leaderboard(mirror: Mirror) -> Iterator[Candidate]:
    for entry in json.loads(mirror.show("docs/assets/raw_data.json")):
        level, problem = int(entry["level"]), int(entry["problem_id"]) + 1
        try:
            reference = mirror.show(f"docs/assets/problems/l{level}_p{problem}.py")
        except FileNotFoundError:
            reference = None
        yield Candidate("leaderboard", f"docs/assets/solutions/{entry['file']}.py", level, problem, entry["code"],
                        True, reference, {"model": entry.get("model"), "claimed_speedup": entry.get("torch_speedup")})


CUDA_L1_FILES = ("h100", "a100", "h20", "l40", "3090")


def read_cuda_l1(mirror: Mirror) -> Iterator[Candidate]:
    for gpu in CUDA_L1_FILES:
        path = f"optimized_cuda_code/{gpu}.json"
        for row in json_lines(mirror.show(path)):
            if not row.get("custom_code"):
                continue  # the RL found nothing faster, or copied the reference (README)
            level, problem = int(row["level_id"]), int(row["task_id"])
            yield Candidate("cuda_l1", f"{path}:level_id={level},task_id={problem}", level, problem,
                            row["custom_code"], True, row.get("ref_code"),
                            {"gpu": gpu, "claimed_speedup": row.get("score_default")})


def read_upstream_triton(mirror: Mirror) -> Iterator[Candidate]:
    for level in (1, 2):
        folder = f"triton_runs/level{level}_triton"
        problems = problem_files(mirror, level)
        for row in json_lines(mirror.show(f"{folder}/results.jsonl")):
            problem = int(row["problem_id"])
            path = f"{folder}/kernels/level{level}_problem{problem}_triton.py"
            reference = mirror.show(problems[problem]) if problem in problems else None
            yield Candidate("upstream_triton", path, level, problem, mirror.show(path), True, reference,
                            {"claimed_speedup": row.get("speedup"), "attempts": row.get("attempts")})


RUN_FILE = re.compile(r"^runs/([^/]+)/level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")
OPUS_FILE = re.compile(r"^runs/(opus4_level(\d+)_[^/]+)/problem_(\d+)_kernel\.py$")


def read_technoabsurdist(mirror: Mirror) -> Iterator[Candidate]:
    references = {level: problem_files(mirror, level) for level in (1, 2, 3)}
    verdicts: dict[str, dict[int, bool | None]] = {}

    def run_verdicts(run: str) -> dict[int, bool | None]:
        if run not in verdicts:
            verdicts[run] = technoabsurdist_verdicts(mirror, run)
        return verdicts[run]

    for path in mirror.files("runs"):
        m = RUN_FILE.match(path) or OPUS_FILE.match(path)
        if not m:
            continue
        run, level, problem = m.group(1), int(m.group(2)), int(m.group(3))
        ref_path = references[level].get(problem) if level in references else None
        yield Candidate("technoabsurdist", path, level, problem, mirror.show(path),
                        run_verdicts(run).get(problem), mirror.show(ref_path) if ref_path else None, {"run": run})


def technoabsurdist_verdicts(mirror: Mirror, run: str) -> dict[int, bool | None]:
    """Problem -> the run's own correctness: eval_results.json, or an opus run's detailed_results.json."""
    try:
        results = json.loads(mirror.show(f"runs/{run}/eval_results.json"))
        return {int(k): bool(v.get("compiled") and v.get("correctness")) for k, v in results.items()
                if isinstance(v, dict)}
    except FileNotFoundError:
        pass
    try:
        detailed = json.loads(mirror.show(f"runs/{run}/detailed_results.json"))
    except FileNotFoundError:
        return {}
    out = {}
    for row in detailed.get("results", []):
        result = row.get("eval_result") or {}
        out[int(row["problem_id"])] = bool(result.get("compiled") and result.get("correctness"))
    return out


def read_kb_leaderboard(mirror: Mirror) -> Iterator[Candidate]:
    for kernel in json.loads(mirror.show("data/kernels.json")).get("kernels", []):
        level = int(kernel["level"])
        problem = leading_number(kernel.get("filename") or "") or int(kernel["problem_id"])
        for run, result in sorted((kernel.get("models") or {}).items()):
            if not result.get("code"):
                continue
            yield Candidate("kb_leaderboard", f"data/kernels.json:{kernel.get('id')}:{run}", level, problem,
                            result["code"], bool(result.get("compiled") and result.get("correct")),
                            kernel.get("reference_code"), {"run": run, "claimed_speedup": result.get("speedup")})


SOURCES: dict[str, tuple[Source, Callable[[Mirror], Iterator[Candidate]]]] = {
    "leaderboard": (Source("leaderboard", "anneouyang/KernelBenchLeaderboard", "HEAD", "none stated", "1-3"),
                    read_leaderboard),
    "cuda_l1": (Source("cuda_l1", "deepreinforce-ai/CUDA-L1", "HEAD", "MIT", "1-3"), read_cuda_l1),
    "upstream_triton": (Source("upstream_triton", "ScalingIntelligence/KernelBench", "sokserey/tritonDump", "MIT",
                               "1-2"), read_upstream_triton),
    "technoabsurdist": (Source("technoabsurdist", "technoabsurdist/KernelBench", "HEAD", "MIT", "1-3"),
                        read_technoabsurdist),
    "kb_leaderboard": (Source("kb_leaderboard", "AffectionateCurry/KernelBench-Leaderboard", "HEAD", "not stated",
                              "1-3"), read_kb_leaderboard),
}

# Published reward hacks (lab/stage_trust_check.sh's list and upstream's own adversarial kernels), read from a
# KernelBench mirror: (ref, folder, which files in it)
KNOWN_HACKS = (
    ("bkal01/fix-level1-hacks", "src/kernelbench/tests/solutions", lambda p: "_hack" in p),
    ("sakana-kernel-repro", "sakana_kernels", lambda p: p.endswith(".py")),
    ("HEAD", "src/kernelbench/unit_tests/test_kernels", lambda p: p.endswith(".py")),
)


def known_hacks(kernelbench: str | Path) -> dict[str, str]:
    """Normalised fingerprint -> 'ref:path' of every known reward hack file in the KernelBench mirror."""
    found = {}
    for ref, folder, wanted in KNOWN_HACKS:
        mirror = Mirror(kernelbench, ref)
        if not mirror.exists():
            continue
        for path in mirror.files(folder):
            if wanted(path):
                found[fingerprint(mirror.show(path))] = f"{ref}:{path}"
    return found
