"""Prompts: the problem as a model sees it, messages, shot examples, feedback without secrets."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kerneljudge.analysis import analyze, detect_backend
from kerneljudge.generate.feedback import bound_excerpt, feedback_from_verdict, feedback_no_code, render_feedback
from kerneljudge.generate.hardware import H200_EXTRA, hardware_from_spec, render_hardware
from kerneljudge.generate.messages import BACKEND_NAMES, build_messages, build_refinement_messages
from kerneljudge.generate.scrub import held_out_shapes, problem_source_for_prompt
from kerneljudge.generate.templates import BACKENDS, SHOT_EXAMPLES, TEMPLATES, fenced, shot_examples, template
from kerneljudge.core.paths import prompts_root, problems_root
from kerneljudge.core.problem import METADATA_NAMES, ProblemError
from kerneljudge.judging.roofline import H200, GpuSpec
from kerneljudge.core.types import Verdict

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "kerneljudge"
SOFTMAX = (PACKAGE / "data" / "examples" / "problems" / "2_softmax_rows.py").read_text()
SHOTS = PACKAGE / "data" / "prompts" / "examples"


def _top_level_metadata(text: str) -> list[str]:
    names = []
    for node in ast.parse(text).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id in METADATA_NAMES]
    return names


# --- problem_source_for_prompt -------------------------------------------------------------------------


def test_metadata_removed_from_bundled_problem():
    shown = problem_source_for_prompt(SOFTMAX)
    assert _top_level_metadata(shown) == []
    for secret in ("HELD_OUT", "SMALL", "CATEGORY", "1021", "5003", "77", "kerneljudge metadata"):
        assert secret not in shown
    # everything before the metadata block is untouched, byte for byte
    cut = SOFTMAX.index("# kerneljudge metadata")
    assert shown == SOFTMAX[:cut].rstrip() + "\n"


def test_metadata_removal_keeps_everything_else_byte_for_byte():
    text = textwrap.dedent('''\
        """Doc mentioning HELD_OUT = [{"n": 3}] stays: it is a docstring."""
        import torch  # comment kept
        import torch.nn as nn

        n = 64; SMALL = {"n": 8}
        CATEGORY = "x"; m = 2   # trailing

        # the shapes the judge checks
        # (a second comment line)
        HELD_OUT = [
            {"n": 1021},
        ]  # judge only
        TAGS: list = ["a"]

        class Model(nn.Module):
            def forward(self, x):
                SMALL = 3          # a local, not metadata
                return x * SMALL

        def get_inputs():
            return [torch.randn(n, m)]

        def get_init_inputs():
            return []
        HELD_OUT_SMALL = [{"n": 5}]
        TOLERANCE = {"fp32": {"atol": 1e-3}}


        ''')
    shown = problem_source_for_prompt(text)
    expected = textwrap.dedent('''\
        """Doc mentioning HELD_OUT = [{"n": 3}] stays: it is a docstring."""
        import torch  # comment kept
        import torch.nn as nn

        n = 64
        m = 2   # trailing


        class Model(nn.Module):
            def forward(self, x):
                SMALL = 3          # a local, not metadata
                return x * SMALL

        def get_inputs():
            return [torch.randn(n, m)]

        def get_init_inputs():
            return []


        ''')   # the file's own two trailing blank lines stay
    assert shown == expected
    assert "1021" not in shown and "judge only" not in shown and "shapes the judge" not in shown


def test_metadata_removal_crlf_and_non_ascii_columns():
    text = 'import torch\r\nµ = 1; SMALL = {"n": 2}\r\nx = "é"\r\nHELD_OUT = [{"n": 7}]\r\n'
    assert problem_source_for_prompt(text) == 'import torch\r\nµ = 1\r\nx = "é"\r\n'


def test_metadata_free_source_is_returned_unchanged():
    text = "import torch\n\n\nclass Model:\n    pass\n\n\n"
    assert problem_source_for_prompt(text) == text


def test_comment_inside_a_string_above_metadata_is_kept():
    text = 'SRC = """\n# not a comment\n"""\nSMALL = {}\n'
    assert problem_source_for_prompt(text) == 'SRC = """\n# not a comment\n"""\n'


def test_invalid_problem_raises():
    with pytest.raises(ProblemError):
        problem_source_for_prompt("def broken(:\n")


