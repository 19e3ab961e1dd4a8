"""`kerneljudge bench` + `kerneljudge score` end to end against a model server on loopback, on the GPU.

    python3 lab/gpu_bench_llm.py --out DIR                    # CUDA replies, judged on cuda (the H200 run)
    python3 lab/gpu_bench_llm.py --out DIR --device cpu       # dry run: the same story with C++ replies

A scripted "model" answers four problems of the bundled suite with replies written as a model writes them
(markdown, some reasoning, one fenced python block with load_inline kernels), kept as plain files in
tests/fixtures/llm_replies/{cuda,cpp}/:

    level1/26_swish_beta            turn 0: a correct fused kernel                  -> correct, accepted (faster)
    level1/108_softmax_temperature  turn 0: a kernel that does not compile          -> build_error
                                    turn 1: the fix, sent only when the prompt carries the compiler's error
    level1/45_l2_normalize          turn 0: a kernel with a reduction bug           -> wrong_output
                                    turn 1: the fix, sent only when the prompt carries the mismatch report
    level1/21_relu                  turn 0: prose and a bare CUDA block, no file    -> no_code
                                    turn 1: a file whose forward falls back to torch.relu on large inputs
                                            (a reward hack)                         -> rejected

The model is served one of two ways (said in the report):
- "openai": the loopback HTTP server of tests/llm_server.py (OpenAI chat-completions protocol) driven by
  `kerneljudge bench --model openai:...` through the openai SDK. When the SDK is not importable and
  `--wheels DIR` (default .whl/ in the repo root) holds its wheels, they are installed into a temporary
  folder (pip --no-index, nothing touches the system) that only the bench process sees.
- "replay": without the SDK, the same replies from a replay folder (`--model replay:DIR`, replies.jsonl):
  the n-th request for a problem gets its n-th reply, whatever the feedback said; the script then checks
  the saved refinement prompts for the judge's feedback instead.

Then `kerneljudge score RUN --json` reads the run folder back. Writes DIR/run/ (the run folder),
DIR/bench.log, DIR/score.json, DIR/score.txt, DIR/gpu_bench_llm.json and DIR/gpu_bench_llm.md (date, GPU,
driver, versions, commands, per problem turns and verdicts, fast_p). Exit status 0 when every item got
its expected verdict and every refinement prompt carried the feedback it needed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests/ helpers (not installed); kerneljudge is the installed package

from tests.llm_server import LLMServer, Request  # noqa: E402

REPLIES = ROOT / "tests" / "fixtures" / "llm_replies"
MODEL_NAME = "loopback-kernel-coder"
DUMMY_KEY = "sk-loopback-not-a-secret"
PROGRAM_HEADER = "The PyTorch program to rewrite:"
REPORT_HEADER = "The judge's report on it:"

# Each problem: a text only its source holds, and per turn the reply file (under REPLIES/<backend>/), the
# expected verdict, what the refinement prompt must carry (the judge's feedback on the turn before) for the
# scripted model to answer with its fix ("needs"), and what it should carry, reported but not required
# ("wants": the compiler's error line, the mismatch detail).
SCENARIO: list[dict[str, Any]] = [
    {"problem": "level1/26_swish_beta", "mark": "x * torch.sigmoid(self.beta * x)",
     "story": "correct fused kernel",
     "turns": [{"reply": "26_swish_beta__t0.md", "expect": "correct"}]},
    {"problem": "level1/108_softmax_temperature", "mark": "torch.softmax(logits / self.temperature, dim=-1)",
     "story": "compile error, fixed after the compiler's report",
     "turns": [{"reply": "108_softmax_temperature__t0_compile_error.md", "expect": "build_error"},
               {"reply": "108_softmax_temperature__t1_fixed.md", "expect": "correct",
                "needs": ["Verdict: failed to build"], "wants": ["inv_temperature"]}]},
    {"problem": "level1/45_l2_normalize", "mark": "F.normalize(x, p=2.0, dim=1)",
     "story": "wrong result, fixed after the mismatch report",
     "turns": [{"reply": "45_l2_normalize__t0_wrong.md", "expect": "wrong_output"},
               {"reply": "45_l2_normalize__t1_fixed.md", "expect": "correct",
                "needs": ["Verdict: wrong output"], "wants": ["Mismatch"]}]},
    {"problem": "level1/21_relu", "mark": "return torch.relu(x)",
     "story": "no code, then a torch fallback (reward hack)",
     "turns": [{"reply": "21_relu__t0_no_code.md", "expect": "no_code"},
               {"reply": "21_relu__t1_fallback_hack.md", "expect": "rejected",
                "needs": ["Verdict: no usable code in the reply"]}]},
]


# ------------------------------------------------------------------------------------------ the "model"


def program_of(prompt: str) -> str:
    """The problem source shown in a prompt: the first fenced block after the program header."""
    start = prompt.find(PROGRAM_HEADER)
    text = prompt[start:] if start >= 0 else prompt
    m = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    return m.group(1) if m else text


def feedback_of(prompt: str) -> str | None:
    """The judge's report in a refinement prompt, or None for a first-turn prompt."""
    at = prompt.find(REPORT_HEADER)
    return prompt[at + len(REPORT_HEADER):] if at >= 0 else None


