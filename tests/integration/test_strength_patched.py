"""What the patch did to production code, read from git (strength.unmeasured.patched)."""

from __future__ import annotations

from entropy_action.strength.unmeasured import Patched, classify, patched
from tests.support.helpers import Repo

BASE_TEST = b"""\
from fees import late_fee, Ledger


def _helper():
    return Ledger().post(1, 2)


def test_fee():
    assert late_fee(1000, 30) == 0


class TestLedger:
    def test_post(self):
        assert Ledger().post(1, 2) == 3
"""


def test_renamed_removed_and_resigned_names_and_the_calls_the_head_changed(repo: Repo) -> None:
    repo.write("fees.py", "def late_fee(amount, days):\n    return 0\n\n\nRATE = 3\n")
    repo.write("ledger.py", "class Ledger:\n    def post(self, a, b):\n        return a + b\n")
    repo.write("tests/test_fees.py", BASE_TEST.decode())
    base = repo.commit("base")
    repo.write("fees.py", "def late_fee(amount, *, days):\n    return 0\n")  # RATE removed
    repo.remove("ledger.py")  # the module is gone
    repo.write("tests/helper_test.py", "def late_fee(x):\n    return x\n")  # test code: ignored
    head_test = BASE_TEST.replace(b"late_fee(1000, 30)", b"late_fee(1000, days=30)")
    found = patched(repo.path, base, BASE_TEST, head_test)
    assert found.gone == frozenset({"RATE", "Ledger", "post", "ledger"})
    assert found.resigned == frozenset({"late_fee"})
    assert found.recalled == frozenset({("test_fee", "late_fee")})


def test_the_failure_classes() -> None:
    got = Patched(
        gone=frozenset({"total_for", "invoice"}),
        resigned=frozenset({"late_fee"}),
        recalled=frozenset({("", "late_fee")}),  # a helper of the module calls it differently
    )
    cases = {
        "TypeError: late_fee() got an unexpected keyword argument 'due'": "excused",
        "TypeError: Ledger.late_fee() missing 1 required positional argument: 'x'": "excused",
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'": "counted",
        "ImportError: cannot import name 'total_for' from 'invoice'": "unmeasured",
        "ModuleNotFoundError: No module named 'invoice'": "unmeasured",
        "AttributeError: module 'invoice' has no attribute 'total_for'": "unmeasured",
        "AttributeError: 'NoneType' object has no attribute 'total'": "counted",
        "ValueError: invoice overdue": "counted",
        "": "counted",
    }
    assert {m: classify("test_x", m, got).kind for m in cases} == cases
