"""Optional dependencies, imported only where a command needs them, with an error that names the extra."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError):
    """An optional package is not installed; the message says which extra brings it."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import `module` or raise MissingExtra naming `pip install 'kerneljudge[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise MissingExtra(f"{purpose} needs the Python package '{top}', which is not installed ({exc}); "
                           f"install it with: pip install 'kerneljudge[{extra}]'") from None
