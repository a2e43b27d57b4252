"""Reading one host's report: real pytest JUnit XML, host.json, and hostile input.

The helpers at the top (host.json from a HostInfo, a real pytest run) are shared with
test_compare and test_summary.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from entropy_action import __version__
from entropy_action.core import variations
from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import Fingerprint, HostInfo
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.evidence import hostreport, ids

MODULE = "tests/properties/test_shapes.py"
SHA = hashlib.sha256(b"version: 1\n").hexdigest()


def fingerprint(*, isolated: bool = False, hostname: str = "laptop") -> Fingerprint:
    return Fingerprint(
        python_version="3.11.7",
        python_implementation="CPython",
        platform="Linux-6.1-x86_64",
        hostname_sha256=hashlib.sha256(hostname.encode()).hexdigest(),
        locale="C.UTF-8",
        tz="UTC",
        uid=0,
        isolated=isolated,
    )


def host_info(host: str, root: Path | str, **overrides: object) -> HostInfo:
    """A host.json as `entropy-gate run` writes it; host B is isolated by default."""
    isolated = host == "b"
    fields: dict[str, object] = {
        "host": host,
        "gate_version": __version__,
        "property_id": "shapes",
        "module": MODULE,
        "manifest_sha256": SHA,
        "returncode": 0,
        "fingerprint": fingerprint(isolated=isolated, hostname=f"host-{host}"),
        "pins_applied": {"tz": "UTC", "rng_seed": 9173},
        "started_at": "2026-01-10T00:00:00Z",
        "finished_at": "2026-01-10T00:00:01Z",
        "isolated": isolated,
        "root": str(root),
        "temp_root": "/tmp/entropy-shapes",
        "python": sys.executable,
        # host B lists every dimension of core.variations, as `run --host b` writes them
        "variations": [
            {"dimension": name, "varied": True, "how": f"{name} differs"}
            for name in (variations.NAMES if isolated else ())
        ],
    }
    fields.update(overrides)
    return HostInfo.model_validate(fields)


def write_host(dir: Path, info: HostInfo | str | None, junit: bytes | Path | None) -> Path:
    """DIR/host.json (a HostInfo, raw text, or absent) and DIR/junit.xml (bytes or a copy)."""
    dir.mkdir(parents=True, exist_ok=True)
    if isinstance(info, HostInfo):
        (dir / HOST_JSON).write_text(info.model_dump_json(indent=2), encoding="utf-8")
    elif info is not None:
        (dir / HOST_JSON).write_text(info, encoding="utf-8")
    if isinstance(junit, Path):
        junit = junit.read_bytes()
    if junit is not None:
        (dir / JUNIT_XML).write_bytes(junit)
    return dir


def make_tree(root: Path, module_text: str, module: str = MODULE) -> Path:
    """A checkout with one property module and a pytest.ini that pins the rootdir."""
    (root / module).parent.mkdir(parents=True, exist_ok=True)
    (root / module).write_text(textwrap.dedent(module_text), encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return root


PYTEST = (
    sys.executable,
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    "-o",
    "junit_family=xunit1",
)


def run_pytest(root: Path, junit: Path, env: dict[str, str] | None = None) -> int:
    """Run the tree's property module with real pytest, as `entropy-gate run` does."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [*PYTEST, MODULE, f"--junitxml={junit}", f"--rootdir={root}"],
        cwd=root,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    assert junit.exists(), proc.stdout + proc.stderr
    return proc.returncode


MIXED = """\
    import os
    import pytest

    HERE = os.path.dirname(os.path.abspath(__file__))


    def test_pass():
        pass


    def test_fail():
        assert 1 == 2, "boom"


    @pytest.fixture
    def broken():
        raise RuntimeError("setup broke")


    def test_setup_error(broken):
        pass


    @pytest.fixture
    def breaks_later():
        yield
        raise RuntimeError("teardown broke")


    def test_fail_then_teardown(breaks_later):
        assert False


    @pytest.mark.skip(reason="not here")
    def test_skip():
        pass


    @pytest.mark.xfail(reason="known bug")
    def test_xfail():
        assert False


    @pytest.mark.parametrize("where", [HERE, "plain"])
    def test_param(where):
        pass


    class TestOuter:
        def test_method(self):
            pass

        class TestInner:
            def test_nested(self):
                pass
"""


def outcomes(report: hostreport.HostReport) -> dict[str, str]:
    return {test.id: test.outcome for test in report.tests}


def test_zero_tests_is_a_failed_host(tmp_path):
    junit = b'<testsuites><testsuite name="pytest" tests="0"/></testsuites>'
    report = hostreport.read_host(
        write_host(tmp_path, host_info("a", tmp_path, returncode=5), junit)
    )
    assert report.outcome == "fail"
    assert report.failure_notes() == [f"no tests were collected from {MODULE}"]


