"""Rule 5: weakening against the base — removed tests, dropped assertions, tautologies."""

from __future__ import annotations

import pytest

from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo

THREE_TESTS = """\
from invoice_lib import total_for


def test_total():
    assert total_for([1, 2]) == 3
    assert total_for([]) == 0


def test_rounding():
    assert round(2.5) == 2


def test_currency():
    assert total_for([5]) == 5
"""


def test_a_removed_and_a_renamed_property(repo: Repo) -> None:
    base(repo, THREE_TESTS)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        from invoice_lib import total_for


        def test_total():
            assert total_for([1, 2]) == 3
            assert total_for([]) == 0


        def test_currency_renamed():
            assert total_for([5]) == 5
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [
        ("test_removed", PROPERTY, 4, True),
        ("test_removed", PROPERTY, 9, True),
    ]
    assert [f["message"] for f in scanned.findings] == [
        "property test_rounding (line 9 at the base) was removed or renamed — what it checked "
        "is no longer checked",
        "property renamed from test_currency to test_currency_renamed (line 13 at the base) — "
        "it still runs, but history, ignore lists and reports keyed on its name lose it",
    ]


def test_a_dropped_assertion_and_a_tautology(repo: Repo) -> None:
    base(repo, THREE_TESTS)
    write(
        repo,
        tests__properties__test_invoice_dot_py=THREE_TESTS.replace(
            "    assert total_for([]) == 0\n", ""
        ).replace("assert round(2.5) == 2", "assert True"),
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("assertions_dropped", PROPERTY, 4, True),
        ("tautology", PROPERTY, 9, True),
    ]
    assert scanned.findings[0]["message"] == (
        "property test_total checks 1 assertion(s), 2 at the base — a dropped assertion no "
        "longer fails when its condition breaks"
    )
    assert scanned.findings[1]["message"] == (
        "assertion in property test_rounding cannot fail: assert True — it checks nothing"
    )


