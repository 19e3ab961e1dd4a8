"""The redaction rules of generate/redaction.py: what of the judge's text a model must not see, and what it may.

Redacted: seed values, integers of 14 or more digits, the judge's "at a held-out shape (...)" clause with the
indices, shapes and counts after it, and (given the held-out presets) their key=value pairs, the shape lists
holding one of their sizes and those sizes standing alone. Everything else is left byte for byte.
"""

from __future__ import annotations

import pytest

from kerneljudge.generate.redaction import redact_held_out_reason, redact_seeds, redactor, sanitize_text

# --- seeds -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("seed=1234", "seed=<hidden>"),
    ("Seed: 42", "Seed: <hidden>"),
    ("SEED -4", "SEED <hidden>"),
    ("seeds=12", "seeds=<hidden>"),
    ("init_seed 3", "init_seed <hidden>"),
    ("ran with seed=7, init_seeds: 8.", "ran with seed=<hidden>, init_seeds: <hidden>."),
    ("seed=123456789012345678", "seed=<hidden>"),
])
def test_seed_values_are_hidden_and_their_names_kept(text, want):
    assert redact_seeds(text) == want


@pytest.mark.parametrize("text", [
    "seedling 5", "reseed 5", "seed_value=5", "my_seed=5", "seed=abc", "seed = x1", "no seed given",
])
def test_words_that_only_contain_seed_are_left_alone(text):
    assert redact_seeds(text) == text


def test_integers_of_fourteen_digits_or_more_become_a_placeholder():
    assert redact_seeds("id 12345678901234 end") == "id <number> end"
    assert redact_seeds("(98765432109876543210)") == "(<number>)"


@pytest.mark.parametrize("text", [
    "id 1234567890123",               # 13 digits
    "tensor abc12345678901234567",   # part of a word
    "x 12345678901234567.5",         # part of a decimal
    "pi 3.14159265358979323",        # digits after a dot
])
def test_shorter_or_embedded_numbers_are_left_alone(text):
    assert redact_seeds(text) == text


# --- the held-out reason -----------------------------------------------------------------------------------


def test_held_out_clause_is_rewritten_and_the_details_after_it_hidden():
    text = ("trial 1: at [1, 2] wrong at a held-out shape (batch_size=1021, shape=(3, 4)): output differs at "
            "[3, 4999]: got 1.5, 12 of 40 elements, torch.Size([7, 7]) and (5, 6)")
    shown, hidden = redact_held_out_reason(text)
    assert hidden is True
    assert shown == ("trial 1: at [1, 2] wrong at a shape not shown to you: output differs at [hidden]: got 1.5, "
                     "some elements, (hidden) and (hidden)")
    for secret in ("1021", "4999", "12 of 40", "held-out", "7, 7"):
        assert secret not in shown


def test_unclosed_held_out_clause_is_removed_to_the_end():
    assert redact_held_out_reason("wrong at a held-out shape (n=3, m=") == ("wrong at a shape not shown to you", True)


@pytest.mark.parametrize("text", ["", "wrong at [3, 4]: 2 of 5 differ", "a held-out shape is used", "held_out=(1, 2)"])
def test_text_without_the_held_out_clause_is_unchanged(text):
    assert redact_held_out_reason(text) == (text, False)


# --- held-out shapes given by the problem --------------------------------------------------------------------

HIDDEN = [{"batch_size": 1021, "dim": 5003}]


def test_key_value_pairs_of_a_held_out_preset_are_hidden():
    clean = redactor(HIDDEN)
    assert clean("batch_size = 1021, dim=5003") == "batch_size=<hidden>, dim=<hidden>"
    assert clean("batch_size=64, dim=50031") == "batch_size=64, dim=50031"     # other values


def test_shapes_holding_a_held_out_size_are_hidden_others_kept():
    clean = redactor(HIDDEN)
    assert clean("torch.Size([1021, 64]) vs [64, 64] and (2, 5003)") == "(hidden) vs [64, 64] and (hidden)"


def test_held_out_sizes_and_their_product_are_hidden_standing_alone():
    clean = redactor(HIDDEN)
    assert clean("n=1021 rows, 5108063 elements") == "n=<hidden> rows, <hidden> elements"   # 1021 * 5003
    assert clean("1021.5 and x1021 and 1021x") == "1021.5 and x1021 and 1021x"


def test_small_held_out_sizes_are_hidden_only_in_pairs_and_shapes():
    clean = redactor([{"n": 7, "m": 3}])
    assert clean("got 7 items, n=7, [7, 8], [8, 9], 21 total") == \
        "got 7 items, n=<hidden>, [hidden], [8, 9], <hidden> total"


def test_bool_and_nested_values_of_a_preset():
    clean = redactor([{"flag": True, "shape": [[2, 12]]}])
    assert clean("flag=True [1, 2] [12] (24,)") == "flag=<hidden> [hidden] [hidden] (hidden)"
    assert redactor([{"flag": True}])("[1, 1] 1") == "[1, 1] 1"     # True is no size


def test_redactor_also_hides_seeds_and_accepts_a_generator():
    clean = redactor(p for p in HIDDEN)
    assert clean("dim=5003 seed=9 id 123456789012345") == "dim=<hidden> seed=<hidden> id <number>"
    assert clean("dim=5003") == "dim=<hidden>"      # the generator was read once, not per call
    assert redactor()("n=5003 seed=1") == "n=5003 seed=<hidden>"


def test_sanitize_text_applies_every_rule():
    text = "wrong at a held-out shape (dim=5003): at [0, 1] seed=5; retry with dim=5003 and 1021 rows"
    assert sanitize_text(text, HIDDEN) == "wrong at a shape not shown to you: at [hidden] seed=<hidden>; retry with " \
                                          "dim=<hidden> and <hidden> rows"
    assert sanitize_text(text) == ("wrong at a shape not shown to you: at [hidden] seed=<hidden>; retry with "
                                   "dim=5003 and 1021 rows")
    assert sanitize_text(None) == "" and sanitize_text("") == ""


@pytest.mark.parametrize("text", [
    "error: expected ';' before '}' token at line 12",
    "output differs at [3, 7]: got 0.52, expected 0.18 (|err| 0.34 > allowed 0.0002)",
    "kernel_5003 took 1.25 ms (41%)",
    "ModelNew.forward() takes 2 positional arguments but 3 were given",
])
def test_ordinary_judge_text_is_left_alone(text):
    assert sanitize_text(text, HIDDEN) == text
