"""The box every solution process (build and run) runs in: namespaces, Landlock, no new privileges.

    python -m kerneljudge.sandbox     # prints what works on this machine

`probe()` says which layers really work here (measured once per process with a tiny boxed child);
`launch.argv(...)` is the command line that starts a module in the box; `apply_pending()` is what a
boxed worker calls once it is ready to be locked in. Names are imported lazily: the launcher must stay
light (it enters a user namespace, which only a single-threaded process can).

May import: core.
"""

from __future__ import annotations

_EXPORTS = {"probe": "probing", "describe": "probing", "SandboxReport": "probing", "BoxSpec": "spec",
            "apply_pending": "landlock"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'kerneljudge.sandbox' has no attribute {name!r}")
