"""import-hf: a parquet file shaped like the KernelBench dataset (written here) becomes a problem folder that
run's file mapping, the problem reader and the judge accept; bad rows are reported, files never
overwritten without --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kerneljudge.results.hf_import import HFImportError, file_stem, import_hf
from kerneljudge.core.mapping import find_problems, match_solution
from kerneljudge.core.problem import read_problem

from .verdict_logs import cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

PROBLEM = '''import torch
import torch.nn as nn

N = {n}

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * {scale}

def get_inputs():
    return [torch.randn(N, 8)]

def get_init_inputs():
    return []
'''


def write_parquet(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"code": [r.get("code") for r in rows], "level": [r.get("level") for r in rows],
                      "name": [r.get("name") for r in rows], "problem_id": [r.get("problem_id") for r in rows]})
    pq.write_table(table, path)
    return path


def dataset(root: Path) -> Path:
    """Two splits as the hub stores them: data/level_1-00000-of-00001.parquet, data/level_2-...."""
    write_parquet(root / "data" / "level_1-00000-of-00001.parquet", [
        {"code": PROBLEM.format(n=4, scale=2), "level": 1, "name": "1_Square_matrix_multiplication_", "problem_id": 1},
        {"code": PROBLEM.format(n=5, scale=3), "level": 1, "name": "ReLU", "problem_id": 19},
        {"code": "def broken(:\n", "level": 1, "name": "3_Broken", "problem_id": 3},
        {"code": "import torch\nclass Model: pass\n", "level": 1, "name": "4_NoInputs", "problem_id": 4},
        {"code": PROBLEM.format(n=6, scale=4), "level": 1, "name": "1_Again", "problem_id": 1},
    ])
    write_parquet(root / "data" / "level_2-00000-of-00001.parquet", [
        {"code": PROBLEM.format(n=7, scale=5), "level": 2, "name": "../12_Gemm Scale", "problem_id": 12},
        {"code": PROBLEM.format(n=8, scale=6), "level": None, "name": "13_NoLevel", "problem_id": 13},
        {"code": "", "level": 2, "name": "14_Empty", "problem_id": 14},
    ])
    return root


def test_file_stems():
    assert file_stem(1, "1_Square_matrix_multiplication_") == "1_Square_matrix_multiplication_"
    assert file_stem(19, "ReLU.py") == "19_ReLU"
    assert file_stem(12, "../12_Gemm Scale") == "12____12_Gemm_Scale"
    assert "/" not in file_stem(5, "a/b\\c") and not file_stem(5, "..").startswith(".")


def test_import_writes_valid_problems_and_reports_the_rest(tmp_path):
    out = tmp_path / "problems"
    result = import_hf(dataset(tmp_path / "hf"), out)
    assert sorted(result.written) == ["level1/19_ReLU", "level1/1_Square_matrix_multiplication_",
                                      "level2/12____12_Gemm_Scale"]
    why = sorted(s.why for s in result.skipped)
    assert len(why) == 5
    assert any("not valid Python" in w for w in why) and any("does not define get_inputs" in w for w in why)
    assert any("already came from level_1-00000-of-00001.parquet row 0" in w for w in why)
    assert any("level None" in w for w in why) and "no code" in why
    assert not list(out.rglob(".*"))  # no temporary file left behind
    p = read_problem(out / "level1" / "19_ReLU.py")
    assert (p.id, p.level, p.number, p.constants) == ("level1/19_ReLU", 1, 19, {"N": 5})
    # the upstream solution names that `kerneljudge run` maps
    problems = find_problems(out)
    assert match_solution(Path("level_1_problem_19_sample_0_kernel.py"), problems).id == "level1/19_ReLU"
    assert match_solution(Path("level_2_problem_12_sample_3_kernel.py"), problems).level == 2
    manifest = json.loads((out / "kernelbench_hf_import.json").read_text())
    assert len(manifest["files"]) == 2 and len(manifest["skipped"]) == 5


def test_never_overwrites_without_force(tmp_path):
    hf = dataset(tmp_path / "hf")
    out = tmp_path / "problems"
    import_hf(hf, out)
    again = import_hf(hf, out)
    assert again.written == [] and len(again.unchanged) == 3
    relu = out / "level1" / "19_ReLU.py"
    relu.write_text(relu.read_text() + "# edited by hand\n")
    square = out / "level1" / "1_Square_matrix_multiplication_.py"
    square.unlink()
    with pytest.raises(HFImportError, match="differ from the dataset.*--force"):
        import_hf(hf, out)
    assert "edited by hand" in relu.read_text() and not square.exists()  # nothing written at all
    forced = import_hf(hf, out, force=True)
    assert sorted(forced.written) == ["level1/19_ReLU", "level1/1_Square_matrix_multiplication_"]
    assert "edited by hand" not in relu.read_text()


def test_one_file_a_level_filter_and_bad_input(tmp_path, capsys):
    hf = dataset(tmp_path / "hf")
    one = hf / "data" / "level_2-00000-of-00001.parquet"
    assert cli("import-hf", str(one), "--out", str(tmp_path / "p2")) == 0
    assert [p.name for p in (tmp_path / "p2").rglob("*.py")] == ["12____12_Gemm_Scale.py"]
    err = capsys.readouterr().err
    assert "skipped level_2-00000-of-00001.parquet row 1: level None" in err and "1 problem file(s) written" in err
    assert cli("import-hf", str(hf), "--out", str(tmp_path / "p1"), "--level", "1", "--json") == 0
    printed = json.loads(capsys.readouterr().out)
    assert len(printed["written"]) == 2 and all(w.startswith("level1/") for w in printed["written"])
    bad = write_parquet(tmp_path / "bad.parquet", [{"code": "x", "level": 1, "name": "n", "problem_id": 1}])
    pq.write_table(pa.table({"code": ["x"], "level": [1]}), bad)
    assert cli("import-hf", str(bad), "--out", str(tmp_path / "p3")) == 3
    assert "no column name, problem_id" in capsys.readouterr().err
    assert cli("import-hf", str(tmp_path / "empty-dir-x"), "--out", str(tmp_path / "p4")) == 3
    (tmp_path / "notparquet.parquet").write_text("hello")
    assert cli("import-hf", str(tmp_path / "notparquet.parquet"), "--out", str(tmp_path / "p5")) == 3


@pytest.mark.slow
def test_an_imported_problem_is_judged(tmp_path, cache_dir):
    from kerneljudge.api import judge
    from kerneljudge.core.mapping import pair_solutions

    out = tmp_path / "problems"
    import_hf(dataset(tmp_path / "hf"), out, levels={1})
    sols = tmp_path / "solutions"
    sols.mkdir()
    (sols / "level_1_problem_19_sample_0_kernel.py").write_text(
        "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n\n    def forward(self, x):\n        return torch.relu(x) * 3\n")
    pairs, unmatched = pair_solutions(sols, find_problems(out))
    assert unmatched == [] and len(pairs) == 1
    problem, solution = pairs[0]
    v = judge(problem, solution, device="cpu", policy="lenient", trials=1, timing=False, cache_dir=cache_dir)
    assert v.verdict == "correct", v.reason