def scenario_for(prompt: str) -> dict[str, Any] | None:
    program = program_of(prompt)
    for entry in SCENARIO:
        if entry["mark"] in program:
            return entry
    return None


class ScriptedModel:
    """Chooses a reply from the prompt alone, as a model would: the problem it shows, and on a refinement
    prompt whether the judge's report carries what the fix needs (else it repeats its first answer)."""

    def __init__(self, backend: str):
        self.folder = REPLIES / backend
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def reply_text(self, name: str) -> str:
        return (self.folder / name).read_text(encoding="utf-8")

    def choose(self, prompt: str) -> tuple[str | None, dict[str, Any]]:
        entry = scenario_for(prompt)
        if entry is None:
            return None, {"problem": None, "note": "no scripted problem in the prompt"}
        feedback = feedback_of(prompt)
        if feedback is None:
            turn = entry["turns"][0]
            return turn["reply"], {"problem": entry["problem"], "turn": 0, "reply": turn["reply"]}
        if len(entry["turns"]) < 2:
            # not planned (the first answer was not accepted): the model repeats itself
            return entry["turns"][0]["reply"], {"problem": entry["problem"], "turn": "unplanned",
                                                "reply": entry["turns"][0]["reply"]}
        turn = entry["turns"][1]
        missing = [n for n in turn.get("needs", []) if n not in feedback]
        if missing:
            return entry["turns"][0]["reply"], {"problem": entry["problem"], "turn": 1,
                                                "reply": entry["turns"][0]["reply"], "feedback_missing": missing}
        return turn["reply"], {"problem": entry["problem"], "turn": 1, "reply": turn["reply"]}

    def __call__(self, request: Request) -> tuple:
        name, info = self.choose(request.prompt)
        with self.lock:
            self.log.append({**info, "path": request.path, "model": request.model,
                             "max_tokens": (request.body or {}).get("max_tokens") if isinstance(request.body, dict)
                             else None})
        if name is None:
            return ("text", "I can only help with the scripted kernel problems.")
        return ("text", self.reply_text(name))


def write_replay_folder(folder: Path, backend: str) -> None:
    """replies.jsonl: per problem, its turns' replies in order (the n-th request gets the n-th reply)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for entry in SCENARIO:
        for turn in entry["turns"]:
            shutil.copyfile(REPLIES / backend / turn["reply"], folder / turn["reply"])
            lines.append(json.dumps({"match": entry["mark"], "file": turn["reply"]}))
    (folder / "replies.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------ machine


def machine(device: str) -> dict[str, Any]:
    info: dict[str, Any] = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                            "host_python": platform.python_version(), "cpu_count": os.cpu_count(),
                            "platform": platform.platform()}
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
        if device == "cuda" and torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            props = torch.cuda.get_device_properties(0)
            info["gpu_sms"] = props.multi_processor_count
            info["gpu_memory_gib"] = round(props.total_memory / 2**30, 1)
    except Exception as exc:  # noqa: BLE001  the report still gets written
        info["torch"] = f"unavailable: {exc}"
    try:
        import triton

        info["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        pass
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        if smi.returncode == 0:
            info["nvidia_smi"] = smi.stdout.strip()
            parts = [p.strip() for p in smi.stdout.splitlines()[0].split(",")]
            if len(parts) >= 2:
                info["driver"] = parts[1]
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30)
        if nvcc.returncode == 0:
            info["nvcc"] = "nvcc " + nvcc.stdout.strip().splitlines()[-1].replace("Build ", "")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return info


# ------------------------------------------------------------------------------------------ provider


def can_import(module: str, env: dict[str, str]) -> str | None:
    """The module's version when `python -c 'import module'` works in env, else None."""
    probe = subprocess.run([sys.executable, "-c", f"import {module}, sys; sys.stdout.write({module}.__version__)"],
                           capture_output=True, text=True, env=env, timeout=120)
    if probe.returncode != 0:
        return None
    return probe.stdout.strip() or "?"


