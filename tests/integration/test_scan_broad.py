"""A broad raises (`pytest.raises(Exception)`) where the base's test checked a value."""

from __future__ import annotations

import pytest

from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo

BASE = """\
import contextlib
import unittest

import pytest
from invoice_lib import total_for


def test_parse():
    assert total_for([1, 2]) == 3


def test_two():
    assert total_for([1]) == 1
    assert total_for([2, 2]) == 4


class TestCase(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(total_for([5]), 5)
"""


def _head(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


BROADENED = [
    (
        "pytest.raises(Exception)",
        _head(
            "    assert total_for([1, 2]) == 3\n",
            "    with pytest.raises(Exception):\n        total_for(['bad'])\n",
        ),
        ("test_parse", 9),
    ),
    (
        "raises(BaseException) imported from pytest",
        _head(
            "    assert total_for([1, 2]) == 3\n",
            "    from pytest import raises\n\n"
            "    with raises(BaseException):\n        total_for(['bad'])\n",
        ),
        ("test_parse", 11),
    ),
    (
        "a tuple holding Exception, one of two asserts replaced",
        _head(
            "    assert total_for([2, 2]) == 4\n",
            "    with pytest.raises((ValueError, Exception), match='bad'):\n"
            "        total_for(['bad'])\n",
        ),
        ("test_two", 14),
    ),
    (
        "self.assertRaises(Exception)",
        _head(
            "        self.assertEqual(total_for([5]), 5)\n",
            "        with self.assertRaises(Exception):\n            total_for(['bad'])\n",
        ),
        ("TestCase::test_equal", 19),
    ),
    (
        "contextlib.suppress(Exception) around the call",
        _head(
            "    assert total_for([1, 2]) == 3\n",
            "    with contextlib.suppress(Exception):\n        total_for(['bad'])\n",
        ),
        ("test_parse", 9),
    ),
]


@pytest.mark.parametrize(
    ("head", "where"), [(h, w) for _, h, w in BROADENED], ids=[i for i, _, _ in BROADENED]
)
def test_a_broad_raises_where_a_value_assertion_was_is_a_weakening(
    repo: Repo, head: str, where: tuple[str, int]
) -> None:
    base(repo, BASE)
    write(repo, tests__properties__test_invoice_dot_py=head)
    scanned = scan(repo)
    assert scanned.code == 1
    found = [f for f in scanned.findings if f["kind"] == "assertion_broadened"]
    assert [(f["test"], f["line"], f["path"]) for f in found] == [(*where, PROPERTY)]
    assert found[0]["message"].startswith(
        f"property {where[0]} expects any exception (line {where[1]}) where the base's test "
        "checked a value (1 value assertion(s) gone)"
    )
    # one finding per test: the broadening says more than the dropped count
    assert "assertions_dropped" not in {f["kind"] for f in scanned.findings}


def test_a_broad_raises_counts_as_no_assertion(repo: Repo) -> None:
    """`pytest.raises(Exception)` used to count as an assertion: a truthiness `assert`
    (no value compared, so no broadening) replaced by one was 1 at the base, 1 at the
    head, nothing dropped. It counts as none now."""
    truthy = BASE.replace("assert total_for([1, 2]) == 3", "assert total_for([1, 2])")
    base(repo, truthy)
    write(
        repo,
        tests__properties__test_invoice_dot_py=truthy.replace(
            "    assert total_for([1, 2])\n",
            "    with pytest.raises(Exception):\n        total_for(['bad'])\n",
        ),
    )
    scanned = scan(repo)
    assert [(f["kind"], f["test"], f["line"]) for f in scanned.findings] == [
        ("assertions_dropped", "test_parse", 8)
    ]
    assert scanned.findings[0]["message"].startswith(
        "property test_parse checks 0 assertion(s), 1 at the base"
    )


HONEST = [
    (
        "a narrow raises with match added as a new test",
        BASE + "\n\ndef test_bad_input():\n"
        "    with pytest.raises(ValueError, match='not a number'):\n"
        "        total_for(['x'])\n",
    ),
    (
        "a broad raises made narrower",
        BASE.replace(
            "import pytest\n",
            "import pytest\n\n\ndef test_bad():\n"
            "    with pytest.raises(ValueError):\n        total_for(['x'])\n",
            1,
        ),
    ),
    (
        "a narrow raises beside the value assertion",
        _head(
            "    assert total_for([1, 2]) == 3\n",
            "    assert total_for([1, 2]) == 3\n"
            "    with pytest.raises(TypeError):\n        total_for([None])\n",
        ),
    ),
    (
        "a broad raises added beside the kept value assertion",
        _head(
            "    assert total_for([1, 2]) == 3\n",
            "    assert total_for([1, 2]) == 3\n"
            "    with pytest.raises(Exception):\n        total_for([None])\n",
        ),
    ),
]


@pytest.mark.parametrize("head", [h for _, h in HONEST], ids=[i for i, _ in HONEST])
def test_narrow_raises_and_kept_value_assertions_stay_quiet(repo: Repo, head: str) -> None:
    base(repo, BASE)
    write(repo, tests__properties__test_invoice_dot_py=head)
    scanned = scan(repo)
    assert scanned.findings == [], scanned.findings
    assert scanned.code == 0


def test_a_broad_raises_made_narrower_stays_quiet(repo: Repo) -> None:
    broad = (
        BASE + "\n\ndef test_bad():\n    with pytest.raises(Exception):\n        total_for(['x'])\n"
    )
    base(repo, broad)
    write(
        repo,
        tests__properties__test_invoice_dot_py=broad.replace(
            "pytest.raises(Exception)", "pytest.raises(TypeError, match='unsupported')"
        ),
    )
    scanned = scan(repo)
    assert scanned.findings == [], scanned.findings
