"""Extraction of a solution from model replies: odd places, several blocks, truncation, reasoning, nothing."""

from __future__ import annotations

import ast

import pytest

from kerneljudge.generate.extract import OUTCOMES, Extraction, extract_solution

CPP_SOLUTION = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
torch::Tensor double_it(torch::Tensor x) {
  auto out = torch::empty_like(x);
  const float* xp = x.data_ptr<float>();
  float* op = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) op[i] = 2.0f * xp[i];
  return out;
}
"""

_ext = load_inline(name="double_it", cpp_sources=SOURCE, functions=["double_it"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.double_it(x.contiguous())
'''

TRITON_SOLUTION = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        double_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
'''


def ok(reply: str | None, backend: str | None = None) -> Extraction:
    e = extract_solution(reply, backend)
    assert e.outcome == "ok", e.note
    assert e.code is not None and e.code.endswith("\n") and e.note
    return e


def no_code(reply: str | None, backend: str | None = None) -> Extraction:
    e = extract_solution(reply, backend)
    assert e.outcome == "no_code" and e.code is None and e.note, e
    return e


def same(code: str, expected: str) -> bool:
    return code.strip() == expected.strip()


# --- the ordinary cases ----------------------------------------------------------------------------------


def test_single_python_block_with_prose_around():
    reply = f"I fused the scale into one loop.\n\n```python\n{CPP_SOLUTION}```\n\nThis avoids a temporary."
    e = ok(reply, "cpp")
    assert same(e.code, CPP_SOLUTION)
    assert "block 1 of 1" in e.note


@pytest.mark.parametrize("opening", ["```python", "```py", "```Python", "```python3", "```python title=solution.py",
                                     "```{.python}", "~~~python", "````python", "```python:solution.py"])
def test_fence_info_variants(opening):
    closing = opening[:4] if opening.startswith("````") else opening[:3]
    e = ok(f"Solution:\n{opening}\n{CPP_SOLUTION}{closing}\n")
    assert same(e.code, CPP_SOLUTION)


def test_crlf_reply():
    reply = f"Here:\r\n```python\r\n{CPP_SOLUTION}```\r\n".replace("\n", "\r\n").replace("\r\r\n", "\r\n")
    e = ok(reply)
    assert "\r" not in e.code and same(e.code, CPP_SOLUTION)


def test_indented_fence_in_a_list_is_dedented():
    body = "\n".join(("   " + line) if line else "" for line in CPP_SOLUTION.splitlines())
    e = ok(f"Steps:\n1. Write the kernel:\n   ```python\n{body}\n   ```\n2. Done.")
    assert same(e.code, CPP_SOLUTION)
    ast.parse(e.code)


def test_longer_fence_keeps_inner_backticks():
    code = CPP_SOLUTION.replace('SOURCE = r"""', 'NOTE = """```not a fence```"""\nSOURCE = r"""')
    e = ok(f"````python\n{code}````\n")
    assert same(e.code, code)


# --- several blocks --------------------------------------------------------------------------------------


def test_cuda_block_then_python_block():
    reply = ("The kernel:\n```cuda\n__global__ void double_kernel(float* x) { x[0] *= 2; }  // used by ModelNew\n```\n"
             f"And the module:\n```python\n{CPP_SOLUTION}```\n")
    e = ok(reply, "cuda")
    assert same(e.code, CPP_SOLUTION) and "block 2 of 2" in e.note


def test_cuda_only_block_is_not_a_solution():
    e = no_code("```cuda\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n// class ModelNew would call this\n```")
    assert "cuda" in e.note and "no Python solution" in e.note


def test_python_tag_on_the_wrong_language_and_the_reverse():
    e = ok(f"```cpp\n{CPP_SOLUTION}```")     # Python code tagged cpp still counts
    assert same(e.code, CPP_SOLUTION) and "tagged cpp but it is Python" in e.note


def test_solution_block_and_usage_block():
    usage = "model = ModelNew()\nprint(model(torch.randn(4, 4)))\n"
    e = ok(f"```python\n{CPP_SOLUTION}```\nUse it like this:\n```python\n{usage}```\n```bash\npython run.py\n```")
    assert same(e.code, CPP_SOLUTION)


def test_two_complete_solutions_takes_the_last():
    improved = CPP_SOLUTION.replace("return _ext.double_it(x.contiguous())", "return _ext.double_it(x)  # v2")
    e = ok(f"First try:\n```python\n{CPP_SOLUTION}```\nBetter:\n```python\n{improved}```")
    assert same(e.code, improved) and "1 other block also defines ModelNew" in e.note


def test_complete_earlier_solution_beats_truncated_later_one():
    partial = CPP_SOLUTION[: CPP_SOLUTION.index("    def forward")]
    e = ok(f"```python\n{CPP_SOLUTION}```\nA faster variant:\n```python\n{partial}")
    assert same(e.code, CPP_SOLUTION)


def test_self_contained_beats_a_later_fragment():
    fragment = ("class ModelNew(nn.Module):\n    def forward(self, x):\n"
                "        return _ext.double_it(x)  # same as above\n")
    e = ok(f"```python\n{CPP_SOLUTION}```\nOnly forward changes:\n```python\n{fragment}```")
    assert same(e.code, CPP_SOLUTION)


def test_python_tag_preferred_over_untagged():
    improved = CPP_SOLUTION.replace("x.contiguous()", "x")
    e = ok(f"```python\n{CPP_SOLUTION}```\n```\n{improved}```")
    assert same(e.code, CPP_SOLUTION)


def test_requested_backend_breaks_ties():
    reply = f"Triton:\n```python\n{TRITON_SOLUTION}```\nOr C++:\n```python\n{CPP_SOLUTION}```"
    assert same(ok(reply, "triton").code, TRITON_SOLUTION)
    assert same(ok(reply, "cpp").code, CPP_SOLUTION)
    assert same(ok(reply).code, CPP_SOLUTION)   # no backend asked: the last


def test_backend_mismatch_is_noted_not_refused():
    e = ok(f"```python\n{TRITON_SOLUTION}```", "cuda")
    assert "asked for cuda, the code looks like triton" in e.note


def test_solution_split_over_blocks_is_joined():
    reply = ("First the extension:\n```python\nimport torch\nimport torch.nn as nn\n"
             "from torch.utils.cpp_extension import load_inline\n"
             "_ext = load_inline(name='e', cpp_sources='', functions=[])\n```\n"
             "Then the module:\n```python\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
             "        return _ext.f(x)\n```")
    e = ok(reply)
    assert "joined with earlier block 1" in e.note
    tree = ast.parse(e.code)
    assert [type(n).__name__ for n in tree.body][-1] == "ClassDef" and "load_inline(" in e.code


def test_unresolvable_names_are_noted():
    e = ok("```python\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return kernel(x)\n```")
    assert "uses names it does not define: kernel, nn" in e.note


# --- no fences, truncation -------------------------------------------------------------------------------


def test_raw_code_without_fences():
    e = ok(CPP_SOLUTION)
    assert e.code == CPP_SOLUTION and "raw code" in e.note


def test_raw_code_with_prose_before_and_after():
    reply = f"Sure! Here is the optimized version of the model.\n\n{CPP_SOLUTION}\nThis keeps everything in one pass."
    e = ok(reply)
    assert same(e.code, CPP_SOLUTION) and "dropped at the edges" in e.note


def test_raw_code_with_prose_in_the_middle_keeps_every_code_line():
    reply = CPP_SOLUTION.replace("\n\nclass ModelNew", "\n\nNow the module that calls the kernel:\n\nclass ModelNew")
    e = ok(reply)
    assert "kept as comments" in e.note
    assert e.code == reply.replace("Now the module", "# Now the module")   # code lines untouched


def test_opening_fence_glued_to_prose():
    e = ok(f"Here you go: ```python\n{CPP_SOLUTION}```\nEnjoy!")
    assert same(e.code, CPP_SOLUTION)


def test_raw_code_with_a_real_syntax_error_is_passed_on_unchanged():
    broken = CPP_SOLUTION.replace("class ModelNew(nn.Module):", "class ModelNew(nn.Module)")
    e = ok(broken)
    assert e.code == broken and "does not parse" in e.note


def test_unterminated_final_fence():
    cut = CPP_SOLUTION[: CPP_SOLUTION.index("return _ext")]
    e = ok(f"Here is the code:\n```python\n{cut}")
    assert e.code.strip() == cut.strip()
    assert "truncated" in e.note and "does not parse" in e.note


def test_unterminated_fence_that_still_parses():
    e = ok(f"```python\n{CPP_SOLUTION}")
    assert same(e.code, CPP_SOLUTION) and "truncated" in e.note and "does not parse" not in e.note


def test_fenced_broken_python_is_still_the_solution():
    broken = CPP_SOLUTION.replace("def forward(self, x):", "def forward(self, x)")
    e = ok(f"```python\n{broken}```")
    assert same(e.code, broken) and "does not parse" in e.note


# --- reasoning sections ----------------------------------------------------------------------------------


def test_draft_inside_think_is_ignored():
    draft = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x  # draft\n"
    reply = f"<think>\nMaybe:\n```python\n{draft}```\nNo, use a kernel.\n</think>\n```python\n{CPP_SOLUTION}```"
    e = ok(reply)
    assert same(e.code, CPP_SOLUTION) and "reasoning section set aside" in e.note


@pytest.mark.parametrize("open_tag,close_tag", [("<thinking>", "</thinking>"), ("<THINK>", "</THINK>"),
                                                ("<reasoning>", "</reasoning>")])
def test_other_reasoning_tags(open_tag, close_tag):
    reply = f"{open_tag}```python\nclass ModelNew: pass\n```{close_tag}\n{CPP_SOLUTION}"
    assert same(ok(reply).code, CPP_SOLUTION)


def test_closing_tag_without_opening_tag():
    reply = f"I should write a loop.\n```python\nclass ModelNew: pass\n```\n</think>\n\n```python\n{CPP_SOLUTION}```"
    assert same(ok(reply).code, CPP_SOLUTION)


def test_code_only_inside_reasoning_is_used_with_a_note():
    e = ok(f"<think>\nThe answer:\n```python\n{CPP_SOLUTION}```\n</think>\n")
    assert same(e.code, CPP_SOLUTION) and "taken from inside it" in e.note


def test_reply_cut_off_while_reasoning():
    e = no_code("<think>\nLet me think about tiling. The row length is")
    assert "reasoning" in e.note


# --- nothing usable --------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [None, "", "   \n\t\n"])
def test_empty_reply(reply):
    assert no_code(reply).note == "empty reply"


def test_only_prose():
    e = no_code("I am sorry, but I cannot write this kernel without more information about the hardware.")
    assert "prose" in e.note


def test_python_without_modelnew():
    e = no_code("```python\nimport torch\n\nclass Model(torch.nn.Module):\n"
                "    def forward(self, x):\n        return x\n```")
    assert "none defines class ModelNew" in e.note


def test_raw_python_without_modelnew():
    e = no_code("import torch\nx = torch.randn(3)\nprint(x)\n")
    assert "defines no class ModelNew" in e.note


# --- hacks are extracted (judging them is the judge's job) -------------------------------------------------


@pytest.mark.parametrize("hack", [
    "import time\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
    "        time.perf_counter = lambda: 0.0\n        return x\n",
    "import os\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
    "        return torch.load(os.environ['KERNELJUDGE_EXPECTED'])\n",
    "import torch\nfrom problem import Model\n\nModelNew = torch.compile(Model)\n",
])
def test_hack_looking_solution_is_still_extracted(hack):
    e = ok(f"Here is a very fast solution:\n```python\n{hack}```", "cuda")
    assert same(e.code, hack)


def test_modelnew_defined_by_assignment():
    code = ("import torch\n\nclass Fast(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n"
            "ModelNew = Fast\n")
    assert same(ok(f"```python\n{code}```").code, code)


# --- the contract ----------------------------------------------------------------------------------------


def test_invariants_over_many_replies():
    replies = [None, "", "text", CPP_SOLUTION, f"```python\n{CPP_SOLUTION}", "```cuda\nint x;\n```",
               f"<think>{CPP_SOLUTION}", "```\n```", "```python\n```", "~~~\n", "````", "<think></think>",
               "class ModelNew", "```python\nclass ModelNew(:\n```", "\x00\x01", "```" * 7, "ModelNew = 1"]
    for reply in replies:
        e = extract_solution(reply)
        assert e.outcome in OUTCOMES and e.note
        assert (e.code is None) == (e.outcome == "no_code")
        assert e.to_dict()["outcome"] == e.outcome


def test_bad_arguments():
    with pytest.raises(ValueError):
        extract_solution("x", backend="hip")
    with pytest.raises(ValueError):
        Extraction("code", "no_code", "inconsistent")
    with pytest.raises(ValueError):
        Extraction(None, "maybe", "unknown outcome")
