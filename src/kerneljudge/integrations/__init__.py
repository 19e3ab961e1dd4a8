"""kerneljudge where RL people train: a verifiers environment (verifiers.py), an OpenEnv server
(openenv_server.py, openenv_client.py) and the pieces they share (problems.py: which problems an episode
draws from; episode.py: prompts, judging, feedback and the RL reward). TRL needs nothing here:
service.reward.KernelReward is its reward function. Each framework is an optional extra, imported only by
its own module.

May import: core, generate, service, suite.
"""