PASSING = (
    b'<testsuites><testsuite name="pytest"><testcase classname="tests.properties.test_shapes"'
    b' name="test_one" file="tests/properties/test_shapes.py" line="3"/></testsuite></testsuites>'
)


def test_a_passing_run_is_a_passing_host(tmp_path):
    report = hostreport.read_host(write_host(tmp_path, host_info("a", tmp_path), PASSING))
    assert report.outcome == "pass"
    assert report.failure_notes() == []


def test_a_nonzero_pytest_exit_fails_the_host_even_when_every_test_passed(tmp_path):
    report = hostreport.read_host(
        write_host(tmp_path, host_info("a", tmp_path, returncode=1), PASSING)
    )
    assert report.outcome == "fail"
    assert report.failure_notes() == [
        "pytest exited with code 1 although no test failed (an addopts threshold such as "
        "--cov-fail-under? see run.pytest_args)"
    ]


# -- where the files are, and what they may be ---------------------------------------------


def message_of(dir: Path) -> str:
    with pytest.raises(GateError) as caught:
        hostreport.read_host(dir)
    message = caught.value.message
    assert "\n" not in message
    return message


def test_a_missing_directory_names_host_json(tmp_path):
    assert message_of(tmp_path / "nowhere") == (
        f"{tmp_path}/nowhere/host.json: no such file (did the host run write its report here?)"
    )


def test_a_missing_junit_xml_names_it(tmp_path):
    write_host(tmp_path, host_info("a", tmp_path), None)
    assert message_of(tmp_path) == (
        f"{tmp_path}/junit.xml: no such file (did the host run write its report here?)"
    )


def test_a_symlinked_report_file_is_not_followed(tmp_path):
    secret = tmp_path / "secret.xml"
    secret.write_bytes(PASSING)
    write_host(tmp_path / "r", host_info("a", tmp_path), None)
    (tmp_path / "r" / JUNIT_XML).symlink_to(secret)
    assert message_of(tmp_path / "r") == (
        f"{tmp_path}/r/junit.xml: is a symbolic link; a report's files are never followed"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_place_of_a_report_file_is_refused_without_blocking(tmp_path):
    write_host(tmp_path, host_info("a", tmp_path), None)
    os.mkfifo(tmp_path / JUNIT_XML)
    assert message_of(tmp_path) == f"{tmp_path}/junit.xml: is not a regular file"


def test_a_directory_in_place_of_host_json_is_refused(tmp_path):
    (tmp_path / HOST_JSON).mkdir()
    assert message_of(tmp_path) == f"{tmp_path}/host.json: is not a regular file"


def test_a_junit_xml_over_the_size_cap_is_refused_unread(tmp_path):
    write_host(tmp_path, host_info("a", tmp_path), None)
    with (tmp_path / JUNIT_XML).open("wb") as handle:
        handle.truncate(hostreport.MAX_JUNIT_XML + 1)  # sparse: costs no disk
    assert message_of(tmp_path) == (
        f"{tmp_path}/junit.xml: larger than the limit of 67108864 bytes; refusing to read it"
    )


def test_a_host_json_over_the_size_cap_is_refused(tmp_path):
    write_host(tmp_path, " " * (hostreport.MAX_HOST_JSON + 1), PASSING)
    assert message_of(tmp_path) == (
        f"{tmp_path}/host.json: larger than the limit of 1048576 bytes; refusing to read it"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "host.json:1: not valid JSON (Expecting property name enclosed in double quotes)"),
        ("[1, 2]", "host.json: must be a JSON object (the host run's report)"),
        ("[" * 100_000, "host.json: not valid JSON (a number too long or nesting too deep)"),
        ("\udcff", "host.json: not UTF-8 text"),
    ],
)
def test_host_json_that_is_not_a_json_object_is_refused(tmp_path, text, problem):
    raw = text.encode("utf-8", "surrogateescape")
    tmp_path.joinpath(HOST_JSON).write_bytes(raw)
    tmp_path.joinpath(JUNIT_XML).write_bytes(PASSING)
    assert message_of(tmp_path) == f"{tmp_path}/{problem}"


@pytest.mark.parametrize(
    "field", ["host", "manifest_sha256", "returncode", "fingerprint", "root", "pins_applied"]
)
def test_host_json_without_a_required_field_names_the_field(tmp_path, field):
    data = host_info("a", tmp_path).model_dump(mode="json")
    del data[field]
    write_host(tmp_path, json.dumps(data), PASSING)
    assert message_of(tmp_path) == f"{tmp_path}/host.json: missing required field {field!r}"