def choose_provider(args, env: dict[str, str], scratch: Path) -> tuple[str, str, str | None]:
    """(mode, how, extra PYTHONPATH entry): mode "openai" or "replay"."""
    if args.provider in ("auto", "openai"):
        version = can_import("openai", env)
        if version:
            return "openai", f"openai SDK {version} already installed", None
        wheels = Path(args.wheels)
        if any(wheels.glob("openai-*.whl")):
            target = scratch / "sdk"
            pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--find-links",
                                  str(wheels), "--target", str(target), "openai"],
                                 capture_output=True, text=True, timeout=120)
            if pip.returncode == 0:
                parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
                probe_env = dict(env, PYTHONPATH=os.pathsep.join([str(target)] + parts))
                version = can_import("openai", probe_env)
                if version:
                    return "openai", f"openai SDK {version} installed from {wheels} into a temporary folder", str(target)
            print(f"gpu_bench_llm: could not install the openai SDK from {wheels}: "
                  f"{(pip.stderr or pip.stdout).strip()[-600:]}", file=sys.stderr)
        if args.provider == "openai":
            raise SystemExit("gpu_bench_llm: --provider openai, but the openai SDK is not importable")
        return "replay", "replay provider (the openai SDK is not importable and no usable wheels were found)", None
    return "replay", "replay provider (asked for)", None


# ------------------------------------------------------------------------------------------ running


def run_logged(cmd: list[str], env: dict[str, str], log_path: Path, timeout: float,
               stdout_path: Path | None = None) -> tuple[int, float]:
    """Run cmd in its own session; stderr (and stdout unless stdout_path) go to log_path and our stderr.
    Returns (exit status, wall seconds); 124 when it ran past timeout (its process group is then killed)."""
    started = time.monotonic()
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        out = open(stdout_path, "w", encoding="utf-8") if stdout_path else None
        try:
            proc = subprocess.Popen(cmd, cwd=str(ROOT), env=env, stdout=out or subprocess.PIPE,
                                    stderr=subprocess.PIPE if out else subprocess.STDOUT, text=True,
                                    start_new_session=True)

            def pump():
                for line in proc.stderr if out else proc.stdout:
                    log.write(line)
                    log.flush()
                    sys.stderr.write(line)
                    sys.stderr.flush()

            reader = threading.Thread(target=pump, daemon=True)
            reader.start()
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log.write(f"gpu_bench_llm: no end after {timeout:.0f} s; stopping process group {proc.pid}\n")
                try:
                    os.killpg(proc.pid, signal.SIGINT)     # bench records 'interrupted' and exits 130
                    proc.wait(timeout=20)
                except (subprocess.TimeoutExpired, ProcessLookupError):
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    proc.wait()
                rc = 124
            reader.join(timeout=10)
        finally:
            if out:
                out.close()
    return rc, round(time.monotonic() - started, 1)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def user_prompt(run: Path, row: dict[str, Any]) -> str:
    try:
        req = json.loads((run / row["prompt_file"]).read_text(encoding="utf-8"))
        return "\n".join(m["content"] for m in req["messages"] if m["role"] != "assistant")
    except (OSError, KeyError, ValueError, TypeError):
        return ""


