"""GRPO on kernels with TRL: a model writes kernels for kerneljudge problems, KernelReward pays accepted ones.

    pip install -e '.[trl]'
    python scripts/trl_grpo.py --model Qwen/Qwen2.5-Coder-1.5B-Instruct --problems level1 --backend cuda
    python scripts/trl_grpo.py --model NAME --service-url http://127.0.0.1:8000    # judge on a `kerneljudge serve`

The reward is KernelReward with the RL shaping of docs/rl.md (0 unless accepted; 1 + 0.25 * clamped log2 of
the speedup when accepted). Solutions are judged in child processes of a local judging pool, or by the
service: never in the trainer's process. The model is whatever GRPOTrainer accepts: a hub name or a path
(downloaded by transformers when it is a name), or a model object when build_trainer is called from Python.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kerneljudge.integrations.episode import RL_SHAPING
from kerneljudge.integrations.trl_reward import prompt_dataset
from kerneljudge.service.reward import KernelReward


def build_trainer(model: Any, problems: str | list[str], backend: str, out: str, *, service_url: str | None = None,
                  token: str | None = None, device: str = "auto", judge_options: dict | None = None,
                  processing_class: Any = None, **grpo: Any) -> tuple[Any, KernelReward]:
    """The GRPOTrainer wired to KernelReward, and the reward (close it when done)."""
    from trl import GRPOConfig, GRPOTrainer

    common = dict(shaping=RL_SHAPING, backend=backend, options=judge_options)
    reward = (KernelReward(url=service_url, token=token, **common) if service_url
              else KernelReward(device=device, **common))
    settings = {"num_generations": 4, "per_device_train_batch_size": 4, "max_completion_length": 4096,
                "logging_steps": 1, "report_to": [], "save_strategy": "no", **grpo}
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=GRPOConfig(output_dir=out, **settings),
                          train_dataset=prompt_dataset(problems, backend), processing_class=processing_class)
    return trainer, reward


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="a Hugging Face model name or a local path")
    p.add_argument("--problems", nargs="+", default=["examples"], help="examples, suite, levelN, a folder or ids")
    p.add_argument("--backend", default="cuda", help="the backend the prompt asks for (default cuda)")
    p.add_argument("--service-url", default=None, help="judge on this `kerneljudge serve`")
    p.add_argument("--token-file", default=None, help="the service's token")
    p.add_argument("--device", default="auto", help="the local judge's device (without --service-url)")
    p.add_argument("--out", default="grpo-kernels", help="the trainer's output folder")
    p.add_argument("--max-steps", type=int, default=100)
    p.add_argument("--num-generations", type=int, default=4)
    args = p.parse_args(argv)
    token = Path(args.token_file).read_text().strip() if args.token_file else None
    trainer, reward = build_trainer(args.model, args.problems, args.backend, args.out, service_url=args.service_url,
                                    token=token, device=args.device, max_steps=args.max_steps,
                                    num_generations=args.num_generations,
                                    per_device_train_batch_size=args.num_generations)
    try:
        trainer.train()
    finally:
        reward.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
