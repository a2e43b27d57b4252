"""Property-based fuzzing of everything that reads untrusted bytes: the manifest loader (strict
and lenient), the JUnit reader and the host.json reader.

Arbitrary bytes and structured mutations of valid inputs: whatever comes in, the only
exception that may escape is GateError, and its message names the file. Deterministic
(derandomized, no example database) and bounded: a few hundred examples, a generous
per-example deadline for a loaded 2-core machine — an input that hangs a reader fails it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.evidence import hostreport, ids, junitcases
from entropy_action.manifest import pinfile, salvage
from tests.hostile.build import FAILING_JUNIT, VALID_JUNIT, host_json
from tests.support.helpers import SEED_MANIFEST

FUZZ = settings(
    derandomize=True,
    database=None,
    max_examples=300,
    deadline=timedelta(seconds=10),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAME = "entropy.yaml"
SEED_BYTES = SEED_MANIFEST.read_bytes()
JUNIT_BYTES = [VALID_JUNIT.encode(), FAILING_JUNIT.encode()]
HOST = host_json("a", "/home/dev/project", "0" * 64)


def only_gate_errors(read: Callable[[], object], name: str) -> None:
    """`read()` returns or raises GateError whose every line names `name`."""
    message = None
    try:
        read()
    except GateError as exc:
        message = exc.message
    if message is not None:
        assert message
        for line in message.splitlines():
            assert line.startswith(name), line


# -- structured mutations --------------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8"), max_size=40)
noise = st.one_of(
    texts,
    st.sampled_from(
        [
            *("&a", "*a", "<<: ", "!!python/object:os.system", "\t", "- ", ": ", "{", "[", "'"),
            *(
                "0022",
                "~",
                "null",
                "1e999",
                "0x1F",
                "9" * 5000,
                "../../etc/passwd",
                "\x00",
                "\ufeff",
            ),
        ]
    ),
)


@st.composite
def mutated_lines(draw: st.DrawFn, original: bytes) -> bytes:
    """`original` with a few lines deleted, duplicated, cut, or with noise spliced in."""
    lines = original.decode("utf-8").splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "splice", "cut", "indent"]))
        line = lines[index]
        if action == "delete" and len(lines) > 1:
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, line)
        elif action == "splice":
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + draw(noise) + line[at:]
        elif action == "cut":
            lines[index] = line[: draw(st.integers(0, len(line)))]
        else:
            lines[index] = draw(st.sampled_from(["  ", "\t", "    "])) + line
    return "".join(lines).encode("utf-8", "surrogatepass")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated_host(draw: st.DrawFn) -> bytes:
    """A valid host.json with fields removed, replaced by any JSON value, or added."""
    data: dict[str, Any] = json.loads(json.dumps(HOST))
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from([*sorted(data), "extra"]))
        if draw(st.booleans()):
            data.pop(key, None)
        else:
            data[key] = draw(json_values)
    return json.dumps(data).encode()


@st.composite
def mutated_junit(draw: st.DrawFn) -> bytes:
    """A valid report cut short, or with noise, elements or attributes spliced in."""
    base = draw(st.sampled_from(JUNIT_BYTES)).decode()
    extra = st.sampled_from(
        [
            *('<testcase name="x"/>', '<testsuite tests="99">', "</testsuite>", "<a><b>"),
            *('<!DOCTYPE x [<!ENTITY e "e">]>', "&e;", '<skipped type="pytest.xfail"/>'),
            *('<failure message="m"/>', ' name=""', ' classname=""'),
        ]
    )
    at = draw(st.integers(0, len(base)))
    if draw(st.booleans()):
        return base[:at].encode()
    return (base[:at] + draw(st.one_of(extra, texts)) + base[at:]).encode("utf-8", "surrogatepass")


numbers = st.one_of(
    st.integers(-5, 5).map(str),
    st.sampled_from(["", "1e9", "0x10", "99999999999", "9" * 5000, "١٢"]),
    texts,
)


def _attrs(draw: st.DrawFn, names: tuple[str, ...], values: st.SearchStrategy[str]) -> str:
    chosen = draw(st.lists(st.sampled_from(names), unique=True))
    return "".join(f" {name}={quoteattr(draw(values))}" for name in chosen)


@st.composite
def generated_junit(draw: st.DrawFn) -> bytes:
    """Well-formed XML shaped like a pytest report, with any attribute values and results."""
    cases = []
    for _ in range(draw(st.integers(0, 4))):
        attrs = _attrs(draw, ("name", "classname", "file"), texts)
        attrs += _attrs(draw, ("line", "time"), numbers)
        results = draw(st.lists(st.sampled_from(["failure", "error", "skipped", "system-out"])))
        body = "".join(
            f"<{tag}{_attrs(draw, ('message', 'type'), texts)}>{escape(draw(texts))}</{tag}>"
            for tag in results
        )
        cases.append(f"<testcase{attrs}>{body}</testcase>")
    counts = _attrs(draw, ("tests", "failures", "errors", "skipped"), numbers)
    suite = f'<testsuite name="pytest"{counts}>{"".join(cases)}</testsuite>'
    root = draw(st.sampled_from(["<testsuites>{}</testsuites>", "{}"]))
    return root.format(suite).encode("utf-8", "surrogatepass")


# -- the readers -----------------------------------------------------------------------------


@FUZZ
@given(raw=st.one_of(st.binary(max_size=2000), mutated_lines(SEED_BYTES)))
def test_the_manifest_loader_raises_nothing_but_gate_error(raw: bytes) -> None:
    only_gate_errors(lambda: pinfile.parse(raw, NAME), NAME)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=2000), mutated_lines(SEED_BYTES)))
def test_the_lenient_manifest_reader_raises_nothing_but_gate_error(raw: bytes) -> None:
    base = pinfile.parse(SEED_BYTES, "base")
    only_gate_errors(lambda: salvage.parse_lenient(raw, NAME, None, base.manifest), NAME)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=3000), mutated_junit(), generated_junit()))
def test_the_junit_reader_raises_nothing_but_gate_error(raw: bytes) -> None:
    normalize = ids.normalizer([("/home/dev/project", ids.ROOT_PLACEHOLDER)])
    only_gate_errors(lambda: junitcases.parse_junit(raw, "junit.xml", normalize, None), "junit.xml")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-host")


@FUZZ
@given(raw=st.one_of(st.binary(max_size=2000), mutated_host()))
def test_the_host_json_reader_raises_nothing_but_gate_error(folder: Path, raw: bytes) -> None:
    path = folder / "host.json"
    path.write_bytes(raw)
    only_gate_errors(lambda: hostreport.read_info(path), str(path))


def test_the_mutations_reach_past_the_first_error() -> None:
    """The structured strategies are worth their cost only if they make inputs that parse:
    the unmutated seeds do, so a mutation that keeps them is a valid example."""
    assert pinfile.parse(SEED_BYTES, NAME).manifest.pins.rng_seed == 9173
    for junit in JUNIT_BYTES:
        assert len(junitcases.parse_junit(junit, "junit.xml")[0]) == 1
    assert HostInfo.model_validate(HOST).host == "a"


ROOT = st.text(alphabet="ab/.-<", min_size=1, max_size=5).map(lambda part: "/" + part)


@FUZZ
@given(roots=st.lists(ROOT, min_size=1, max_size=2, unique=True), data=st.data())
def test_the_normalizer_replaces_exactly_what_the_pattern_replaces(
    roots: list[str], data: st.DataObject
) -> None:
    """Its str.replace path (a root followed by "/") agrees with the regex it stands for,
    whatever the roots (nested, overlapping, sharing a suffix and a prefix) and the text."""
    pairs = [
        (root.rstrip("/"), name)
        for root, name in zip(roots, (ids.ROOT_PLACEHOLDER, ids.TMP_PLACEHOLDER), strict=False)
        if root.rstrip("/")
    ]
    pairs = sorted(dict(pairs).items(), key=lambda pair: len(pair[0]), reverse=True)
    if not pairs:
        return
    pieces = st.sampled_from([*(path for path, _ in pairs), "/", "]", "x", ".", "-", "<", "a"])
    text = "".join(data.draw(st.lists(pieces, max_size=10)))
    found = dict(pairs)
    either = "|".join(re.escape(path) for path, _ in pairs)
    pattern = re.compile(f"(?:{either})" + r"(?![\w.\-])")
    expected = pattern.sub(lambda m: found[m.group(0)], text)
    assert ids.normalizer(pairs)(text) == expected
