"""A training-style loop scored by kerneljudge's reward function, with a loopback model server.

    python scripts/reward_example.py                    # judge in this process, on the CPU
    python scripts/reward_example.py --url http://127.0.0.1:8000 [--token-file F]   # against `kerneljudge serve`

The "model" is the scripted OpenAI-compatible server of tests/llm_server.py on 127.0.0.1: for each
prompt it answers one of a few canned replies (an honest Triton kernel, a reply with no code, a PyTorch
shortcut that strict rejects, a wrong kernel). Each step samples a group of completions per problem over
HTTP, as a GRPO trainer would, and scores them with KernelReward called the way TRL calls reward
functions: reward(prompts=..., completions=..., problem_id=[...]). Nothing leaves this machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kerneljudge.service.reward import KernelReward  # noqa: E402
from tests.llm_server import LLMServer  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
PROBLEM = FIXTURES / "problems" / "row_sum.py"   # a tiny problem the CPU judges in seconds
REPLIES = {
    "honest": ("Here is a Triton kernel:", FIXTURES / "solutions" / "correct_triton_row_sum.py"),
    "torch": ("Plain PyTorch is fastest to write:", FIXTURES / "solutions" / "torch_plain.py"),
    "wrong": ("A kernel with a shape bug:", FIXTURES / "solutions" / "wrong_shape_row_sum.py"),
}


def canned(kind: str) -> str:
    if kind == "prose":
        return "I would write a Triton kernel with one program per row, summing the columns in tiles."
    intro, path = REPLIES[kind]
    return f"{intro}\n\n```python\n{path.read_text()}```\n"


def sample(url: str, prompt: str) -> str:
    """One chat completion from an OpenAI-compatible server (plain HTTP, as any trainer's client does)."""
    body = json.dumps({"model": "toy", "messages": [{"role": "user", "content": prompt}]}).encode()
    request = urllib.request.Request(f"{url}/chat/completions", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None, help="a kerneljudge service (default: judge in this process)")
    parser.add_argument("--token-file", default=None, help="the service's token file")
    parser.add_argument("--steps", type=int, default=2, help="training steps (default 2)")
    parser.add_argument("--group", type=int, default=4, help="completions per prompt (default 4)")
    args = parser.parse_args()

    order = ["honest", "prose", "torch", "wrong"]
    options = {"timing": False, "trials": 2}     # the CPU judge: correctness only, to keep the example quick
    if args.url:
        token = Path(args.token_file).read_text().strip() if args.token_file else None
        reward = KernelReward(url=args.url, token=token, options=options)
    else:
        reward = KernelReward(device="cpu", options=options, workers=2)
    with LLMServer() as model, reward:
        turn = {"n": 0}

        def respond(request):            # the toy policy: cycles through the canned replies
            turn["n"] += 1
            return ("text", canned(order[(turn["n"] - 1) % len(order)]))

        model.responder = respond
        prompt = f"Write a faster ModelNew for this PyTorch model:\n\n{PROBLEM.read_text()}"
        for step in range(args.steps):
            started = time.monotonic()
            completions = [[{"role": "assistant", "content": sample(model.openai_url, prompt)}]
                           for _ in range(args.group)]
            scores = reward(prompts=[prompt] * args.group, completions=completions,
                            problem_id=[str(PROBLEM)] * args.group)
            for score, result in zip(scores, reward.last_results):
                what = result.verdict["verdict"] if result.verdict else f"no code ({result.extraction['note']})"
                shown = "    -" if score is None else f"{score:5.2f}"
                print(f"step {step} reward {shown}  {what}")
            counted = [s for s in scores if s is not None]     # None: unjudgeable, no reward applies
            mean = f"{sum(counted) / len(counted):.3f}" if counted else "-"
            print(f"step {step}: mean reward {mean} over {len(counted)} of {len(scores)} in "
                  f"{time.monotonic() - started:.1f} s (later steps repeat the same code: answered from the "
                  "verdict cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
