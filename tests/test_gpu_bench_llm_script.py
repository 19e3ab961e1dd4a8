"""The scripted model of lab/gpu_bench_llm.py (the H200 bench run) without building or judging anything:
each recorded reply is chosen from prompts built by the real prompting code, extracts to what its story
says, passes or fails static analysis as planned, and the replay folder serves the turns in order. The
whole run (builds, judge, score) is exercised on the CPU by `lab/gpu_bench_llm.py --device cpu`."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from kerneljudge.core.paths import problems_root
from kerneljudge.analysis import analyze, detect_backend
from kerneljudge.generate.extract import extract_solution
from kerneljudge.generate.feedback import feedback_from_verdict, feedback_no_code
from kerneljudge.generate.messages import build_messages, build_refinement_messages
from kerneljudge.generate.providers.replay import ReplayProvider

ROOT = Path(__file__).resolve().parent.parent
SUITE = problems_root()


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_bench_llm", ROOT / "lab" / "gpu_bench_llm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = load_script()

# the judge's report on each planned failure, as bench would pass it on
FAILED = {
    "build_error": {"verdict": "build_error", "accepted": False,
                    "reason": "the solution failed to build: ninja: build stopped: subcommand failed.",
                    "error_excerpt": 'cuda.cu(64): error: identifier "inv_temperature" is undefined'},
    "wrong_output": {"verdict": "wrong_output", "accepted": False,
                     "reason": "trial 1: output differs at [3, 7]: got 0.52, expected 0.18 "
                               "(|err| 0.34 > allowed 0.0002)"},
}


def prompt_text(messages) -> str:
    return "\n".join(m["content"] for m in messages)


def source(problem_id: str) -> str:
    return (SUITE / f"{problem_id}.py").read_text()


def refinement(problem_id: str, backend: str, previous_reply: str, previous_verdict: str):
    if previous_verdict == "no_code":
        return build_refinement_messages(source(problem_id), backend, "", feedback_no_code("only prose"))
    code = extract_solution(previous_reply, backend).code
    return build_refinement_messages(source(problem_id), backend, code,
                                     feedback_from_verdict(FAILED[previous_verdict]))


@pytest.mark.parametrize("backend", ["cuda", "cpp"])
def test_replies_follow_the_story(backend):
    model = SCRIPT.ScriptedModel(backend)
    for entry in SCRIPT.SCENARIO:
        pid = entry["problem"]
        name, info = model.choose(prompt_text(build_messages(source(pid), backend)))
        assert name == entry["turns"][0]["reply"] and info["turn"] == 0
        for t, turn in enumerate(entry["turns"]):
            if t:
                prev = entry["turns"][t - 1]
                messages = refinement(pid, backend, model.reply_text(prev["reply"]), prev["expect"])
                name, info = model.choose(prompt_text(messages))
                assert name == turn["reply"], info
            extraction = extract_solution(model.reply_text(turn["reply"]), backend)
            if turn["expect"] == "no_code":
                assert extraction.outcome == "no_code"
                continue
            assert extraction.outcome == "ok", extraction.note
            assert detect_backend(extraction.code) == backend
            blocking = [f.code for f in analyze(extraction.code, "strict") if f.blocking]
            assert bool(blocking) == (turn["expect"] == "rejected"), (turn["reply"], blocking)


def test_fix_needs_the_feedback():
    """A refinement prompt whose report does not say what failed gets the first answer again."""
    model = SCRIPT.ScriptedModel("cuda")
    entry = next(e for e in SCRIPT.SCENARIO if e["problem"] == "level1/45_l2_normalize")
    first = model.reply_text(entry["turns"][0]["reply"])
    code = extract_solution(first, "cuda").code
    accepted = feedback_from_verdict({"verdict": "correct", "accepted": True, "reason": "matches the reference",
                                      "speedup": 1.5})
    messages = build_refinement_messages(source(entry["problem"]), "cuda", code, accepted)
    name, info = model.choose(prompt_text(messages))
    assert name == entry["turns"][0]["reply"] and info["feedback_missing"] == entry["turns"][1]["needs"]


def test_replay_folder_serves_turns_in_order(tmp_path):
    SCRIPT.write_replay_folder(tmp_path, "cuda")
    provider = ReplayProvider(str(tmp_path))
    model = SCRIPT.ScriptedModel("cuda")

    async def ask(messages):
        return (await provider.complete(messages)).text

    for entry in SCRIPT.SCENARIO:
        messages = build_messages(source(entry["problem"]), "cuda")
        for turn in entry["turns"]:
            assert asyncio.run(ask(messages)) == model.reply_text(turn["reply"])
