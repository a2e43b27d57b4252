"""The verdict JSON in pieces: the bytes of `summary.render_json`, never all in memory at once.

A verdict lists every test, passing ones included (100,000 of them are ~75 MiB of JSON).
Written as one string, the document was held three times over while it was written (pydantic's
buffer, the string, its encoded copy): 275 MiB at the peak for a 100,000-test compare, more
than everything else the command holds. Here pydantic writes the verdict with its lists of
tests emptied, and the tests in batches, spliced in where each empty list stood, indented as
pydantic indents them in place: the same bytes (a test holds them to `render_json`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pydantic import TypeAdapter

from entropy_action.verdict.model import PropertyVerdict, TestResult, Verdict

BATCH = 2_000  # tests serialized at a time (~1.5 MiB of JSON)
# A batch inside a one-key object: pydantic indents its tests as a verdict's own (4 spaces)
_WRAPPED: TypeAdapter[dict[str, list[TestResult]]] = TypeAdapter(dict[str, list[TestResult]])
_OPEN, _CLOSE = b'{\n  "t": [', b"\n  ]\n}"
_TOP = b"  "  # the indent of a top-level key of the verdict


def chunks(verdict: Verdict) -> Iterator[bytes]:
    """`render_json(verdict)` encoded as UTF-8, in pieces of at most a batch of tests."""
    yield from _verdict(_dumped(_shell(verdict)), verdict, _TOP)
    yield b"\n"


def _dumped(model: Verdict | PropertyVerdict) -> bytes:
    return model.model_dump_json(indent=2).encode("utf-8")


def _shell(verdict: Verdict) -> Verdict:
    """The verdict with its lists of tests left empty (its properties' tests are in them)."""
    properties = [] if verdict.properties else verdict.properties
    return verdict.model_copy(update={"tests": [], "properties": properties})


def _verdict(text: bytes, verdict: Verdict, keys: bytes) -> Iterator[bytes]:
    """`text`, the JSON of `_shell(verdict)` whose keys are indented by `keys`, with the
    verdict's tests and properties where the shell has empty lists."""
    done = 0
    for name, items in ((b"tests", verdict.tests), (b"properties", verdict.properties)):
        if not items:
            continue
        empty = b"\n" + keys + b'"' + name + b'": []'
        at = text.index(empty, done)
        yield text[done : at + len(empty) - 1]  # through the list's "["
        if name == b"tests":
            yield from _tests(verdict.tests, keys + b"  ")
        else:
            yield from _properties(verdict.properties or [], keys + b"  ")
        yield b"\n" + keys + b"]"
        done = at + len(empty)
    yield text[done:]


def _tests(tests: Sequence[TestResult], items: bytes) -> Iterator[bytes]:
    """The tests as list items indented by `items` (a comma between items, none after)."""
    deeper = b"\n" + items[4:] if len(items) > 4 else None  # the batch comes indented by 4
    for start in range(0, len(tests), BATCH):
        block = _WRAPPED.dump_json({"t": list(tests[start : start + BATCH])}, indent=2)
        body = block[len(_OPEN) : -len(_CLOSE)]  # "\n    {...},\n    {...}"
        if deeper is not None:
            body = body.replace(b"\n", deeper)
        yield body if start == 0 else b"," + body


def _properties(properties: Sequence[PropertyVerdict], items: bytes) -> Iterator[bytes]:
    """Each property's verdict as a list item indented by `items`, its tests streamed too."""
    for index, prop in enumerate(properties):
        shell = prop.model_copy(update={"verdict": _shell(prop.verdict)})
        text = b"\n" + items + _dumped(shell).replace(b"\n", b"\n" + items)
        if index:
            yield b","
        yield from _verdict(text, prop.verdict, items + b"    ")  # its verdict's keys