def test_every_kind_of_tautology(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        def test_total():
            total = 3
            assert 1
            assert "x"
            assert total is total
            assert not False
            assert (total, "message")
            assert 3 == 3
        """,
    )
    scanned = scan(repo)
    assert [(k, n) for k, _, n in scanned.introduced] == [("tautology", n) for n in range(3, 9)]


REFLEXIVE = """import unittest

from invoice_lib import Invoice, total_for


def test_invoice_equality():
    invoice = Invoice([1, 2])
    assert invoice == invoice
    assert invoice == Invoice([1, 2])


class TestInvoice(unittest.TestCase):
    def test_eq(self):
        self.invoice = Invoice([3])
        self.assertEqual(self.invoice, self.invoice)
        self.assertNotEqual(self.invoice, Invoice([4]))
"""
INVOICE = """

class Invoice:
    def __init__(self, amounts):
        self.amounts = list(amounts)

    def __eq__(self, other):
        return isinstance(other, Invoice) and self.amounts == other.amounts
"""


def test_a_value_compared_with_itself_tests_its_eq_and_is_no_tautology(repo: Repo) -> None:
    """`assert invoice == invoice` calls `Invoice.__eq__`, which can be wrong (`nan == nan`
    is false): arrow's, boltons', holidays' and python-ulid's equality tests are written so.
    A patch adding such tests introduces nothing."""
    base(repo)
    lib = (repo.path / "invoice_lib.py").read_text(encoding="utf-8")
    repo.write("invoice_lib.py", lib + INVOICE)
    repo.write(PROPERTY, (repo.path / PROPERTY).read_text(encoding="utf-8") + "\n\n" + REFLEXIVE)
    scanned = scan(repo)
    assert (scanned.code, scanned.introduced) == (0, []), scanned.findings


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "    assert total_for([1, 2]) == 3\n",
            "    got = total_for([1, 2])\n    assert got == got\n",
        ),
        ("    assert total_for([]) == 0\n", "    got = total_for([])\n    assert got == got\n"),
    ],
    ids=["first", "second"],
)
def test_a_value_assertion_made_a_comparison_with_itself_is_a_dropped_assertion(
    repo: Repo, old: str, new: str
) -> None:
    """In place of a value assertion, `assert got == got` checks only `__eq__`: it is not
    counted, so the test checks one assertion fewer than at the base."""
    base(repo, THREE_TESTS)
    write(repo, tests__properties__test_invoice_dot_py=THREE_TESTS.replace(old, new))
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [("assertions_dropped", PROPERTY, 4, True)]
    assert scanned.findings[0]["message"].startswith(
        "property test_total checks 1 assertion(s), 2 at the base"
    )


def test_a_swallowed_assertion_and_a_shadowed_property(repo: Repo) -> None:
    base(repo, THREE_TESTS)
    write(
        repo,
        tests__properties__test_invoice_dot_py=THREE_TESTS.replace(
            "    assert total_for([1, 2]) == 3\n",
            "    try:\n        assert total_for([1, 2]) == 3\n    except AssertionError:\n"
            "        pass\n",
        )
        + "\n\ndef test_total():\n    assert total_for([3]) == 3\n    assert total_for([4]) == 4\n",
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("test_removed", PROPERTY, 4, True),
        ("assertion_swallowed", PROPERTY, 7, True),
    ]
    assert "is defined again further down" in scanned.findings[0]["message"]


def test_moved_assertions_new_tests_and_real_comparisons_stay_quiet(repo: Repo) -> None:
    base(repo, THREE_TESTS)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        from invoice_lib import total_for


        def check_empty():
            assert total_for([]) == 0


        def test_total():
            check_empty()
            assert total_for([1, 2]) == 3


        def test_rounding():
            assert round(2.5) == round(2.5 + 0.0)
            try:
                int("x")
            except ValueError:
                pass
            try:
                assert round(3.5) == 4
            except AssertionError:
                raise


        def test_currency():
            assert total_for([5]) == pytest.approx(5)


        def test_new():
            assert total_for([7]) == 7
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


THREADED = (
    "import threading\nimport unittest\n\n"
    + THREE_TESTS
    + """

def test_threaded():
    result = []

    def check():
        try:
            assert total_for([1, 2]) == 3
        except Exception as ex:
            result.append(ex)
        else:
            result.append("success")

    worker = threading.Thread(target=check)
    worker.start()
    worker.join()
    assert result == ["success"]


class TestThreaded(unittest.TestCase):
    def test_rounding(self):
        self.errors = []
        try:
            self.assertEqual(round(2.5), 2)
        except AssertionError as error:
            self.errors.append(error)
        self.assertEqual(self.errors, [])
"""
)
IN_THREAD = THREADED.splitlines().index("        except Exception as ex:") + 1
IN_CLASS = THREADED.splitlines().index("        except AssertionError as error:") + 1


@pytest.mark.parametrize(
    ("thread", "case"),
    [
        ('result == ["success"]', "self.assertEqual(self.errors, [])"),
        ('result[0] == "success"', "self.assertFalse(self.errors)"),
        ('result[-1] == "success"', "assert not self.errors"),
        ('"success" == result[0]', "assert len(self.errors) == 0"),
    ],
)
def test_an_exception_kept_where_an_assertion_demands_none_is_not_swallowed(
    repo: Repo, thread: str, case: str
) -> None:
    """backoff's thread tests: the failure is carried out of the thread and asserted on."""
    base(repo, THREE_TESTS)
    text = THREADED.replace('result == ["success"]', thread)
    text = text.replace("self.assertEqual(self.errors, [])", case)
    write(repo, tests__properties__test_invoice_dot_py=text)
    assert [f["kind"] for f in scan(repo).findings if f["introduced"]] == []


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        (lambda t: t.replace('    assert result == ["success"]\n', ""), IN_THREAD),  # never read
        (lambda t: t.replace("result.append(ex)", "print(ex)"), IN_THREAD),  # shown, not kept
        (lambda t: t.replace('result == ["success"]', "result or True"), IN_THREAD),
        (lambda t: t.replace('result == ["success"]', "len(result) == 1"), IN_THREAD),
        (lambda t: t.replace('result == ["success"]', "len(result) < 5"), IN_THREAD),
        (
            lambda t: t.replace("self.assertEqual(self.errors, [])", "self.assertTrue(self)"),
            IN_CLASS,
        ),
        (lambda t: t.replace("self.errors.append(error)", "self.seen = 1"), IN_CLASS),
    ],
    ids=[
        "never-read",
        "printed",
        "read-by-a-tautology",
        "a-count-the-exception-satisfies",
        "a-bound-the-exception-satisfies",
        "self-not-read",
        "not-kept",
    ],
)
def test_an_exception_kept_nowhere_an_assertion_reads_is_swallowed(repo: Repo, edit, line) -> None:
    base(repo, THREE_TESTS)
    write(repo, tests__properties__test_invoice_dot_py=edit(THREADED))
    found = [(f["kind"], f["line"]) for f in scan(repo).findings if f["introduced"]]
    assert ("assertion_swallowed", line) in found


