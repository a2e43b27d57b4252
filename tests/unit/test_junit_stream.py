"""The streamed JUnit reader: junitparser's order and scope, chunk boundaries, a long prolog.

The golden files (test_reports_golden) pin the results on real reports; these pin what the
streaming itself must not change: which testcases count and in which order, that the
document may be cut anywhere between chunks, and that the DTD check covers a prolog longer
than one chunk.
"""

from __future__ import annotations

import dataclasses

import junitparser
import pytest

from entropy_action.core.errors import GateError
from entropy_action.evidence import bounded, hostreport, ids, junitcases, junitstream
from entropy_action.verdict import pairing
from tests.unit.test_reports import PASSING, host_info, write_host

NESTED = b"""<?xml version="1.0"?>
<testsuites>
  <testsuite name="outer">
    <testcase classname="m" name="first"/>
    <testsuite name="inner">
      <testcase classname="m" name="nested_one"><failure message="boom">text</failure></testcase>
      <testsuite name="innermost"><testcase classname="m" name="deepest"/></testsuite>
      <testcase classname="m" name="nested_two"/>
    </testsuite>
    <testcase classname="m" name="second"><skipped message="later"/></testcase>
  </testsuite>
  <testsuite name="next"><testcase classname="m" name="third"/></testsuite>
  <junk><testsuite><testcase classname="m" name="under_junk"/></testsuite></junk>
</testsuites>
"""


def junitparser_names(data: bytes) -> list[str]:
    """The order junitparser's own model gives (the reference the stream must keep)."""
    document = junitparser.JUnitXml.fromstring(data)
    return [case.name for suite in document for case in suite]


def streamed_names(data: bytes, chunk: int) -> list[str]:
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    return junitstream.read_cases(pieces, "x.xml", lambda elem: elem.get("name", ""))


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 16])
def test_the_stream_yields_junitparsers_testcases_in_its_order_whatever_the_chunks(chunk):
    assert streamed_names(NESTED, chunk) == junitparser_names(NESTED)
    assert streamed_names(NESTED, chunk) == [
        "first",
        "second",
        "nested_one",
        "nested_two",
        "deepest",
        "third",
    ]


@pytest.mark.parametrize(
    "misplaced",
    [
        b'<testsuites><testcase classname="m" name="under_the_root"/></testsuites>',
        b'<testsuites><testsuite><other><testcase classname="m" name="x"/></other>'
        b"</testsuite></testsuites>",
        b'<testsuite><testcase classname="m" name="a"><testcase classname="m" name="b"/>'
        b"</testcase></testsuite>",
    ],
    ids=["under the root", "under another element", "inside a testcase"],
)
def test_a_testcase_outside_a_testsuite_is_refused_whatever_the_chunks(misplaced):
    for chunk in (1, 1 << 16):
        with pytest.raises(GateError, match=r"^x\.xml: a <testcase> nested in another element"):
            streamed_names(misplaced, chunk)


def test_a_root_testsuite_counts_as_the_only_suite():
    data = b'<testsuite><testcase classname="m" name="a"/><testcase classname="m" name="b"/>'
    data += b"<testsuite><testcase classname='m' name='c'/></testsuite></testsuite>"
    assert streamed_names(data, 5) == ["a", "b", "c"]


def test_results_of_a_streamed_case_match_reading_it_whole():
    tests, errors = junitcases.parse_junit(NESTED, "x.xml")
    by_name = {t.raw_id.rsplit("::", 1)[-1]: t for t in tests}
    assert (by_name["nested_one"].outcome, by_name["nested_one"].message) == ("failed", "boom")
    assert (by_name["second"].outcome, by_name["second"].message) == ("skipped", "later")
    assert errors == ()


def test_reading_from_a_file_and_from_bytes_agree(tmp_path):
    cases = "".join(
        f'<testcase classname="tests.properties.test_shapes" name="test_{i}[{tmp_path}/x]" '
        f'file="tests/properties/test_shapes.py" line="{i}"/>'
        for i in range(3000)  # more than one chunk of the file
    )
    data = f"<testsuites><testsuite>{cases}</testsuite></testsuites>".encode()
    write_host(tmp_path, host_info("a", tmp_path), data)
    report = hostreport.read_host(tmp_path)
    normalize = ids.normalizer(ids.placeholders(report.info))
    tests, _ = junitcases.parse_junit(data, "junit.xml", normalize, report.info.module)
    assert [dataclasses.asdict(t) for t in report.tests] == [dataclasses.asdict(t) for t in tests]
    assert len(tests) == 3000
    assert tests[5].id == "tests/properties/test_shapes.py::test_5[<root>/x]"
    assert tests[5].raw_id == f"tests/properties/test_shapes.py::test_5[{tmp_path}/x]"
    assert tests[5].path is tests[6].path  # one str per file name


def test_a_document_type_after_a_prolog_longer_than_a_chunk_is_still_refused():
    comment = b"<!--" + b"x" * (3 * bounded.CHUNK) + b"-->"
    data = b'<?xml version="1.0"?>' + comment + b'<!DOCTYPE t [<!ENTITY e "boom">]><testsuites/>'
    with pytest.raises(GateError) as caught:
        junitcases.parse_junit(data, "long.xml")
    assert caught.value.message == f"long.xml: {junitstream.DTD_REFUSED}"


