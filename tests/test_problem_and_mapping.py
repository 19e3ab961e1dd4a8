from pathlib import Path

import pytest

from kerneljudge.core.mapping import find_problems, match_solution, pair_solutions
from kerneljudge.core.problem import ProblemError, read_problem
from kerneljudge.results.verdict_rows import fast_p, fast_p_table

PROBLEM = '''
import torch
import torch.nn as nn
batch_size = 16
dim = 32
class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x)
def get_inputs():
    return [torch.randn(batch_size, dim)]
def get_init_inputs():
    return []
SMALL = {"batch_size": 2}
HELD_OUT = [{"batch_size": 7}]
CATEGORY = "activation"
'''


def test_read_problem_metadata_without_executing(tmp_path):
    d = tmp_path / "level1"
    d.mkdir()
    f = d / "19_tanh.py"
    f.write_text(PROBLEM + "\nraise SystemExit('never executed by the parent')\n")
    p = read_problem(f)
    assert p.id == "level1/19_tanh" and p.level == 1 and p.number == 19 and p.name == "tanh"
    assert p.constants == {"batch_size": 16, "dim": 32}
    assert p.preset("small") == {"batch_size": 2} and p.held_out(small=False) == [{"batch_size": 7}]
    assert p.category == "activation"


def test_bad_problem_files(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("def get_inputs(): pass\n")
    with pytest.raises(ProblemError, match="Model"):
        read_problem(f)
    f.write_text("def (:\n")
    with pytest.raises(ProblemError, match="not valid Python"):
        read_problem(f)
    with pytest.raises(ProblemError, match="cannot read"):
        read_problem(tmp_path / "missing.py")


def test_solution_names_map_to_problems(tmp_path):
    probs = tmp_path / "problems"
    (probs / "level1").mkdir(parents=True)
    (probs / "level2").mkdir(parents=True)
    (probs / "level1" / "3_tanh.py").write_text(PROBLEM)
    (probs / "level2" / "3_other.py").write_text(PROBLEM)
    (probs / "level1" / "40_gelu.py").write_text(PROBLEM)
    problems = find_problems(probs)
    assert len(problems) == 3
    sols = tmp_path / "solutions"
    sols.mkdir()
    for name in ("level_2_problem_3_sample_0_kernel.py", "level_1_problem_40_sample_1_kernel.py",
                 "3_tanh__cuda.py", "40_gelu.py", "nothing_here.py"):
        (sols / name).write_text("class ModelNew: pass\n")
    pairs, unmatched = pair_solutions(sols, problems)
    got = {s.name: p.id for p, s in pairs}
    assert got == {"level_2_problem_3_sample_0_kernel.py": "level2/3_other",
                   "level_1_problem_40_sample_1_kernel.py": "level1/40_gelu",
                   "3_tanh__cuda.py": "level1/3_tanh", "40_gelu.py": "level1/40_gelu"}
    assert [u.name for u in unmatched] == ["nothing_here.py"]
    assert match_solution(Path("level_9_problem_3_sample_0_kernel.py"), problems) is None


def test_fast_p():
    rows = [{"accepted": True, "speedup": 2.5}, {"accepted": True, "speedup": 0.8},
            {"accepted": False, "speedup": 5.0}, {"accepted": False, "speedup": None}]
    assert fast_p(rows, 0) == 0.5
    assert fast_p(rows, 1.0) == 0.25
    assert fast_p_table(rows)["fast_2"] == 0.25
    assert fast_p([], 1) == 0.0