def test_host_json_with_a_malformed_field_names_the_field_and_not_its_value(tmp_path):
    data = host_info("a", tmp_path).model_dump(mode="json")
    data["fingerprint"]["tz"] = ["Europe/Secret"]
    data["returncode"] = "zero"
    write_host(tmp_path, json.dumps(data), PASSING)
    message = message_of(tmp_path)
    assert message == (
        f"{tmp_path}/host.json: field 'returncode': Input should be a valid integer (and 1 more)"
    )


# -- hostile XML -----------------------------------------------------------------------------

SECRET_TOKEN = "s3cr3t-token-7f1c"


def hostile(kind: str, secret: Path) -> bytes:
    uri = secret.as_uri()
    documents = {
        "external entity": f'<?xml version="1.0"?>\n<!DOCTYPE t [<!ENTITY x SYSTEM "{uri}">]>\n'
        '<testsuites><testsuite><testcase classname="m" name="&x;"/></testsuite></testsuites>',
        "parameter entity": f'<!DOCTYPE t [<!ENTITY % p SYSTEM "{uri}"> %p;]><testsuites/>',
        "external DTD": f'<!DOCTYPE testsuites SYSTEM "{uri}"><testsuites/>',
        "billion laughs": '<!DOCTYPE l [<!ENTITY a "lol">'
        + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9))
        + "]><testsuites><testsuite><testcase name='&j;'/></testsuite></testsuites>",
    }
    return documents[kind].encode()


@pytest.mark.parametrize(
    "kind", ["external entity", "parameter entity", "external DTD", "billion laughs"]
)
def test_a_document_type_is_refused_and_nothing_it_points_at_is_read(tmp_path, kind):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_TOKEN, encoding="utf-8")
    write_host(tmp_path / "r", host_info("a", tmp_path), hostile(kind, secret))
    started = time.monotonic()
    message = message_of(tmp_path / "r")
    assert time.monotonic() - started < 2
    assert message == (
        f"{tmp_path}/r/junit.xml: refused: it declares a document type (DTD); a JUnit report "
        "needs none, and entities and external references are never read"
    )
    assert SECRET_TOKEN not in message


@pytest.mark.parametrize(
    ("junit", "problem"),
    [
        (
            PASSING[: PASSING.index(b"</testsuite>")],
            f"junit.xml:1: not well-formed XML: no element found (column {PASSING.index(b'</')})",
        ),
        (b"", "junit.xml:1: not well-formed XML: no element found (column 0)"),
        (
            b"<html><body>not a report</body></html>",
            "junit.xml: not a JUnit report: the root element is <html>, expected <testsuites> "
            "or <testsuite>",
        ),
        (
            b"<testsuites>" + b"<testsuite>" * 5000 + b"</testsuite>" * 5000 + b"</testsuites>",
            "junit.xml: test suites nested too deeply; not a pytest report",
        ),
        (
            b'<?xml version="1.0" encoding="klingon"?><testsuites/>',
            "junit.xml: not well-formed XML (bad encoding or nesting)",
        ),
    ],
    ids=["truncated", "empty", "not junit", "nested", "unknown encoding"],
)
def test_xml_that_is_not_a_pytest_report_is_refused_in_one_line(tmp_path, junit, problem):
    write_host(tmp_path, host_info("a", tmp_path), junit)
    assert message_of(tmp_path) == f"{tmp_path}/{problem}"


def test_control_characters_in_a_report_are_escaped_not_printed(tmp_path):
    junit = (
        '<testsuites><testsuite><testcase classname="m" name="t\u009b2J\u202egnp.exe"'
        ' file="m.py"><failure message="a\u0085b&#10;c"/></testcase></testsuite></testsuites>'
    )
    report = hostreport.read_host(write_host(tmp_path, host_info("a", tmp_path), junit.encode()))
    (test,) = report.tests
    assert test.raw_id == "m.py::t\\x9b2J\\u202egnp.exe"
    assert test.message == "a\\x85b\nc"


# -- test identity ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file", "classname", "name", "expected"),
    [
        ("tests/test_a.py", "tests.test_a", "test_x", "tests/test_a.py::test_x"),
        ("tests/test_a.py", "tests.test_a.TestK", "test_x[1]", "tests/test_a.py::TestK::test_x[1]"),
        ("t/v1.2/test_a.py", "t.v1.2.test_a.TestK", "test_x", "t/v1.2/test_a.py::TestK::test_x"),
        ("test_a.py", "test_a", "test_x[a.b::c]", "test_a.py::test_x[a.b::c]"),
        (None, "tests.test_a.TestK", "test_x", "tests.test_a.TestK::test_x"),  # xunit2
        ("tests/test_a.py", "", "tests.test_a", "tests/test_a.py"),  # a collection report
        ("other.py", "tests.test_a", "test_x", "tests.test_a::test_x"),  # file and class disagree
    ],
)
def test_node_ids_are_rebuilt_from_xunit1_attributes(file, classname, name, expected):
    assert ids.node_id(file, classname, name) == expected


