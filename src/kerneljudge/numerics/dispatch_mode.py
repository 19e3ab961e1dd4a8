"""The base of the judge's dispatch modes (operation counting, emulated operand rounding).

torch wraps every TorchDispatchMode's __torch_dispatch__ in torch._dynamo.disable unless the class says no,
and that wrapper's first call imports torch._dynamo: 2-4 s, which landed on the way of every judge's first
comparison (the reference process counts the problem's arithmetic and measures its tf32 floor with such
modes). Nothing these modes see is ever compiled, so they say no.
"""

from __future__ import annotations

from torch.utils._python_dispatch import TorchDispatchMode


class UncompiledMode(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False
