"""The generation side of every backend: its prompt text and worked examples, extraction of its solutions from a
model's reply, and refinement feedback that names its errors (CuPy, cuda.core, Numba, Helion, CuTe DSL, TileLang
among them).
"""

from __future__ import annotations

import ast

import pytest

from kerneljudge.analysis import detect_backend
from kerneljudge.core.paths import prompts_root
from kerneljudge.core.types import BACKENDS, Verdict
from kerneljudge.generate.backend_errors import KINDS, classify_error
from kerneljudge.generate.bench_parts import BenchError
from kerneljudge.core.types import CPU_BACKENDS
from kerneljudge.generate.bench_settings import BenchSettings, choose_backend
from kerneljudge.generate.extract import extract_solution
from kerneljudge.generate.feedback import bound_excerpt, feedback_from_verdict, feedback_no_code, render_feedback
from kerneljudge.generate.messages import BACKEND_NAMES, build_messages, build_refinement_messages
from kerneljudge.generate.reply_sections import PYTHON_TAGS
from kerneljudge.generate.templates import BACKEND_TEMPLATES, SHOT_EXAMPLES, TEMPLATES, shot_examples, template

NEW_BACKENDS = ("cupy", "cuda_core", "numba", "helion", "cute", "tilelang")
PROBLEM = (prompts_root() / "examples" / "problems" / "2_rms_norm.py").read_text()


# --- templates and shot examples -------------------------------------------------------------------------


def test_new_backends_are_backends():
    assert set(NEW_BACKENDS) <= set(BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_has_a_template_and_three_examples(backend):
    name = f"backend_{backend}.md"
    assert name in TEMPLATES and name in BACKEND_TEMPLATES
    assert template(name).startswith("How to write the kernels (")
    for stem in SHOT_EXAMPLES:
        assert (prompts_root() / "examples" / backend / f"{stem}.py").is_file(), (backend, stem)
    assert backend in BACKEND_NAMES


@pytest.mark.parametrize("backend", BACKENDS)
def test_shot_examples_parse_define_modelnew_and_are_detected(backend):
    for stem, (_, solution) in zip(SHOT_EXAMPLES, shot_examples(backend)):
        tree = ast.parse(solution)
        assert any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body), stem
        assert detect_backend(solution) == backend, stem


@pytest.mark.parametrize("backend", [b for b in NEW_BACKENDS])
def test_gpu_backend_prompts_state_the_stream_rule_and_compile_once(backend):
    text = template(f"backend_{backend}.md")
    assert "current stream" in text, backend
    assert "rejected" in text or "do not create streams" in text, backend
    assert "once" in text, backend


def test_backend_prompt_specifics():
    assert "ExternalStream" in template("backend_cupy.md") and "library compute" in template("backend_cupy.md")
    assert "Program(" in template("backend_cuda_core.md") and "data_ptr()" in template("backend_cuda_core.md")
    assert "external_stream" in template("backend_numba.md") and "as_cuda_array" in template("backend_numba.md")
    helion = template("backend_helion.md")
    assert "helion.Config" in helion and "does not autotune" in helion and "hl.tile" in helion
    cute = template("backend_cute.md")
    assert "@cute.kernel" in cute and "@cute.jit" in cute and "cute.compile" in cute and "from_dlpack" in cute
    tilelang = template("backend_tilelang.md")
    assert "@tilelang.jit" in tilelang and "@T.prim_func" in tilelang and "T.Kernel" in tilelang
    assert "T.Parallel" in tilelang and "autotune" in tilelang and "T.if_then_else" in tilelang


@pytest.mark.parametrize("backend", NEW_BACKENDS)
def test_messages_carry_the_backend_text_and_examples(backend):
    user = build_messages(PROBLEM, backend, shots="few")[1]["content"]
    assert template(f"backend_{backend}.md") in user
    assert f"custom {BACKEND_NAMES[backend]} kernels" in user
    for _, solution in shot_examples(backend):
        assert solution.strip() in user
    feedback = feedback_from_verdict(_verdict(verdict="build_error", reason="the solution failed to build",
                                              error_excerpt=ERRORS[backend][0]))
    refine = build_refinement_messages(PROBLEM, backend, shot_examples(backend)[1][1], feedback)[1]["content"]
    assert ERRORS[backend][1] in refine


@pytest.mark.parametrize("backend", NEW_BACKENDS)
def test_gpu_only_backends_need_a_cuda_device(backend):
    settings = BenchSettings(model="replay:x", problems="suite", out="run", backend=backend)
    assert choose_backend(settings, "cuda") == backend
    with pytest.raises(BenchError, match="needs a CUDA device"):
        choose_backend(settings, "cpu")