@pytest.mark.parametrize(
    ("module", "others", "expected"),
    [
        ("t/test_a.py", (), "t.test_b.TestB::test_x"),  # what a session of one cannot tell
        ("t/test_a.py", ("t/test_b.py",), "t/test_b.py::TestB::test_x"),
        (None, ("t/test_a.py", "t/test_b.py"), "t/test_b.py::TestB::test_x"),
        ("t/test_b.py", ("t/test_a.py",), "t/test_b.py::TestB::test_x"),
    ],
)
def test_a_session_of_several_modules_names_an_inherited_test_by_the_module_that_collected_it(
    module, others, expected
):
    """workalendar's shape: TestB in t/test_b.py inherits test_x from a class in
    t/__init__.py, so pytest writes that file; the module is found among the session's."""
    classname = "t.test_b.TestB"
    assert ids.node_id("t/__init__.py", classname, "test_x", module, others) == expected


def pairs_for(root: str, temp_root: str | None) -> list[tuple[str, str]]:
    return ids.placeholders(host_info("a", root, temp_root=temp_root))


@pytest.mark.parametrize(
    ("root", "temp_root", "text", "expected"),
    [
        ("/w/repo", None, "t[/w/repo/data]", "t[<root>/data]"),
        ("/w/repo", None, "t[/w/repo]", "t[<root>]"),
        ("/w/repo", None, "t[/w/repo2/data]", "t[/w/repo2/data]"),
        ("/w/repo", None, "t[/w/repo.bak]", "t[/w/repo.bak]"),
        ("/w/repo/", None, "t[/w/repo/x-/w/repo]", "t[<root>/x-<root>]"),
        ("/tmp/e/tree", "/tmp/e", "t[/tmp/e/tree/a,/tmp/e/f]", "t[<root>/a,<tmp>/f]"),
        ("/tmp/e", "/tmp/e/tmp", "t[/tmp/e/tmp/a,/tmp/e/b]", "t[<tmp>/a,<root>/b]"),
        ("/", "/tmp", "t[/tmp/a,/b]", "t[<tmp>/a,/b]"),  # "/" is no dedicated tree
        ("C:\\", None, "t[C:\\x]", "t[C:\\x]"),
        ("C:\\w\\repo", None, "t[C:\\w\\repo\\x]", "t[<root>\\x]"),
    ],
)
def test_the_checkout_and_temp_roots_are_replaced_by_placeholders(root, temp_root, text, expected):
    assert ids.normalizer(pairs_for(root, temp_root))(text) == expected


USAGE = "pytest usage error (see pytest.log)"
HINT = (
    "an option in addopts may need a plugin this interpreter lacks: "
    'set run.pytest_args, e.g. ["-o", "addopts="]'
)


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        (  # argparse refused an option: the addopts hint, and pytest's line
            "ERROR: usage: python -m pytest [options]\n"
            "python -m pytest: error: unrecognized arguments: --cov=x\n",
            f"{USAGE}; {HINT} — python -m pytest: error: unrecognized arguments: --cov=x",
        ),
        (  # a configuration pytest cannot read: no hint, which would mislead
            "ERROR: /r/tox.ini:4: duplicate section 'testenv:py38'\n",
            f"{USAGE} — ERROR: /r/tox.ini:4: duplicate section 'testenv:py38'",
        ),
        (None, f"{USAGE}; {HINT}"),  # no log: what host.json says, no more
        (  # untrusted text: one printable line, capped
            "ERROR: \x1b[31m" + "x" * 500 + "\n",
            f"{USAGE} — ERROR: \\x1b[31m" + "x" * 284 + "…",
        ),
    ],
    ids=["argparse", "configuration", "no-log", "hostile-log"],
)
def test_a_run_pytest_refused_is_unusable_with_pytests_own_line(
    tmp_path: Path, log: str | None, reason: str
) -> None:
    """Exit 4 and no junit.xml (shortuuid c993da274e1d's tox.ini): every path that reads the
    folder says the same reason, from host.json and pytest.log, not that junit.xml is gone."""
    folder = write_host(tmp_path / "a", host_info("a", tmp_path, returncode=4), None)
    if log is not None:
        (folder / "pytest.log").write_text(log, encoding="utf-8")
    with pytest.raises(GateError) as raised:
        hostreport.read_host(folder)
    assert raised.value.message == reason


def test_a_symlinked_pytest_log_is_not_quoted(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("ERROR: the runner's secret\n", encoding="utf-8")
    folder = write_host(tmp_path / "a", host_info("a", tmp_path, returncode=4), None)
    (folder / "pytest.log").symlink_to(secret)
    with pytest.raises(GateError) as raised:
        hostreport.read_host(folder)
    assert raised.value.message == f"{USAGE}; {HINT}"
