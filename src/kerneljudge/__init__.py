"""kerneljudge: decide whether a rewritten PyTorch workload is correct and how much faster it is.

    import kerneljudge
    verdict = kerneljudge.judge("problem.py", "solution.py", device="cpu")

Names are imported lazily, so the child processes that run solutions load only what they need.
"""

__version__ = "0.1.0"

_EXPORTS = {
    "judge": "api", "Judge": "api",
    "JudgeOptions": "core.types", "Verdict": "core.types", "TimingStats": "core.types",
    "Problem": "core.problem", "ProblemError": "core.problem", "read_problem": "core.problem",
    "load_results": "results.export",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'kerneljudge' has no attribute {name!r}")
