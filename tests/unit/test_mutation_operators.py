"""The mutation operators: which places change, how, and always the same way for one seed."""

from __future__ import annotations

import textwrap

import pytest

from entropy_action.strength.mutation.operators import Target, functions, mutants

FEES = textwrap.dedent(
    """\
    LIMIT = 30


    def late_fee(amount: int, days_late: int) -> int:
        # a fee after the limit
        if days_late > LIMIT:
            return amount // 10
        return 0


    class Ledger:
        def total(self, items) -> float:
            total = 0.0
            for i in range(1, len(items)):
                total += items[i] * 2
            log(total)
            return total


    def untouched(x):
        return x - 1
    """
)


def described(path: str = "billing/fees.py", **kwargs: object) -> list[str]:
    targets = [Target(path, 4, "late_fee"), Target(path, 12, "Ledger.total")]
    seed, limit = kwargs.get("seed", 7), kwargs.get("limit", 99)
    found = mutants({path: FEES}, targets, seed=seed, limit=limit)  # type: ignore[arg-type]
    return [m.describe() for m in found]


def test_every_operator_on_the_targeted_functions_only() -> None:
    # `return 0` → 0 is no change and is left out; `untouched` is not a target
    assert described() == [
        "billing/fees.py:6: days_late > LIMIT → not (days_late > LIMIT)",
        "billing/fees.py:6: days_late > LIMIT → days_late >= LIMIT",
        "billing/fees.py:7: amount // 10 → 0",
        "billing/fees.py:7: amount // 10 → amount * 10",
        "billing/fees.py:7: 10 → 11",
        "billing/fees.py:8: 0 → 1",
        "billing/fees.py:14: len(items) → len(items) + 1",
        "billing/fees.py:14: 1 → 2",
        "billing/fees.py:15: total += items[i] * 2 → total -= items[i] * 2",
        "billing/fees.py:15: total += items[i] * 2 → pass",
        "billing/fees.py:15: items[i] * 2 → items[i] / 2",
        "billing/fees.py:15: 2 → 3",
        "billing/fees.py:16: log(total) → pass",
        "billing/fees.py:17: total → 0.0",
    ]


def test_a_mutant_changes_one_span_and_keeps_every_other_line_and_comment() -> None:
    (mutant,) = [
        m
        for m in mutants({"fees.py": FEES}, [Target("fees.py", 4, "late_fee")], 1, 99)
        if m.after == "days_late >= LIMIT"
    ]
    before, after = FEES.splitlines(), mutant.source.splitlines()
    assert len(before) == len(after)
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [5]
    assert after[5] == "    if days_late >= LIMIT:"
    assert after[4] == "    # a fee after the limit"
    assert (mutant.function, mutant.operator, mutant.span) == ("late_fee", "compare", (4, 8))
    compile(mutant.source, "fees.py", "exec")


def test_each_mutant_compiles_and_differs_from_the_source() -> None:
    found = mutants({"fees.py": FEES}, [Target("fees.py", 4, "late_fee")], 1, 99)
    for mutant in found:
        compile(mutant.source, "fees.py", "exec")
    assert all(m.source != FEES for m in found if m.before != m.after)
    assert len({m.digest for m in found}) == len([m for m in found if m.source != FEES])


def test_the_same_seed_draws_the_same_mutants_and_another_seed_others() -> None:
    first = described(seed=9173, limit=5)
    assert first == described(seed=9173, limit=5)
    assert len(first) == 5
    assert first != described(seed=1, limit=5)
    assert set(first) <= set(described())
    assert first == sorted(first, key=described().index)  # drawn, then kept in source order


@pytest.mark.parametrize(
    ("annotation", "constant"),
    [("-> int", "0"), ("-> str", "''"), ("-> list[int]", "[]"), ("-> 'dict'", "{}"), ("", "None")],
)
def test_a_returned_value_becomes_a_constant_of_its_type(annotation: str, constant: str) -> None:
    source = f"def f(x){annotation}:\n    return x.value\n"
    found = mutants({"m.py": source}, [Target("m.py", 1, "f")], 1, 9)
    assert [m.after for m in found if m.operator == "return"] == [constant]


def test_files_that_do_not_parse_and_functions_not_asked_for_give_nothing() -> None:
    assert mutants({"m.py": "def f(:\n"}, [Target("m.py", 1, "f")], 1, 9) == []
    assert mutants({"m.py": FEES}, [Target("m.py", 20, "untouched")], 1, 9) != []
    assert mutants({"m.py": FEES}, [Target("m.py", 3, "nothing here")], 1, 9) == []
    assert mutants({}, [Target("m.py", 4, "late_fee")], 1, 9) == []


def test_functions_names_methods_and_spans_with_decorators() -> None:
    source = (
        "class A:\n    @staticmethod\n    def f():\n        def g():\n            pass\n"
        "if True:\n    def h():\n        try:\n            def i(): pass\n        finally: pass\n"
    )
    assert functions(source) == [
        (3, 2, 5, "A.f"),
        (4, 4, 5, "A.f.g"),
        (7, 7, 10, "h"),
        (9, 9, 9, "h.i"),
    ]
    assert functions("def (") == []


def test_a_form_feed_between_functions_keeps_every_mutant_in_its_place() -> None:
    """`ast` counts lines at \\n and \\r only; a form feed (^L, old modules' page breaks) ends
    no line for it, and a mutant spliced by str.splitlines lands a line off."""
    text = "def f(x):\n    return x + 1\n\x0c\ndef g(y):\n    if y > 2:\n        return y * 3\n"
    found = mutants({"ff.py": text}, [Target("ff.py", 4, "g")], 1, 100)
    assert [m.describe() for m in found][:2] == [
        "ff.py:5: y > 2 → not (y > 2)",
        "ff.py:5: y > 2 → y >= 2",
    ]
    for mutant in found:
        compile(mutant.source, "ff.py", "exec")
        assert mutant.source.count("\x0c") == 1
    assert found[1].source == text.replace("y > 2", "y >= 2")