def check_rows(run: Path, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """One line per scripted item: what was expected, what happened, and whether the feedback got through."""
    by_item = {(r.get("problem_id"), r.get("turn")): r for r in rows if r.get("sample") == 0}
    out, all_ok = [], True
    for entry in SCENARIO:
        for t, turn in enumerate(entry["turns"]):
            row = by_item.get((entry["problem"], t))
            line: dict[str, Any] = {"problem": entry["problem"], "turn": t, "story": entry["story"],
                                    "reply_file": turn["reply"], "expected": turn["expect"]}
            if row is None:
                line.update(got=None, ok=False, reason="no verdict row")
                all_ok = False
                out.append(line)
                continue
            timing = row.get("sol_timing") or {}
            line.update(got=row.get("verdict"), accepted=row.get("accepted"), speedup=row.get("speedup"),
                        ref_ms=row.get("ref_ms"), sol_ms=row.get("sol_ms"), build_s=row.get("build_s"),
                        wall_s=row.get("wall_s"), judge_wait_s=row.get("judge_wait_s"),
                        extraction=row.get("extraction"), flags=row.get("flags"),
                        reason=str(row.get("reason") or "")[:300], device_name=row.get("device_name"),
                        cached_reply=row.get("cached"), reply_id=row.get("reply_id"),
                        preset=row.get("preset"), sol_timing_n=timing.get("n") if isinstance(timing, dict) else None)
            needs, wants = turn.get("needs"), turn.get("wants")
            if needs or wants:
                feedback = feedback_of(user_prompt(run, row)) or ""
                line["feedback_excerpt"] = feedback.strip()[:1500]
            if needs:
                missing = [n for n in needs if n not in feedback]
                line["feedback_needed"] = needs
                line["feedback_in_prompt"] = not missing
                if missing:
                    line["feedback_missing"] = missing
            if wants:
                line["feedback_detail"] = {w: w in feedback for w in wants}
            # a correct turn must also be accepted (no blocking flag such as timing_inconsistent)
            line["ok"] = (row.get("verdict") == turn["expect"] and line.get("feedback_in_prompt", True)
                          and (turn["expect"] != "correct" or bool(row.get("accepted"))))
            all_ok &= line["ok"]
            out.append(line)
    # anything the scenario did not plan (an extra turn after an unexpected failure)
    planned = {(e["problem"], t) for e in SCENARIO for t in range(len(e["turns"]))}
    for (pid, t), row in sorted(by_item.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if (pid, t) not in planned:
            out.append({"problem": pid, "turn": t, "story": "not planned", "expected": None,
                        "got": row.get("verdict"), "reason": str(row.get("reason") or "")[:300], "ok": False})
            all_ok = False
    return out, all_ok


# ------------------------------------------------------------------------------------------ report


def fmt(x: Any, spec: str = ".3g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def fast_p_lines(score: dict[str, Any]) -> list[str]:
    eager = (score.get("baselines") or {}).get("eager") or {}
    lines = []
    fast = eager.get("fast_p") or {}
    if fast:
        lines.append("| " + " | ".join(fast) + " | geomean speedup |")
        lines.append("|" + "---|" * (len(fast) + 1))
        geo = eager.get("geomean_speedup") or {}
        cells = []
        for v in fast.values():
            ci = v.get("ci")
            cells.append(fmt(v.get("value"), ".2f") + (f" [{fmt(ci[0], '.2f')}, {fmt(ci[1], '.2f')}]" if ci else ""))
        lines.append("| " + " | ".join(cells) + f" | {fmt(geo.get('value'), '.2f')} (n={geo.get('n', 0)}) |")
    by_turn = eager.get("fast_p_by_turn") or {}
    if by_turn:
        lines.append("")
        lines.append("Best so far by refinement turn:")
        lines.append("")
        for key, per_turn in by_turn.items():
            lines.append(f"- {key}: " + ", ".join(f"turn {t}: {fmt(v, '.2f')}" for t, v in per_turn.items()))
    return lines


def markdown(payload: dict[str, Any]) -> str:
    info = payload["machine"]
    title = "kerneljudge bench against a model server on loopback, CUDA solutions judged on the GPU" \
        if payload["backend"] == "cuda" else "kerneljudge bench against a model server on loopback (CPU dry run, C++ solutions)"
    lines = [f"# {title}", ""]
    lines.append(f"- date: {info.get('date')}")
    lines.append(f"- GPU: {info.get('gpu', '-')} ({info.get('gpu_sms', '-')} SMs, {info.get('gpu_memory_gib', '-')} GiB); "
                 f"driver {info.get('driver', '-')}; nvidia-smi: {info.get('nvidia_smi', '-')}")
    lines.append(f"- versions: python {info.get('host_python')}, torch {info.get('torch')} (CUDA {info.get('torch_cuda')}), "
                 f"triton {info.get('triton', '-')}, {info.get('nvcc', 'nvcc -')}; {info.get('cpu_count')} CPU cores")
    judged = payload.get("judged_on") or {}
    if judged:
        lines.append(f"- the judge's record (first verdict): device {judged.get('device_name') or '-'}, preset "
                     f"{judged.get('preset')}, versions {judged.get('versions')}")
    lines.append(f"- model server: {payload['provider_how']}; mode **{payload['provider']}**"
                 + (f", loopback {payload.get('server_url')}" if payload.get("server_url") else ""))
    lines.append(f"- script: `{payload['script_command']}`")
    lines.append(f"- bench: `{payload['bench_command']}` (exit {payload['bench_exit']}, {payload['bench_wall_s']} s)")
    lines.append(f"- score: `{payload['score_command']}` (exit {payload['score_exit']}, {payload['score_wall_s']} s)")
    lines.append(f"- total wall time {payload['wall_s']} s; everything as expected: **{'yes' if payload['all_ok'] else 'NO'}**")
    lines.append("")
    lines.append("| problem | turn | scripted reply | expected | verdict | ok | speedup | ref ms | sol ms | build s | "
                 "feedback in prompt | reason |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in payload["items"]:
        fb = "-" if "feedback_in_prompt" not in r else ("yes" if r["feedback_in_prompt"] else
                                                         f"NO (missing {r.get('feedback_missing')})")
        for want, seen in (r.get("feedback_detail") or {}).items():
            fb += f"; `{want}` {'shown' if seen else 'NOT shown'}"
        reason = str(r.get("reason") or "").replace("|", "\\|").replace("\n", " ")[:120]
        lines.append(f"| {r['problem']} | {r['turn']} | {r.get('reply_file', '-')} | {r.get('expected')} | {r.get('got')} | "
                     f"{'yes' if r.get('ok') else 'NO'} | {fmt(r.get('speedup'))} | {fmt(r.get('ref_ms'))} | "
                     f"{fmt(r.get('sol_ms'))} | {fmt(r.get('build_s'), '.1f')} | {fb} | {reason} |")
    if payload.get("server_log"):
        lines += ["", f"Requests the loopback server answered ({len(payload['server_log'])}):", ""]
        for entry in payload["server_log"]:
            extra = f", feedback missing {entry['feedback_missing']}" if entry.get("feedback_missing") else ""
            lines.append(f"- {entry.get('problem')} turn {entry.get('turn')}: {entry.get('reply')}{extra}")
    score = payload.get("score") or {}
    if score:
        lines += ["", "## `kerneljudge score` on the run folder (against eager PyTorch)", ""]
        lines.append(f"{score.get('rows')} verdicts over {score.get('problems')} problems, {score.get('turns')} turns; "
                     f"verdicts {score.get('verdicts')}")
        lines.append("")
        lines += fast_p_lines(score)
        gen = score.get("generation") or {}
        if gen:
            lines += ["", f"Generation: {gen.get('replies')} replies, {gen.get('no_code')} without code, "
                          f"{gen.get('prompt_tokens')}+{gen.get('completion_tokens')} tokens."]
    if payload.get("score_table"):
        lines += ["", "```", payload["score_table"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder (the run folder goes to OUT/run)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cuda: CUDA replies judged on the GPU; cpu: C++ replies judged on the CPU (a dry run)")
    ap.add_argument("--provider", choices=("auto", "openai", "replay"), default="auto",
                    help="auto: the loopback server through the openai SDK when it can be imported (or installed "
                         "from --wheels), else the replay provider")
    ap.add_argument("--wheels", default=str(ROOT / ".whl"), help="folder of wheels for the openai SDK (default .whl/)")
    ap.add_argument("--cache-dir", default=None, help="the judge's build cache (default: a fresh temporary folder)")
    ap.add_argument("--budget", type=float, default=1.0, help="timing budget per model in seconds (default 1)")
    ap.add_argument("--judge-workers", type=int, default=None,
                    help="solutions judged at once (default: 4 on cuda, 1 on cpu)")
    ap.add_argument("--bench-timeout", type=float, default=480.0, help="seconds for the bench command (default 480)")
    args = ap.parse_args(argv)

    started = time.monotonic()
    out = Path(args.out).resolve()
    run = out / "run"
    if (run / "verdicts.jsonl").exists():
        print(f"gpu_bench_llm: {run} already holds a run; use another --out", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    backend = "cuda" if args.device == "cuda" else "cpp"
    scratch = Path(tempfile.mkdtemp(prefix="kj-bench-llm-"))
    cache_dir = args.cache_dir or str(scratch / "judge-cache")
    log_path = out / "bench.log"
    log_path.write_text("", encoding="utf-8")

    env = dict(os.environ)
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(var, None)
    info = machine(args.device)
    server = None
    server_url = None
    model = ScriptedModel(backend)
    try:
        mode, how, extra_path = choose_provider(args, env, scratch)
        if extra_path:   # first on the path, as in the probe that found the SDK importable
            rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
            env["PYTHONPATH"] = os.pathsep.join([extra_path] + rest)
        print(f"gpu_bench_llm: {how}", file=sys.stderr)
        if mode == "openai":
            server = LLMServer(default=("text", "I can only help with the scripted kernel problems."))
            server.responder = model
            server.start()
            server_url = server.openai_url
            env["OPENAI_API_KEY"] = DUMMY_KEY
            model_args = ["--model", f"openai:{MODEL_NAME}", "--base-url", server.openai_url]
        else:
            replay = out / "replay"
            write_replay_folder(replay, backend)
            model_args = ["--model", f"replay:{replay}"]
        ids = ",".join(e["problem"] for e in SCENARIO)
        bench_cmd = [sys.executable, "-m", "kerneljudge.cli.main", "bench", *model_args, "--problems", "suite",
                     "--problem-ids", ids, "--backend", backend, "--device", args.device, "--turns", "2",
                     "--budget", str(args.budget), "--out", str(run), "--cache-dir", cache_dir]
        if args.judge_workers:
            bench_cmd += ["--judge-workers", str(args.judge_workers)]
        bench_rc, bench_wall = run_logged(bench_cmd, env, log_path, args.bench_timeout)

        score_cmd = [sys.executable, "-m", "kerneljudge.cli.main", "score", str(run), "--json"]
        score_rc, score_wall = run_logged(score_cmd, env, log_path, 120, stdout_path=out / "score.json")
        table_rc, _ = run_logged(score_cmd[:-1], env, log_path, 120, stdout_path=out / "score.txt")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    try:
        score = json.loads((out / "score.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        score = None
    rows = read_jsonl(run / "verdicts.jsonl")
    items, all_ok = check_rows(run, rows)
    all_ok = all_ok and bench_rc == 0 and score_rc == 0
    shown = lambda cmd: " ".join(str(c) for c in cmd).replace(str(out), "$OUT").replace(sys.executable, "python3")  # noqa: E731
    payload = {
        "machine": info, "backend": backend, "device": args.device, "provider": mode, "provider_how": how,
        "server_url": server_url,
        "script_command": shown(["python3", "lab/gpu_bench_llm.py", *(sys.argv[1:] if argv is None else argv)]),
        "bench_command": shown(bench_cmd).replace(cache_dir, "CACHE"), "bench_exit": bench_rc,
        "bench_wall_s": bench_wall,
        "score_command": shown(score_cmd), "score_exit": score_rc, "score_wall_s": score_wall,
        "score_table_exit": table_rc,
        "wall_s": round(time.monotonic() - started, 1), "all_ok": all_ok, "items": items,
        "server_log": model.log if mode == "openai" else None,
        "score": score,
        "score_table": (out / "score.txt").read_text(encoding="utf-8") if (out / "score.txt").exists() else "",
        "judged_on": next(({"device_name": r.get("device_name"), "preset": r.get("preset"),
                            "versions": r.get("versions")} for r in rows if r.get("versions")), None),
        "events": read_jsonl(run / "events.jsonl")[-40:],
    }
    (out / "gpu_bench_llm.json").write_text(json.dumps(payload, indent=1, sort_keys=True, default=str), encoding="utf-8")
    md = markdown(payload)
    (out / "gpu_bench_llm.md").write_text(md, encoding="utf-8")
    print(md)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
