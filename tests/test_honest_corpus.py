"""The honest corpus's staging (lab/stage_honest_corpus.py) and report (lab/honest_corpus_report.py) on the CPU:
synthetic verdict lines grouped by cause, and a synthetic source mirror (a git repository made here) staged
into upstream's run layout with every skip reason the stager can tell cheaply."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import load_file

ROOT = Path(__file__).resolve().parent.parent


STAGE = load_file("lab", "stage_honest_corpus")
REPORT = load_file("lab", "honest_corpus_report")
SOURCES = sys.modules["honest_sources"]

PROBLEM = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Adds one."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return x + 1

N = 4096

def get_inputs():
    return [torch.randn(N)]

def get_init_inputs():
    return []
'''

CUDA = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = """
__global__ void add_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    add_one<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="add_one_%d", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=src,
                  functions=["run"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.run(x)
'''

TORCH_ONLY = '''import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return x + 1
'''


# ---- the report's pure parts ----------------------------------------------------------------------------------

def verdict(kind: str, accepted: bool = False, flags=(), sha: str = "", solution: str = "", policy: str = "strict",
            device: str = "cuda", **extra) -> dict:
    return {"verdict": kind, "accepted": accepted, "flags": list(flags), "solution_sha256": sha, "device": device,
            "solution": solution, "policy": policy, "reason": extra.pop("reason", f"{kind} because"), **extra}


@pytest.mark.parametrize("v, expected", [
    (verdict("correct", True, ["reduced_precision"]), None),
    (verdict("correct", False, ["reduced_precision", "shape_specialized"]), "shape_specialized"),
    (verdict("correct", False, ["timing_inconsistent", "suspicious_speedup", "shape_specialized"]),
     "shape_specialized"),
    (verdict("correct", False, ["unsandboxed", "suspicious_speedup"]), "suspicious_speedup"),
    (verdict("correct", False, []), "correct_not_accepted"),
    (verdict("rejected", False, ["unsandboxed", "library_compute"]), "rejected:library_compute"),
    (verdict("rejected", False, [], findings=[{"code": "torch_compute", "blocking": False},
                                             {"code": "side_stream", "blocking": True}]), "rejected:side_stream"),
    (verdict("rejected", False, []), "rejected"),
    (verdict("wrong_output"), "wrong_output"),
    (verdict("runtime_error"), "runtime_error"),
    (verdict("unjudgeable", problem_outcome={"kind": "degenerate_reference"}), "unjudgeable:degenerate_reference"),
])
def test_cause_names_why_a_verdict_is_not_accepted(v, expected):
    assert REPORT.cause(v) == expected


def manifest_rows() -> list[dict]:
    rows = []
    for i, (source, level, problem) in enumerate([("a", 1, 1), ("a", 1, 2), ("a", 2, 3), ("a", 2, 4), ("a", 3, 5),
                                                   ("b", 1, 1), ("b", 1, 2)]):
        rows.append({"source": source, "status": "staged", "level": level, "problem": problem, "sha256": f"sha{i}",
                     "file": f"{source}/solutions/level_{level}_problem_{problem}_sample_0_kernel.py",
                     "original": f"orig/{i}.py", "strict_findings": ["torch_compute"] if i in (1, 6) else []})
    rows.append({"source": "a", "status": "skipped", "reason": "duplicate (of a:x)", "level": 1, "problem": 1,
                 "sha256": "sha-skipped", "original": "orig/dup.py"})
    return rows


def test_verdicts_match_by_sha_then_by_path_and_the_last_one_counts():
    rows = REPORT.staged_rows(manifest_rows())
    verdicts = [
        verdict("wrong_output", sha="sha0"),
        verdict("correct", True, sha="sha0"),                      # a resumed run appended a later verdict
        verdict("correct", True, sha="changed-since",               # matched by its path instead
                solution="/x/upstream/honest/a/solutions/level_1_problem_2_sample_0_kernel.py"),
        verdict("correct", True, sha="sha0", policy="lenient"),
        verdict("correct", True, sha="sha-skipped"),                # a skipped file is not in the corpus
        {"not": "a verdict"},
    ]
    found = REPORT.match(rows, verdicts)
    assert found[("a/solutions/level_1_problem_1_sample_0_kernel.py", "strict")]["verdict"] == "correct"
    assert ("a/solutions/level_1_problem_2_sample_0_kernel.py", "strict") in found
    assert ("a/solutions/level_1_problem_1_sample_0_kernel.py", "lenient") in found
    assert len(found) == 3


def test_summary_counts_per_source_and_groups_the_rest_by_cause():
    rows = REPORT.staged_rows(manifest_rows())
    verdicts = [
        verdict("correct", True, sha="sha0"),
        verdict("correct", False, ["shape_specialized"], sha="sha1", reason="raised at 17 x 33"),
        verdict("unjudgeable", sha="sha2", problem_outcome={"kind": "degenerate_reference"}),
        verdict("rejected", False, ["library_compute"], sha="sha3"),
        # sha4 (a, level 3) never judged: missing
        verdict("correct", True, sha="sha5"),
        verdict("correct", True, ["reduced_precision"], sha="sha6"),
    ]
    summary = REPORT.summarise(rows, REPORT.match(rows, verdicts), "strict")
    a, b = summary["a"], summary["b"]
    assert (a["staged"], a["judged"], a["judgeable"], a["accepted"]) == (5, 4, 3, 1)
    assert a["unjudgeable"] == {"degenerate_reference": 1}
    assert a["accepted_share"] == pytest.approx(1 / 3)
    assert set(a["causes"]) == {"shape_specialized", "rejected:library_compute", "missing"}
    assert a["causes"]["shape_specialized"][0]["reason"] == "raised at 17 x 33"
    assert a["causes"]["missing"][0]["level"] == 3
    assert (a["judgeable_clean"], a["accepted_clean"], a["accepted_clean_share"]) == (2, 1, 0.5)
    assert (b["judgeable"], b["accepted"], b["accepted_share"], b["causes"]) == (2, 2, 1.0, {})
    assert (b["judgeable_clean"], b["accepted_clean"]) == (1, 1)
    t = REPORT.total(summary)
    assert (t["staged"], t["judged"], t["judgeable"], t["accepted"]) == (7, 6, 5, 3)
    assert (t["judgeable_clean"], t["accepted_clean"]) == (3, 2)
    text = REPORT.render({"strict": summary})
    assert "| a | 5 | 4 | 1 | 3 | 1 | 33.3% | 2 | 50.0% |" in text
    assert "| all | 7 | 6 | 1 | 5 | 3 | 60.0% | 3 | 66.7% |" in text
    assert "not met (1 staged not judged yet)" in text
    assert "**rejected:library_compute**: 1" in text and "raised at 17 x 33" in text
    assert "### b" not in text


def test_the_bar_is_met_at_98_percent():
    rows = [{"source": "s", "status": "staged", "level": 1, "problem": i, "sha256": f"h{i}", "original": "o",
             "file": f"s/solutions/level_1_problem_{i}_sample_0_kernel.py"} for i in range(50)]
    verdicts = [verdict("correct", i != 0, sha=f"h{i}") for i in range(50)]  # 49 of 50 = 98%
    summary = REPORT.summarise(rows, REPORT.match(rows, verdicts), "strict")
    assert "Bar: 98% of the judgeable accepted: met" in REPORT.render({"strict": summary})
    verdicts[1]["accepted"] = False
    summary = REPORT.summarise(rows, REPORT.match(rows, verdicts), "strict")
    assert "not met" in REPORT.render({"strict": summary})


def test_report_command_reads_logs_and_manifest(tmp_path, capsys):
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in manifest_rows()))
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps(verdict("correct", True, sha="sha0")) + "\n{torn line\n"
                   + json.dumps(verdict("wrong_output", sha="sha5", policy="lenient")) + "\n")
    assert REPORT.main([str(log), "--manifest", str(manifest), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"lenient", "strict"}
    assert out["strict"]["all"]["accepted"] == 1 and out["lenient"]["sources"]["b"]["causes"]["wrong_output"]
    assert REPORT.main([str(log), "--manifest", str(manifest), "--policy", "strict"]) == 0
    assert "## policy strict" in capsys.readouterr().out
    with log.open("a") as f:
        f.write(json.dumps(verdict("correct", True, sha="sha1", device="cpu")) + "\n")
    assert REPORT.main([str(log), "--manifest", str(manifest), "--policy", "strict", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["strict"]["all"]["accepted"] == 2
    assert REPORT.main([str(log), "--manifest", str(manifest), "--policy", "strict", "--device", "cuda", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["strict"]["all"]["accepted"] == 1
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert REPORT.main([str(log), "--manifest", str(empty)]) == 3


# ---- the stager's pure parts ----------------------------------------------------------------------------------

def test_model_signature_ignores_docstrings_comments_and_layout_but_not_the_computation():
    same = PROBLEM.replace('"""Adds one."""', '"""Adds one to x."""').replace("return x + 1", "return x + 1  # one")
    assert STAGE.model_signature(same) == STAGE.model_signature(PROBLEM)
    assert STAGE.model_signature(PROBLEM.replace("N = 4096", "N = 8")) == STAGE.model_signature(PROBLEM)
    assert STAGE.model_signature(PROBLEM.replace("x + 1", "x + 2")) != STAGE.model_signature(PROBLEM)
    assert STAGE.model_signature("class ModelNew: pass") is None
    assert STAGE.model_signature("def (:") is None and STAGE.model_signature(None) is None


def test_fingerprint_sees_through_whitespace_and_staged_text_only_normalises_newlines():
    assert SOURCES.fingerprint(CUDA) == SOURCES.fingerprint(CUDA.replace("\n", "  \r\n").replace("\r\n\r\n", "\r\n"))
    assert SOURCES.fingerprint(CUDA) != SOURCES.fingerprint(CUDA.replace("1.0f", "2.0f"))
    assert SOURCES.staged_text("a  \r\nb") == "a  \nb\n"


def candidate(**kw):
    base = dict(source="s", original="o.py", level=1, problem=1, code=CUDA, source_correct=True, reference=PROBLEM)
    base.update(kw)
    return SOURCES.Candidate(**base)


@pytest.mark.parametrize("kw, backend, expected", [
    ({}, "cuda", None),
    ({"level": 4}, "cuda", "outside_levels"),
    ({"problem": 99}, "cuda", "no_upstream_problem"),
    ({"source_correct": False}, "cuda", "source_incorrect"),
    ({"source_correct": None}, "cuda", "source_unverified"),
    ({"code": "def (:"}, "torch", "unparsable"),
    ({"code": "import torch\n"}, "torch", "no_modelnew"),
    ({"code": TORCH_ONLY}, "torch", "not_cuda_or_triton (torch)"),
    ({"code": CUDA.replace("add_one", "hack")}, "cuda", "known_hack (ref:hack.py)"),
    ({"reference": PROBLEM.replace("x + 1", "x * 2")}, "cuda", "problem_changed"),
    ({"reference": None}, "cuda", None),                                    # nothing to compare: staged
    ({"problem": 12, "reference": PROBLEM.replace("x + 1", "x * 2")}, "cuda", None),  # an equivalent change
])
def test_skip_reasons(kw, backend, expected):
    problems = {(1, 1): STAGE.model_signature(PROBLEM), (1, 12): STAGE.model_signature(PROBLEM)}
    hacks = {SOURCES.fingerprint(CUDA.replace("add_one", "hack")): "ref:hack.py"}
    assert STAGE.skip_reason(candidate(**kw), problems, hacks, backend) == expected


# ---- staging a synthetic source end to end --------------------------------------------------------------------

def git_repo(path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    env = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", *env, "-C", str(path), "commit", "-q", "-m", "files"], check=True)
    return path


def test_stage_a_leaderboard_and_a_kb_leaderboard_mirror(tmp_path):
    problems = tmp_path / "KernelBench"
    (problems / "level1").mkdir(parents=True)
    (problems / "level1" / "1_Add_one.py").write_text(PROBLEM)
    (problems / "level1" / "2_Add_two.py").write_text(PROBLEM.replace("x + 1", "x + 2"))
    (problems / "COMMIT").write_text("abc\n")
    entries = [  # problem_id is 0-based in the first leaderboard's raw_data.json
        {"level": 1, "problem_id": 0, "model": "m1", "torch_speedup": 1.1, "file": "f0", "code": CUDA},
        {"level": 1, "problem_id": 0, "model": "m2", "torch_speedup": 1.2, "file": "f1", "code": CUDA + "\n\n"},
        {"level": 1, "problem_id": 1, "model": "m1", "torch_speedup": 0.9, "file": "f2", "code": CUDA},
        {"level": 1, "problem_id": 0, "model": "m3", "torch_speedup": 2.0, "file": "f3", "code": TORCH_ONLY},
        {"level": 4, "problem_id": 0, "model": "m1", "torch_speedup": 1.0, "file": "f4", "code": CUDA},
    ]
    leaderboard = git_repo(tmp_path / "lb", {
        "docs/assets/raw_data.json": json.dumps(entries),
        "docs/assets/problems/l1_p1.py": PROBLEM.replace('"""Adds one."""', '"""+1"""'),
        "docs/assets/problems/l1_p2.py": PROBLEM.replace("x + 1", "x - 2"),       # changed upstream since
    })
    cuda2 = CUDA.replace("+ 1.0f", "+ 2.0f")
    fallback = cuda2.replace("return ext.run(x)", "return ext.run(x) if x.is_cuda else x + 2")
    kb = git_repo(tmp_path / "kb", {"data/kernels.json": json.dumps({"kernels": [
        {"id": "level_1_problem_2", "level": 1, "problem_id": 2, "filename": "2_Add_two.py",
         "reference_code": PROBLEM.replace("x + 1", "x + 2"),
         "models": {"r1": {"compiled": True, "correct": True, "code": cuda2},
                    "r2": {"compiled": True, "correct": False, "code": cuda2.replace("2.0f", "3.0f")},
                    "r3": {"compiled": False, "correct": False, "code": ""},
                    "r4": {"compiled": True, "correct": True, "code": fallback}}}]})})
    out = tmp_path / "honest"
    messages = []
    rows = STAGE.stage(["leaderboard", "kb_leaderboard", "cuda_l1"],
                       {"leaderboard": leaderboard, "kb_leaderboard": kb, "cuda_l1": tmp_path / "absent"},
                       problems, out, tmp_path / "no-kernelbench", say=messages.append)
    why = {(r["source"], r["original"]): r.get("reason", r["status"]) for r in rows}
    assert why == {
        ("leaderboard", "docs/assets/solutions/f0.py"): "staged",
        ("leaderboard", "docs/assets/solutions/f1.py"):
            "duplicate (of leaderboard:level_1_problem_1_sample_0_kernel.py)",
        ("leaderboard", "docs/assets/solutions/f2.py"): "problem_changed",
        ("leaderboard", "docs/assets/solutions/f3.py"): "not_cuda_or_triton (torch)",
        ("leaderboard", "docs/assets/solutions/f4.py"): "outside_levels",
        ("kb_leaderboard", "data/kernels.json:level_1_problem_2:r1"): "staged",
        ("kb_leaderboard", "data/kernels.json:level_1_problem_2:r2"): "source_incorrect",
        ("kb_leaderboard", "data/kernels.json:level_1_problem_2:r4"): "staged",
    }
    staged = out / "leaderboard" / "solutions" / "level_1_problem_1_sample_0_kernel.py"
    assert staged.read_text() == CUDA
    findings = {r["original"].rsplit(":", 1)[-1]: r["strict_findings"] for r in rows if r["status"] == "staged"}
    # r4 falls back to PyTorch off the GPU
    assert findings == {"docs/assets/solutions/f0.py": [], "r1": [], "r4": ["fallback"]}
    assert (out / "kb_leaderboard" / "solutions" / "level_1_problem_2_sample_1_kernel.py").exists()
    assert (out / "kb_leaderboard" / "solutions" / "level_1_problem_2_sample_0_kernel.py").read_text() == cuda2
    assert (out / "leaderboard" / "problems").resolve() == problems.resolve()
    by_file = {r.get("file"): r for r in rows}
    assert by_file["leaderboard/solutions/level_1_problem_1_sample_0_kernel.py"]["sha256"] == \
        __import__("hashlib").sha256(CUDA.encode()).hexdigest()
    lines = [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]
    assert len(lines) == 8 and len((out / "leaderboard" / "manifest.jsonl").read_text().splitlines()) == 5
    summary = json.loads((out / "SOURCES.json").read_text())
    assert summary["problems_commit"] == "abc" and summary["sources"]["cuda_l1"]["absent"]
    assert summary["sources"]["leaderboard"]["counts"]["staged"] == 1
    assert summary["sources"]["leaderboard"]["commit"] == SOURCES.Mirror(leaderboard).commit()
    assert any("no known hacks" in m for m in messages) and any("cuda_l1: no mirror" in m for m in messages)
    # staging again replaces the corpus, and --per-problem caps each source's problem
    rows = STAGE.stage(["leaderboard"], {"leaderboard": leaderboard}, problems, out, tmp_path / "x",
                       say=messages.append, per_problem=0)
    assert [r.get("reason") for r in rows if r["original"].endswith("f0.py")] == ["over_per_problem"]
    assert not (out / "kb_leaderboard").exists()