def test_cpu_backends_still_run_on_the_cpu():
    for backend in CPU_BACKENDS:
        assert choose_backend(BenchSettings(model="replay:x", problems="suite", out="run", backend=backend),
                              "cpu") == backend


# --- extraction ------------------------------------------------------------------------------------------


def _reply(code: str, tag: str = "python") -> str:
    return ("Here is the plan: one kernel, launched on PyTorch's current stream.\n\n"
            f"```{tag}\n{code.rstrip()}\n```\n\nThe kernel is compiled once, when the module is imported.")


@pytest.mark.parametrize("backend", NEW_BACKENDS)
@pytest.mark.parametrize("stem_index", range(len(SHOT_EXAMPLES)))
def test_a_markdown_reply_of_each_backend_extracts(backend, stem_index):
    code = shot_examples(backend)[stem_index][1]
    e = extract_solution(_reply(code), backend=backend)
    assert e.outcome == "ok" and e.code.strip() == code.strip(), e.note
    assert "looks like" not in e.note
    assert detect_backend(e.code) == backend


@pytest.mark.parametrize("backend,tag", [("cupy", "cupy"), ("numba", "numba"), ("helion", "helion"),
                                         ("cuda_core", "cuda_core"), ("cute", "cutedsl"), ("tilelang", "tilelang"),
                                         ("triton", "triton")])
def test_a_block_tagged_with_its_kernel_language_counts_as_python(backend, tag):
    assert tag in PYTHON_TAGS
    code = shot_examples(backend)[0][1]
    e = extract_solution(_reply(code, tag), backend=backend)
    assert e.outcome == "ok" and e.code.strip() == code.strip()
    assert "but it is Python" not in e.note


def test_cuda_source_block_beside_a_cupy_solution():
    code = shot_examples("cupy")[1][1]
    reply = ("The kernel:\n\n```cuda\n__global__ void k(float* x) {}\n```\n\nThe file:\n\n" + _reply(code))
    e = extract_solution(reply, backend="cupy")
    assert e.outcome == "ok" and e.code.strip() == code.strip()


def test_requested_backend_breaks_a_tie_between_two_backends():
    numba, cupy = shot_examples("numba")[0][1], shot_examples("cupy")[0][1]
    reply = _reply(numba) + "\n\nOr, with CuPy:\n\n" + _reply(cupy)
    assert extract_solution(reply, backend="numba").code.strip() == numba.strip()
    assert extract_solution(reply, backend="cupy").code.strip() == cupy.strip()


def test_a_mismatch_between_asked_and_written_backend_is_noted():
    e = extract_solution(_reply(shot_examples("helion")[0][1]), backend="cute")
    assert e.outcome == "ok" and "asked for cute, the code looks like helion" in e.note


# --- feedback that names the backend's errors --------------------------------------------------------------

NOISE = [f"  File \"/opt/venv/lib/python3.12/site-packages/pkg/mod_{i}.py\", line {i}, in call_{i}" for i in range(120)]

# backend -> (a typical log of its failure, a line the model must be shown, the error kind named)
ERRORS = {
    "cupy": ("Traceback (most recent call last):\n  File \"solution.py\", line 61, in forward\n"
             "cupy.cuda.compiler.CompileException: /tmp/tmpx/kern.cu(14): error: identifier \"warp_sum\" is undefined\n"
             "\n1 error detected in the compilation of \"/tmp/tmpx/kern.cu\".",
             "identifier \"warp_sum\" is undefined", "CuPy kernel compile error (NVRTC)"),
    "cuda_core": ("Traceback (most recent call last):\n  File \"solution.py\", line 40, in <module>\n"
                  "cuda.core._utils.cuda_utils.NVRTCError: NVRTC_ERROR_COMPILATION: compilation failed\n"
                  "default_program(9): error: expected a \";\"",
                  "default_program(9): error: expected a \";\"", "cuda.core compile error (NVRTC)"),
    "numba": ("Traceback (most recent call last):\n  File \"solution.py\", line 52, in forward\n"
              "numba.core.errors.TypingError: Failed in cuda mode pipeline (step: nopython frontend)\n"
              "Unknown attribute 'sum' of type array(float32, 1d, C)",
              "Unknown attribute 'sum' of type array(float32, 1d, C)", "Numba typing error"),
    "helion": ("Traceback (most recent call last):\n  File \"solution.py\", line 30, in forward\n"
               "helion.exc.InvalidConfig: Too many values for config['block_sizes'], expected 1, got 2",
               "Too many values for config['block_sizes'], expected 1, got 2", "Helion config error"),
    "cute": ("Traceback (most recent call last):\n  File \"solution.py\", line 44, in forward\n"
             "cutlass.base_dsl.common.DSLRuntimeError: DSLRuntimeError: failed to generate code for `swish_residual`",
             "failed to generate code for `swish_residual`", "CuTe DSL error"),
    "tilelang": ("Traceback (most recent call last):\n  File \"solution.py\", line 48, in forward\n"
                 "RuntimeError: extern \"C\" __global__ void main_kernel(float* __restrict__ Out) {\n"
                 "Compilation error:\n/tmp/tmpab12/tvm_kernels.cu(20): error: identifier \"warp_sum\" is undefined\n"
                 "1 error detected in the compilation of \"/tmp/tmpab12/tvm_kernels.cu\".",
                 "tvm_kernels.cu(20): error: identifier \"warp_sum\" is undefined", "TileLang compile error"),
    "triton": ("triton.compiler.errors.CompilationError: at 7:12:\n    x = tl.load(x_ptr + offs)\n"
               "ValueError: Cannot make_shape_compatible: incompatible dimensions at index 0: 128 and 64",
               "Cannot make_shape_compatible", "Triton compile error"),
    "cuda": ("/tmp/build/main.cu(42): error: identifier \"blockDimx\" is undefined\n"
             "ninja: build stopped: subcommand failed.\nRuntimeError: Error building extension 'kj_sol'",
             "main.cu(42): error: identifier \"blockDimx\" is undefined", "C++/CUDA build error (load_inline)"),
}