def test_whole_suite_shown_without_metadata():
    files = sorted(problems_root().glob("level*/*.py"))
    assert len(files) > 200
    for path in files:
        text = path.read_text()
        shown = problem_source_for_prompt(text)
        assert _top_level_metadata(shown) == [], path
        defined = {n.name for n in ast.parse(shown).body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
        assert {"Model", "get_inputs", "get_init_inputs"} <= defined, path
        # only whole lines go (no suite problem puts metadata after a ';'): the rest is a subsequence
        it = iter(text.splitlines())
        assert all(line in it for line in shown.splitlines()), path
        visible = {}
        for node in ast.parse(shown).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    visible[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
        for preset in held_out_shapes(text):
            for key, value in preset.items():
                if visible.get(key) != value:
                    pattern = rf"\b{re.escape(key)}\s*=\s*{re.escape(repr(value))}(?![\w.])"
                    assert not re.search(pattern, shown), (path, key)


def test_held_out_shapes():
    assert held_out_shapes(SOFTMAX) == [{"batch_size": 1021, "dim": 5003}, {"batch_size": 3, "dim": 77}]
    assert held_out_shapes("x = 1\n") == []


# --- messages ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shots,count", [(0, 0), (1, 1), ("few", 3), (2, 2), ("zero", 0), ("one", 1)])
def test_build_messages_shapes(backend, shots, count):
    messages = build_messages(SOFTMAX, backend, shots=shots)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert all(isinstance(m["content"], str) and m["content"] for m in messages)
    user = messages[1]["content"]
    assert problem_source_for_prompt(SOFTMAX).strip() in user
    assert "HELD_OUT" not in user and "5003" not in user
    assert user.count("a solution:") == count
    assert BACKEND_NAMES[backend] in user
    assert "will run on this hardware" not in user
    assert not re.search(r"\$[A-Za-z_{]", user), "unfilled template placeholder"
    assert json.loads(json.dumps(messages)) == messages
    for stem in SHOT_EXAMPLES[:count]:
        assert (SHOTS / backend / f"{stem}.py").read_text().strip() in user
    for stem in SHOT_EXAMPLES[count:]:
        assert (SHOTS / backend / f"{stem}.py").read_text().strip() not in user


def test_backend_specific_instructions():
    cuda = build_messages(SOFTMAX, "cuda")[1]["content"]
    triton = build_messages(SOFTMAX, "triton")[1]["content"]
    cpp = build_messages(SOFTMAX, "cpp")[1]["content"]
    assert "cuda_sources" in cuda and "getCurrentCUDAStream" in cuda
    assert "@triton.jit" in triton and "TRITON_INTERPRET" in triton
    assert "cpp_sources" in cpp and "no `cuda_sources`" in cpp and "at::parallel_for" in cpp


def test_hardware_block_from_gpu_spec():
    # a fixed spec: the packaged H200 ceilings change when they are re-measured
    spec = GpuSpec(name="NVIDIA H200", memory_bandwidth=4.3e12, fp32_flops=5.1e13, tf32_flops=3.9e14,
                   bf16_flops=7.9e14, fp16_flops=7.9e14)
    hardware = hardware_from_spec(spec, **H200_EXTRA)
    assert hardware["sm_count"] == 132 and hardware["name"] == "NVIDIA H200"
    user = build_messages(SOFTMAX, "cuda", hardware=hardware)[1]["content"]
    for fact in ("NVIDIA H200", "132", "4.3 TB/s", "51 TFLOP/s", "790 TFLOP/s", "L2 cache: 50 MiB",
                 "will run on this hardware"):
        assert fact in user
    plain = hardware_from_spec(H200, sm_count=None, l2_bytes=None)
    assert "sm_count" not in plain and "l2_bytes" not in plain
    block = render_hardware({"name": "Test GPU", "sm_count": 10, "driver": "555"})
    assert "- GPU: Test GPU" in block and "- Streaming multiprocessors (SMs): 10" in block and "- driver: 555" in block


def test_precision_and_bad_arguments():
    assert "bfloat16" in build_messages(SOFTMAX, "triton", precision="bf16")[1]["content"]
    with pytest.raises(ValueError):
        build_messages(SOFTMAX, "hip")
    with pytest.raises(ValueError):
        build_messages(SOFTMAX, "cuda", shots=7)
    with pytest.raises(ValueError):
        build_messages(SOFTMAX, "cuda", precision="fp8")


def test_every_template_is_used_and_present():
    for name in TEMPLATES:
        assert template(name).strip(), name
    listed = {p.name for p in prompts_root().glob("*.md")}
    assert listed == set(TEMPLATES)


def test_fence_longer_than_backticks_inside():
    block = fenced('s = """```python\nx\n```"""')
    assert block.startswith("````python\n") and block.endswith("\n````")


# --- shot examples -------------------------------------------------------------------------------------


def _signature(tree: ast.Module, cls: str, method: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    return [a.arg for a in item.args.args]
    raise AssertionError(f"{cls}.{method} not found")


@pytest.mark.parametrize("backend", BACKENDS)
def test_shot_examples_are_valid_strict_solutions(backend):
    pairs = shot_examples(backend)
    assert len(pairs) == len(SHOT_EXAMPLES) == 3
    for problem, solution in pairs:
        ptree, stree = ast.parse(problem), ast.parse(solution)
        assert _top_level_metadata(problem) == []
        assert detect_backend(solution) == backend
        findings = analyze(solution, policy="strict")
        assert not findings, [f.to_dict() for f in findings]
        for method in ("__init__", "forward"):
            assert _signature(stree, "ModelNew", method) == _signature(ptree, "Model", method)


@pytest.mark.slow
def test_triton_shot_examples_match_their_problems_in_the_interpreter():
    """Runs the Triton examples with TRITON_INTERPRET=1 on the CPU against the PyTorch reference."""
    pytest.importorskip("triton")
    script = textwrap.dedent('''
        import importlib.util, sys, torch
        from pathlib import Path
        root = Path(sys.argv[1])
        shapes = {"1_swish_residual": [dict(batch_size=3, features=77), dict(batch_size=2, features=1030)],
                  "2_rms_norm": [dict(batch_size=3, features=77, eps=1e-6),
                                 dict(batch_size=2, features=2500, eps=1e-5)],
                  "3_mean_pool_tanh": [dict(batch_size=2, steps=5, channels=131),
                                       dict(batch_size=1, steps=3, channels=7)]}
        def load(path):
            spec = importlib.util.spec_from_file_location(path.stem + path.parent.name, path)
            mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
        for stem, presets in shapes.items():
            prob, sol = load(root / "problems" / f"{stem}.py"), load(root / "triton" / f"{stem}.py")
            for preset in presets:
                for k, v in preset.items():
                    setattr(prob, k, v)
                torch.manual_seed(0)
                ref = prob.Model(*prob.get_init_inputs())
                new = sol.ModelNew(*prob.get_init_inputs())
                new.load_state_dict(ref.state_dict())
                inputs = prob.get_inputs()
                with torch.no_grad():
                    want, got = ref(*inputs), new(*inputs)
                assert got.shape == want.shape and got.dtype == want.dtype, (stem, preset)
                assert torch.allclose(got, want, atol=1e-5, rtol=1e-4), (stem, preset, (got - want).abs().max())
        print("ok")
        ''')
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", script, str(SHOTS)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]


# --- feedback ------------------------------------------------------------------------------------------


def _verdict(**fields) -> dict:
    base = dict(verdict="wrong_output", accepted=False, reason="", problem="/secret/path/p.py",
                solution="/secret/path/s.py", problem_id="level1/2_softmax_rows")
    base.update(fields)
    return Verdict.from_dict(base).to_dict()


def test_held_out_failure_hides_the_shape():
    v = _verdict(reason="correct at the benchmark shape but wrong at a held-out shape (batch_size=1021, dim=5003): "
                        "output differs at [1020, 5002]: got 0.25, expected 0.5 (|err| 0.25 > allowed 0.001)",
                 flags=["shape_specialized"])
    fb = feedback_from_verdict(v)
    text = json.dumps(fb) + render_feedback(fb)
    for secret in ("1021", "5003", "1020", "5002", "batch_size", "held-out", "/secret/path"):
        assert secret not in text
    assert "wrong at a shape not shown to you" in fb["reason"]
    m = fb["mismatch"]
    assert m["at_hidden_shape"] and "index" not in m and m["got"] == 0.25 and m["expected"] == 0.5
    assert fb["flags"] == ["shape_specialized"]


def test_held_out_shape_tail_variants_are_hidden():
    for tail, leaked in (("output shape (3, 78) differs from the reference (3, 77)", "77"),
                         ("12 of 231 int64 elements differ (integer outputs must match exactly)", "231"),
                         ("output differs at [2, 76]: got 1, expected 2 (|err| 1 > allowed 0.1)", "76")):
        reason = f"correct at the benchmark shape but wrong at a held-out shape (n=(3, 77), k=1): {tail}"
        fb = feedback_from_verdict(_verdict(reason=reason))
        assert leaked not in fb["reason"] and "shape not shown to you" in fb["reason"], fb["reason"]


def test_hidden_shapes_redact_error_excerpts():
    text = SOFTMAX
    v = _verdict(verdict="runtime_error", reason="the solution raised: RuntimeError: shape '[1021, 5003]' is invalid",
                 error_excerpt="Traceback (most recent call last):\n  File \"s.py\", line 9\n"
                               "RuntimeError: shape '[1021, 5003]' is invalid for input of size 5108063; "
                               "batch_size=1021\nseed=4611686018427387903 init_seed: 77")
    fb = feedback_from_verdict(v, hidden_shapes=held_out_shapes(text))
    blob = fb["reason"] + fb["error_excerpt"]
    for secret in ("1021", "5003", "5108063", "4611686018427387903", "77"):
        assert secret not in blob, secret
    assert "line 9" in fb["error_excerpt"] and "RuntimeError" in fb["error_excerpt"]


def test_seed_like_numbers_always_hidden():
    fb = feedback_from_verdict(_verdict(verdict="runtime_error", reason="x",
                                          error_excerpt="generator seed 123 used 98765432109876543"))
    assert "98765432109876543" not in fb["error_excerpt"] and "seed 123" not in fb["error_excerpt"]


def test_build_error_excerpt_is_bounded_and_keeps_the_error():
    noise = [f"[{i}/9] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=x -I/usr/include/very/long/path/{i}"
             for i in range(200)]
    log = "\n".join(noise[:100] + ["main.cpp:42:7: error: 'foo' was not declared in this scope"] + noise[100:]
                    + ["RuntimeError: Error building extension 'x'"])
    fb = feedback_from_verdict(_verdict(verdict="build_error", reason="the solution failed to build: ...",
                                          error_excerpt=log), max_excerpt_chars=1500)
    excerpt = fb["error_excerpt"]
    assert len(excerpt) <= 1500
    assert "main.cpp:42:7: error: 'foo' was not declared" in excerpt
    assert excerpt.rstrip().endswith("RuntimeError: Error building extension 'x'")
    assert "lines left out" in excerpt
    assert bound_excerpt("short\nlog") == "short\nlog"


def test_wrong_output_mismatch_and_findings_and_profile():
    v = _verdict(reason="trial 1: output differs at [3, 17]: got 0.125, expected 0.5 (|err| 0.375 > allowed 0.002)",
                 findings=[{"code": "kernel_not_called", "line": 12, "message": "kernel k is never called",
                            "blocking": False}])
    fb = feedback_from_verdict(v, profile=[("softmax_kernel", 0.75), {"name": "copy", "ms": 0.25},
                                             ("junk", "nan?")])
    m = fb["mismatch"]
    assert m["kind"] == "values" and m["where"] == "trial 1" and m["index"] == [3, 17]
    assert (m["got"], m["expected"], m["abs_err"], m["allowed"]) == (0.125, 0.5, 0.375, 0.002)
    assert fb["findings"] == [{"line": 12, "code": "kernel_not_called", "message": "kernel k is never called",
                               "blocking": False}]
    assert fb["profile"] == [{"kernel": "softmax_kernel", "ms": 0.75, "share": 0.75},
                             {"kernel": "copy", "ms": 0.25, "share": 0.25}]
    text = render_feedback(fb)
    assert "index [3, 17]" in text and "line 12" in text and "softmax_kernel: 0.75 ms (75%)" in text
    rel = feedback_from_verdict(_verdict(reason="trial 2: relative L2 error 0.3 exceeds 1e-04 (precision loss)"))
    assert rel["mismatch"]["kind"] == "rel_l2" and rel["mismatch"]["rel_l2"] == 0.3


def test_feedback_carries_the_judges_profile_table():
    profile = [
        {"name": "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "class": "library_compute", "device_us": 40.0,
         "calls": 1, "share": 0.8},
        {"name": "tile_warmup_kernel(float const*, float const*, float*, long, long)", "class": "custom",
         "device_us": 2.5, "calls": 1, "share": 0.05},
        {"name": "void tiled<5003>(float*)", "class": "custom", "device_us": 1.0, "calls": 1, "share": 0.02},
        {"name": "(total)", "class": "total", "device_us": 50.0, "calls": 3, "share": 1.0, "clock": "cuda"},
    ]
    v = _verdict(verdict="rejected", reason="library compute carries 80% of the solution's device time",
                 profile=profile)
    fb = feedback_from_verdict(v, hidden_shapes=[{"dim": 5003}])     # None: the verdict's own profile
    assert [r["class"] for r in fb["profile"]] == ["library_compute", "custom", "custom"]
    assert fb["profile"][0] == {"kernel": "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "ms": 0.04, "share": 0.8,
                                "class": "library_compute"}
    text = render_feedback(fb)
    assert "Profile of your solution (kernels by time):" in text
    assert "- nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT: 0.04 ms (80%) [library compute, not your kernel]" in text
    assert "tile_warmup_kernel(float const*, float const*, float*, long, long): 0.0025 ms (5%) [your code]" in text
    assert "(total)" not in text and "5003" not in text        # summary rows skipped, held-out sizes hidden
    failed = _verdict(verdict="correct", accepted=True, profile=[{"name": "(profiling failed)", "class": "error",
                                                                  "error": "boom"}])
    assert feedback_from_verdict(failed)["profile"] == []
    assert feedback_from_verdict(v, [])["profile"] == []     # an explicit empty profile wins


def test_correct_solution_feedback_and_refinement_goal():
    v = _verdict(verdict="correct", accepted=True, reason="matches the reference", speedup=1.8, ref_ms=1.2,
                 sol_ms=0.6667, max_error={"rel_l2": 2e-7})
    fb = feedback_from_verdict(v)
    assert fb["speedup"] == 1.8 and fb["mismatch"] is None and fb["rel_l2"] == 2e-7
    assert json.loads(json.dumps(fb)) == fb
    messages = build_refinement_messages(SOFTMAX, "triton", "class ModelNew: pass", fb)
    user = messages[1]["content"]
    assert "1.8x" in user and "faster than the PyTorch reference" in user and "Make it faster" in user
    assert "class ModelNew: pass" in user and "5003" not in user


def test_refinement_messages_for_failures():
    fb = feedback_from_verdict(_verdict(verdict="build_error", reason="the solution failed to build: error",
                                          error_excerpt="x.cu(3): error: identifier \"foo\" is undefined"))
    previous = 'SRC = """```inner```"""\nclass ModelNew: pass\n'
    messages = build_refinement_messages(SOFTMAX, "cuda", previous, fb, hardware=hardware_from_spec(H200),
                                           shots=1)
    user = messages[1]["content"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "````python\n" + previous.rstrip() + "\n````" in user
    assert 'identifier "foo" is undefined' in user and "did not pass" in user
    assert "NVIDIA H200" in user and "Example 1, a solution" in user
    assert not re.search(r"\$[A-Za-z_{]", user)
    flagged = feedback_from_verdict(_verdict(verdict="correct", accepted=False, flags=["suspicious_speedup"],
                                               reason="correct, but not accepted: suspicious_speedup"))
    user = build_refinement_messages(SOFTMAX, "cpp", "x = 1", flagged)[1]["content"]
    assert "was not accepted" in user and "suspicious_speedup" in user


def test_feedback_for_a_reply_without_code():
    fb = feedback_no_code("only prose")
    assert fb["verdict"] == "no_code" and not fb["accepted"] and "only prose" in fb["reason"]
    assert set(fb) == set(feedback_from_verdict(_verdict(reason="x")))
    user = build_refinement_messages(SOFTMAX, "triton", None, fb)[1]["content"]
    assert "no usable code in the reply" in user and "(no code was extracted)" in user and "did not pass" in user


def test_feedback_on_an_unjudgeable_verdict_does_not_blame_the_solution():
    outcome = {"kind": "degenerate_reference", "reason": "reference output at noise level", "figures": {"rms": 1e-9}}
    fb = feedback_from_verdict(_verdict(verdict="unjudgeable", reason="the reference output is at noise level",
                                          problem_outcome=outcome))
    assert fb["verdict"] == "unjudgeable" and not fb["accepted"] and fb["mismatch"] is None
    user = build_refinement_messages(SOFTMAX, "triton", "x = 1", fb)[1]["content"]
    assert "not judged" in user and "could not decide" in user and "did not pass" not in user
