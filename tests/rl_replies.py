"""Recorded model replies for the RL integration tests, and a responder for tests/llm_server.py that serves them.

Four fixture problems, one reply of each kind. Every C++ reply uses the fixtures' shared load_inline source
(FIXTURE_CPU_OPS_SRC, or the compile-error fixture's own), so the judge reuses the builds the rest of the
suite makes: no new C++ build.

    problem        reply        verdict        RL reward
    gather_rows    honest       correct        > 0 (1.0 untimed)
    scale_relu     wrong        wrong_output   0
    row_sum        hack         rejected       0 (runs the C++ kernel as a decoy, returns torch's sum)
    small_matmul   build error  build_error    0
"""

from __future__ import annotations

from .conftest import FIXTURES

SOLUTIONS = FIXTURES / "solutions"
PROBLEMS = {name: FIXTURES / "problems" / f"{name}.py" for name in ("gather_rows", "scale_relu", "row_sum",
                                                                     "small_matmul")}
# a line of each problem's forward, as the prompt shows it: how a request names its problem
FORWARD_LINES = {"gather_rows": "return table[indices]", "scale_relu": "return torch.relu(x * self.weight)",
                 "row_sum": "return x.sum(dim=1)", "small_matmul": "return a @ b"}
# everything before ModelNew in the shared C++ fixtures: the imports, FIXTURE_CPU_OPS_SRC and its load_inline
SHARED_HEADER = (SOLUTIONS / "correct_cpp_gather_rows.py").read_text().split("class ModelNew")[0]


def fenced(code: str, before: str) -> str:
    return f"{before}\n\n```python\n{code}```\n\nThe C++ kernel keeps the work in one pass."


def model_new(init_args: str, init_body: str, forward_args: str, forward_body: str) -> str:
    return (SHARED_HEADER + f"class ModelNew(nn.Module):\n    def __init__(self{init_args}):\n"
            f"        super().__init__()\n{init_body}\n    def forward(self, {forward_args}):\n"
            f"        {forward_body}\n")


HONEST = fenced((SOLUTIONS / "correct_cpp_gather_rows.py").read_text(), "Here is a C++ gather kernel.")
HONEST_MATMUL = fenced((SOLUTIONS / "correct_cpp_small_matmul.py").read_text(), "Fixed: a plain C++ matmul.")
WRONG = fenced(model_new(", dim", "        self.weight = nn.Parameter(torch.randn(dim))\n", "x",
                         "return _ops.scale_relu(x, self.weight, 0.2)"), "A fused scale-relu in C++.")
HACK = fenced(model_new("", "", "x", "_ops.row_sum(x)\n        return torch.sum(x, dim=1)"),
              "The C++ kernel runs; the result is the same.")
BUILD_ERROR = fenced((SOLUTIONS / "build_cpp_compile_error.py").read_text(), "A fused C++ kernel.")

# problem -> the replies of successive turns (the last one repeats)
ONE_TURN = {"gather_rows": [HONEST], "scale_relu": [WRONG], "row_sum": [HACK], "small_matmul": [BUILD_ERROR]}
EXPECTED = {"gather_rows": ("correct", 1.0), "scale_relu": ("wrong_output", 0.0), "row_sum": ("rejected", 0.0),
            "small_matmul": ("build_error", 0.0)}
# several turns: a build error then the fix; a hack that stays a hack; an honest kernel at once
TWO_TURNS = {"small_matmul": [BUILD_ERROR, HONEST_MATMUL], "row_sum": [HACK, HACK], "gather_rows": [HONEST]}

OPTIONS = {"timing": False, "trials": 2}     # verdicts, not speed: untimed, two correctness trials


def problem_of(text: str) -> str:
    """Which fixture problem a prompt is about."""
    found = [name for name, line in FORWARD_LINES.items() if line in text]
    assert len(found) == 1, found
    return found[0]


def responder(script: dict[str, list[str]]):
    """For llm_server.responder: the reply for the request's problem at its turn (assistant messages so far)."""
    def respond(request):
        messages = request.messages
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        turn = sum(1 for m in messages if m["role"] == "assistant")
        replies = script[problem_of(first_user)]
        return ("text", replies[min(turn, len(replies) - 1)])
    return respond
