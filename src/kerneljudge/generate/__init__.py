"""Generation: drive language models to write kernels (providers, prompts, extraction, strategies)."""
