"""strength/renames.py's pure parts: the base's imports rewritten in place, names paired."""

from __future__ import annotations

from entropy_action.strength import renames
from entropy_action.strength.renames import Rename

BASE = b"""\
import os
from fees import late_fee, FLAT as F
from fees import (
    stamp,
)


def test_fee():  # line 8
    from fees import late_fee as inner
    assert late_fee(1, 31) == inner(1, 31)
"""


def test_every_import_of_a_renamed_name_points_at_the_new_one_and_lines_stay() -> None:
    moved = (
        Rename("fees", "fees.py", "late_fee", "overdue_fee"),
        Rename("fees", "fees.py", "stamp", "mark"),
    )
    out = renames.apply(BASE, moved)
    assert out.decode().splitlines() == [
        "import os",
        "from fees import overdue_fee as late_fee, FLAT as F",
        "from fees import (",
        "    mark as stamp,",
        ")",
        "",
        "",
        "def test_fee():  # line 8",
        "    from fees import overdue_fee as inner",
        "    assert late_fee(1, 31) == inner(1, 31)",
    ]


def test_other_modules_relative_imports_and_unparsable_sources_are_left_alone() -> None:
    moved = (Rename("other", "other.py", "late_fee", "overdue_fee"),)
    assert renames.apply(BASE, moved) == BASE
    relative = b"from .fees import late_fee\n"
    assert renames.apply(relative, (Rename("fees", "fees.py", "late_fee", "x"),)) == relative
    broken = b"from fees import late_fee\ndef (:\n"
    assert renames.apply(broken, (Rename("fees", "fees.py", "late_fee", "x"),)) == broken
    assert renames.apply(BASE, ()) == BASE


def test_one_removed_and_one_added_name_pair_and_several_pair_only_when_alike() -> None:
    base = {"a": "DEF-A", "b": "DEF-B"}
    head = {"x": "DEF-B", "y": "DEF-C"}
    assert renames._pairs({"a"}, {"y"}, base, head) == [("a", "y")]
    # a and b gone, x and y new: b's definition is x's (a rename); a's is no one's
    assert renames._pairs({"a", "b"}, {"x", "y"}, base, head) == [("b", "x")]
    assert renames._pairs({"a", "b"}, {"x", "y"}, base, {"x": "?", "y": "??"}) == []


def test_a_definition_compares_without_its_name() -> None:
    base = renames._definitions(b"def late_fee(a, d):\n    return a if d > 30 else 0\n")
    head = renames._definitions(b"def overdue_fee(a, d):\n    return a if d > 30 else 0\n")
    weak = renames._definitions(b"def overdue_fee(a, d):\n    return a if d > 60 else 0\n")
    assert base["late_fee"] == head["overdue_fee"] != weak["overdue_fee"]
    assert renames._definitions(b"def (:\n") == {}
    assert renames._definitions(None) == {}


ATTRIBUTES = b"""\
import fees
import dates.parser
from dates import parser as p


def test_fee():  # line 6
    assert fees.late_fee(1, 31) == fees.FLAT
    assert dates.parser.parse("x") == p.parse("x")
    late_fee = 3  # a local name, not the module's attribute
    assert other.late_fee == late_fee
"""


def test_names_read_through_their_module_are_rewritten_in_place() -> None:
    moved = (
        Rename("fees", "fees.py", "late_fee", "overdue_fee"),
        Rename("dates.parser", "dates/parser.py", "parse", "parse_input"),
    )
    out = renames.apply(ATTRIBUTES, moved).decode().splitlines()
    assert out[6:9] == [
        "    assert fees.overdue_fee(1, 31) == fees.FLAT",
        '    assert dates.parser.parse_input("x") == p.parse_input("x")',
        "    late_fee = 3  # a local name, not the module's attribute",
    ]
    assert out[9] == "    assert other.late_fee == late_fee"  # `other` is no import
    assert len(out) == len(ATTRIBUTES.decode().splitlines())


def test_what_a_module_reads_through_its_imports() -> None:
    assert renames._attributes(ATTRIBUTES) == {
        "fees": {"late_fee", "FLAT"},
        "dates": {"parser"},
        "dates.parser": {"parse"},
    }


