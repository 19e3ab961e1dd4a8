"""Language-model providers for generation: the common interface, OpenAI and Anthropic clients, a replay
provider for tests and offline runs, and the on-disk reply cache.

May import: core, generate modules outside providers/ that do not import providers/.
"""