def test_an_assertion_inside_contextlib_suppress(repo: Repo) -> None:
    base(repo, THREE_TESTS)
    write(
        repo,
        tests__properties__test_invoice_dot_py="import contextlib\n\n"
        + THREE_TESTS.replace(
            "    assert round(2.5) == 2\n",
            "    with contextlib.suppress(AssertionError):\n        assert round(2.5) == 2\n",
        ),
    )
    scanned = scan(repo)
    assert scanned.located == [("assertion_swallowed", PROPERTY, 12, True)]
    assert scanned.findings[0]["message"] == (
        "AssertionError suppressed in property test_rounding "
        "(contextlib.suppress(AssertionError)) — the assertions in the block can never fail "
        "the property"
    )


CLASS_TESTS = """\
import pytest


def test_aliases():
    assert isinstance(1, int)


class TestAbstract:
    def test_number(self):
        with pytest.raises(TypeError):
            int("x")

    def test_mapping(self):
        with pytest.raises(TypeError):
            dict(1)

    def test_subclass(self):
        assert issubclass(bool, int)
"""


def test_tests_merged_into_one_point_at_the_nearest_neighbour_of_their_class(
    repo: Repo,
) -> None:
    base(repo, CLASS_TESTS)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest


        def test_aliases():
            assert isinstance(1, int)


        class TestAbstract:
            @pytest.mark.parametrize("make", [lambda: int("x"), lambda: dict(1)])
            def test_cannot_build(self, make):
                with pytest.raises(TypeError):
                    make()

            def test_subclass(self):
                assert issubclass(bool, int)
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("test_removed", PROPERTY, 14, True),
        ("test_removed", PROPERTY, 14, True),
    ]
    assert scanned.findings[0]["message"] == (
        "property TestAbstract::test_number (line 9 at the base) was removed or renamed — what "
        "it checked is no longer checked"
    )


def test_a_rename_that_also_changes_the_body_is_a_removal(repo: Repo) -> None:
    base(repo, THREE_TESTS)
    write(
        repo,
        tests__properties__test_invoice_dot_py=THREE_TESTS.replace(
            "def test_currency():\n    assert total_for([5]) == 5",
            "def test_currency_sum():\n    assert total_for([6]) == 6",
        ),
    )
    scanned = scan(repo)
    assert scanned.located == [("test_removed", PROPERTY, 9, True)]
    assert scanned.findings[0]["message"].startswith("property test_currency (line 13 at the base)")


def test_when_no_old_test_survives_the_first_new_one_is_pointed_at(repo: Repo) -> None:
    base(repo, THREE_TESTS)
    write(repo, tests__properties__test_invoice_dot_py="\n\n\ndef test_new():\n    assert 7 > 6\n")
    scanned = scan(repo)
    assert scanned.located == [("test_removed", PROPERTY, 4, True)] * 3


HONEST_EQ = (
    THREE_TESTS
    + """

def test_amounts_equal_themselves():
    amounts = [1, 2]
    assert amounts == amounts
    assert total_for(amounts) == total_for(amounts)
    assert total_for(amounts) == 3
"""
)
TRICK_EQ = THREE_TESTS.replace(
    "    assert total_for([]) == 0\n", "    got = total_for([])\n    assert got == got\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (HONEST_EQ, ("merge_candidate", [])),
        (TRICK_EQ, ("entropy_silenced", ["assertions_dropped"])),
    ],
    ids=["honest", "trick"],
)
def test_a_value_equal_to_itself_is_judged_alike_on_every_path(
    repo: Repo, text: str, expected: tuple[str, list[str]]
) -> None:
    """The local gate, and the workflow's commands (each host's job with the base ref, then
    `verdict` and `compare` on their folders): one judgement of an equality test, and of
    a value assertion rewritten into one."""
    base(repo, THREE_TESTS)
    repo.git("checkout", "-qb", "patch")
    write(repo, tests__properties__test_invoice_dot_py=text)
    repo.commit("the patch")
    judged = repo.every_path("main")
    for command, verdict in judged.items():
        kinds = sorted({f["kind"] for f in verdict["findings"] if f["introduced"]})
        assert (verdict["classification"], kinds) == expected, (command, verdict["reasons"])