def test_a_long_prolog_without_a_document_type_is_read():
    comment = b"<!--" + b"x" * (3 * bounded.CHUNK) + b"-->"
    data = comment + b'<testsuite><testcase classname="m" name="a"/></testsuite>'
    tests, _ = junitcases.parse_junit(data, "long.xml")
    assert [t.raw_id for t in tests] == ["m::a"]


def test_a_document_type_after_the_root_is_an_error_not_a_declaration():
    data = b'<testsuites><!DOCTYPE t [<!ENTITY e "boom">]><testsuite/></testsuites>'
    with pytest.raises(GateError) as caught:
        junitcases.parse_junit(data, "late.xml")
    assert caught.value.message == (
        "late.xml:1: not well-formed XML: not well-formed (invalid token) (column 14)"
    )


def test_an_entity_no_document_type_declared_is_an_error():
    data = b'<testsuites><testsuite><testcase classname="m" name="&e;"/></testsuite></testsuites>'
    with pytest.raises(GateError) as caught:
        junitcases.parse_junit(data, "ent.xml")
    assert caught.value.message == "ent.xml:1: not well-formed XML: undefined entity (column 23)"


def test_malformed_xml_is_told_before_a_foreign_root():
    with pytest.raises(GateError) as caught:
        junitcases.parse_junit(b"<html><body></html>", "x.xml")
    assert caught.value.message.startswith("x.xml:1: not well-formed XML: mismatched tag")


def test_suites_nested_just_below_the_limit_are_read():
    depth = junitstream.MAX_SUITE_DEPTH
    data = (
        b"<testsuites>"
        + b"<testsuite>" * depth
        + b'<testcase classname="m" name="deep"/>'
        + b"</testsuite>" * depth
        + b"</testsuites>"
    )
    tests, _ = junitcases.parse_junit(data, "x.xml")
    assert [t.raw_id for t in tests] == ["m::deep"]
    deeper = data.replace(b"<testsuites>", b"<testsuites><testsuite>").replace(
        b"</testsuites>", b"</testsuite></testsuites>"
    )
    with pytest.raises(GateError, match="nested too deeply"):
        junitcases.parse_junit(deeper, "x.xml")


def test_the_verdict_on_reports_already_read_is_the_verdict_on_their_folders(tmp_path):
    a = write_host(tmp_path / "a", host_info("a", tmp_path / "ca"), PASSING)
    b = write_host(tmp_path / "b", host_info("b", tmp_path / "cb"), PASSING)
    base = write_host(tmp_path / "base", host_info("a", tmp_path / "cc"), PASSING)
    from_dirs = pairing.evaluate(a, b, base_a=base, loaded=None, pin_diff=None)
    read = {name: hostreport.read_host(tmp_path / name) for name in ("a", "b", "base")}
    from_reports = pairing.evaluate(
        read["a"], read["b"], base_a=read["base"], loaded=None, pin_diff=None
    )
    assert from_reports == from_dirs
    assert from_dirs.classification == "merge_candidate"
    assert pairing.base_cases(read["base"]) == pairing.base_cases(base)


@pytest.mark.parametrize("line", ["²", "٣", "-1", "", "1" * 10])
def test_a_line_that_is_not_ascii_digits_is_dropped_not_an_error(line):
    data = f'<testsuite><testcase classname="m" name="a" line="{line}"/></testsuite>'
    (test,), _ = junitcases.parse_junit(data.encode(), "x.xml")
    assert (test.raw_id, test.line) == ("m::a", None)


def test_pytests_cut_note_is_not_part_of_the_message():
    note = "&#10;[+1 more line; full report in element text]"
    data = (
        '<testsuite><testcase classname="m" name="a"><failure message="AssertionError: 1 != 2'
        f'{note}">AssertionError: 1 != 2\nmore</failure></testcase>'
        '<testcase classname="m" name="b"><failure message="x&#10;[truncated; full report in '
        'element text]">x</failure></testcase>'
        '<testcase classname="m" name="c"><failure message="[+1 more line; full report in '
        'element text] is what it said">y</failure></testcase></testsuite>'
    ).encode()
    tests, _ = junitcases.parse_junit(data, "x.xml")
    assert [t.message for t in tests] == [
        "AssertionError: 1 != 2",
        "x",
        "[+1 more line; full report in element text] is what it said",  # not pytest's note
    ]


# pytest 9.2 with --doctest-modules on a module that cannot import: collected as a Module and
# again as a DoctestModule, two collection errors of one node id, one testcase holding both
TWICE = (
    '<testsuites name="pytest tests"><testsuite name="pytest" errors="2" failures="0" '
    'skipped="0" tests="{tests}"><testcase classname="" name="test_broken" time="0.000">'
    '<error message="collection failure">ImportError while importing test module</error>'
    "{second}</testcase></testsuite></testsuites>"
)
SECOND = '<error message="collection failure">ImportError while importing test module</error>'


def test_two_collection_errors_of_one_node_id_are_the_report_pytest_wrote():
    data = TWICE.format(tests=2, second=SECOND).encode()
    assert streamed_names(data, 64) == ["test_broken"]


@pytest.mark.parametrize(
    ("tests", "second", "said"),
    [
        (2, "", "says tests=2 but holds 1"),  # an error removed from the testcase
        (3, SECOND, "says tests=3 but holds 2"),  # a testcase removed beside it
    ],
)
def test_a_report_claiming_more_than_its_errors_show_is_still_refused(tests, second, said):
    data = TWICE.format(tests=tests, second=second).encode()
    with pytest.raises(GateError, match=said):
        streamed_names(data, 64)
