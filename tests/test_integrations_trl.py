"""KernelReward inside TRL's GRPOTrainer (trl 1.16): the trainer of scripts/trl_grpo.py built around a tiny model
made here (nothing downloaded), and its own reward step (_calculate_rewards) run on a batch of recorded replies."""

from __future__ import annotations

import asyncio

import pytest

from .conftest import load_file
from .rl_replies import BUILD_ERROR, HACK, HONEST, OPTIONS, PROBLEMS, WRONG

trl = pytest.importorskip("trl")


def tiny_model_and_tokenizer():
    """A one-layer GPT-2 and a six-word tokenizer, built in memory."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", "[PAD]", "[EOS]", "write", "a", "kernel"])}
    words = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=words, unk_token="[UNK]", pad_token="[PAD]",
                                        eos_token="[EOS]")
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    config = GPT2Config(vocab_size=len(vocab), n_positions=64, n_embd=16, n_layer=1, n_head=2, bos_token_id=2,
                        eos_token_id=2, pad_token_id=1)
    return GPT2LMHeadModel(config), tokenizer


@pytest.mark.slow
def test_grpo_trainer_runs_kernel_reward_on_a_batch(tmp_path, cache_dir):
    example = load_file("scripts", "trl_grpo")
    model, tokenizer = tiny_model_and_tokenizer()
    problems = [str(PROBLEMS[name]) for name in ("gather_rows", "scale_relu", "row_sum", "small_matmul")]
    trainer, reward = example.build_trainer(
        model, problems, "cpp", str(tmp_path / "out"), device="cpu", processing_class=tokenizer, use_cpu=True,
        judge_options={**OPTIONS, "cache_dir": cache_dir}, num_generations=2, per_device_train_batch_size=2,
        max_completion_length=8)
    try:
        assert trainer.reward_func_names == ["kerneljudge_reward"] and trainer.reward_funcs == [reward]
        rows = list(trainer.train_dataset)
        assert [r["problem_id"] for r in rows] == problems and rows[0]["prompt"][0]["role"] == "system"
        # one GRPO group per problem (2 generations each), completions in TRL's conversational form
        replies = {problems[0]: HONEST, problems[1]: WRONG, problems[2]: HACK, problems[3]: BUILD_ERROR}
        inputs = [row for row in rows for _ in range(2)]
        prompts = [row["prompt"] for row in inputs]
        completions = [[{"role": "assistant", "content": replies[row["problem_id"]]}] for row in inputs]
        rewards = trainer._calculate_rewards(inputs, prompts, completions, [[1, 2]] * len(inputs))
        assert rewards.shape == (8, 1)
        assert rewards[:, 0].tolist() == pytest.approx([1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        verdicts = [r.verdict["verdict"] for r in reward.last_results]
        assert verdicts[::2] == ["correct", "wrong_output", "rejected", "build_error"]
    finally:
        reward.close()


@pytest.mark.slow
def test_the_async_form_is_what_trl_awaits(cache_dir):
    from trl.trainer.utils import get_callable_name, is_async_callable

    from kerneljudge.integrations.episode import RL_SHAPING
    from kerneljudge.integrations.trl_reward import AsyncKernelReward
    from kerneljudge.service.reward import KernelReward

    with KernelReward(device="cpu", options={**OPTIONS, "cache_dir": cache_dir}, shaping=RL_SHAPING,
                      backend="cpp") as reward:
        assert not is_async_callable(reward) and get_callable_name(reward) == "kerneljudge_reward"
        wrapped = AsyncKernelReward(reward)
        assert is_async_callable(wrapped) and get_callable_name(wrapped) == "kerneljudge_reward"
        scores = asyncio.run(wrapped(prompts=["p", "p"], completions=[HONEST, HACK], completion_ids=[[1], [1]],
                                     problem_id=[str(PROBLEMS["gather_rows"]), str(PROBLEMS["row_sum"])],
                                     trainer_state=None, log_extra=None, log_metric=None))
        assert scores == [1.0, 0.0]