def _verdict(**fields) -> dict:
    base = dict(verdict="runtime_error", accepted=False, reason="", problem="/secret/p.py", solution="/secret/s.py",
                problem_id="level1/2_rms_norm")
    base.update(fields)
    return Verdict.from_dict(base).to_dict()


@pytest.mark.parametrize("backend", sorted(ERRORS))
def test_feedback_names_each_backends_error(backend):
    log, line, kind = ERRORS[backend]
    error = classify_error(log)
    assert error is not None and error["kind"] == kind
    assert error["backend"] == (None if backend == "cuda" else backend)
    fb = feedback_from_verdict(_verdict(verdict="build_error", reason="the solution failed to build",
                                        error_excerpt=log))
    assert fb["error"]["kind"] == kind
    text = render_feedback(fb)
    assert f"Error: {kind}:" in text and line in text and "Where to look:" in text


@pytest.mark.parametrize("backend", sorted(ERRORS))
def test_the_telling_line_survives_a_long_log(backend):
    log, line, kind = ERRORS[backend]
    long_log = "\n".join(NOISE[:60] + log.split("\n") + NOISE[60:] + ["RuntimeError: the solution failed"])
    excerpt = bound_excerpt(long_log, max_chars=1500)
    assert len(excerpt) <= 1500 and line in excerpt
    fb = feedback_from_verdict(_verdict(error_excerpt=long_log), max_excerpt_chars=1500)
    assert fb["error"]["kind"] == kind and line in render_feedback(fb)


def test_compiler_diagnostic_is_shown_beside_the_exception():
    error = classify_error(ERRORS["cuda_core"][0])
    assert error["headline"].startswith("cuda.core._utils.cuda_utils.NVRTCError")
    assert error["diagnostic"] == "default_program(9): error: expected a \";\""


def test_unknown_errors_and_correct_verdicts_name_no_kind():
    assert classify_error("") is None
    assert classify_error("ValueError: x and residual must have the same shape") is None
    assert feedback_from_verdict(_verdict(error_excerpt="ValueError: bad shape"))["error"] is None
    correct = feedback_from_verdict(_verdict(verdict="correct", accepted=True, error_excerpt=ERRORS["numba"][0]))
    assert correct["error"] is None
    assert feedback_no_code("nothing")["error"] is None


def test_every_error_kind_names_a_known_backend():
    assert all(kind.backend is None or kind.backend in BACKENDS for kind in KINDS)
    assert len({kind.name for kind in KINDS}) == len(KINDS)


@pytest.mark.parametrize("log", [
    "tvm.error.InternalError: Check failed: (allow_not_defined) is false: Target context required.",
    "2026-12-07 12:35:54  [TileLang:tilelang.language.eager.builder:CRITICAL] (builder.py:1797): Failed to build "
    "prim_func from main\nNameError: name 'undefined_name' is not defined",
])
def test_tilelang_lowering_errors_are_named(log):
    assert classify_error(log)["kind"] == "TileLang compile error"


@pytest.mark.parametrize("log", [
    "RuntimeError: kernel main input X shape[1] violates packed ABI constraint; expected: 300, got: 301",
    "RuntimeError: kernel main input X dtype mismatch, expected float32",
    "ValueError: Kernel expected 3 inputs, but 1 are provided.",
    "ValueError: Static shape mismatch for parameter X: expected 301 at index 1, got 300",
])
def test_tilelang_argument_errors_are_named(log):
    error = classify_error(log)
    assert error["kind"] == "TileLang kernel argument error" and error["backend"] == "tilelang"