def test_an_import_the_module_never_names_again_is_unused() -> None:
    tree = renames._parse(
        b"from rl import search, window\n"
        b"from rl import Clock as C\n"
        b"from rl import setup\n"
        b"from rl import hidden\n"
        b"__all__ = ['hidden']\n"
        b"def test_w():\n    assert window([1], 1) == [1]\n"
        b"    global setup\n"
        b"def test_c():\n    C\n"
    )
    assert tree is not None
    assert renames._unused(tree) == {("rl", "search")}


def test_what_a_module_binds_at_its_top_level() -> None:
    source = (
        b"import os.path\n"
        b"from .utils import search as search\n"
        b"try:\n    from fast import window\nexcept ImportError:\n    window = None\n"
        b"if True:\n    LIMIT: int = 3\n"
        b"class Clock: ...\n"
        b"def now(): ...\n"
        b"x, (y, z) = 1, (2, 3)\n"
    )
    assert renames._bound(source) == {
        "os", "search", "window", "LIMIT", "Clock", "now", "x", "y", "z",
    }  # fmt: skip
    assert renames._bound(b"from .utils import *\n") is None  # what it binds is not in it
    assert renames._bound(b"def (:\n") is None


def test_an_unused_removed_name_is_imported_as_the_modules_name_on_its_line() -> None:
    dropped = (Rename("rl", "rl/__init__.py", "search", renames.DROPPED),)
    out = renames.apply(b"from rl import search, window\n", dropped)
    assert out == b"from rl import __name__ as search, window\n"
    assert dropped[0].render() == "rl.search removed, an import it never uses (rl/__init__.py)"


COMPAT = b"""\
import sys
import platform
import os as operating

PYPY = platform.python_implementation() == "PyPy"
PY_3_10_PLUS = sys.version_info[:2] >= (3, 10)
PY_3_13_PLUS: bool = sys.version_info >= (3, 13) and not PYPY
ON_LINUX = sys.platform.startswith("linux")
HOME = operating.environ.get("HOME")
TWICE = sys.version_info >= (3, 11)
TWICE = False
CALLS = platform.system(sys.platform) == "Linux"
MAXSIZE = sys.maxsize > 2**32
"""


def test_a_flag_of_the_interpreter_is_a_top_level_name_bound_once_to_sys_or_platform() -> None:
    """What the flag rule may bind in the base's test side: an expression the host's
    interpreter evaluates alike for the base and the head. Not an environment variable
    (`os`), a name bound twice, a call with arguments, another flag's name, or `**`."""
    assert renames._flags(COMPAT) == {
        "PYPY": "__import__('platform').python_implementation() == 'PyPy'",
        "PY_3_10_PLUS": "__import__('sys').version_info[:2] >= (3, 10)",
        "ON_LINUX": "__import__('sys').platform.startswith('linux')",
    }
    assert renames._flags(b"from sys import version_info\nNEW = version_info >= (3, 10)\n") == {}
    assert renames._flags(b"import sys as s\nNEW = s.version_info >= (3, 10)\n") == {}
    assert renames._flags(b"def (:\n") == {}


def test_a_removed_flag_is_bound_to_its_base_definition_after_its_import_on_its_line() -> None:
    flag = Rename(
        "attr._compat", "src/attr/_compat.py", "PY_3_10_PLUS", renames.DROPPED,
        "__import__('sys').version_info[:2] >= (3, 10)", "tests/conftest.py",
    )  # fmt: skip
    source = b"from attr._compat import PY_3_10_PLUS, PY_3_14_PLUS  # compat\n"
    assert renames.apply(source, (flag,)) == (
        b"from attr._compat import __name__ as PY_3_10_PLUS, PY_3_14_PLUS; PY_3_10_PLUS = "
        b"__import__('sys').version_info[:2] >= (3, 10)  # compat\n"
    )
    wrapped = b"from attr._compat import (\n    PY_3_10_PLUS as NEW,\n)\nx = 1\n"
    assert renames.apply(wrapped, (flag,)).decode().splitlines() == [
        "from attr._compat import (",
        "    __name__ as NEW,",
        ")" + "; NEW = __import__('sys').version_info[:2] >= (3, 10)",
        "x = 1",
    ]
    assert flag.render() == (
        "attr._compat.PY_3_10_PLUS removed, a flag of the interpreter bound to its base "
        "definition `__import__('sys').version_info[:2] >= (3, 10)` (src/attr/_compat.py, in "
        "the base's tests/conftest.py)"
    )
