"""The check run as a plan: a pure function of the Verdict, sent elsewhere (github.py).

`plan()` decides everything a reviewer sees on the pull request: the conclusion (`success`
only for a merge candidate), the title naming the classification in words (on a verdict over
many properties: the deciding property, "entropy_silenced in property beta (1 of 20
properties)"), the Markdown summary (at most 65,535 characters, truncated with a note; a
many-property one is fitted by `render.properties` and what it left out goes in output.text,
at most 65,535 characters as well), and the annotations, cut into
batches of at most 50 (GitHub's limit per request): the first batch goes with the POST that
creates the check run, the others with PATCHes that append to it.

Annotations, in this order:
- pin changes, on their entropy.yaml line (`failure` when they reject, else `notice`);
- findings the patch introduced, or counted under strict_baseline (`failure`; a finding with
  `level == "warning"`, such as a live-entropy warning: `warning`); a finding that stood at
  the base ref is never annotated (the patch did not touch its line): the summary collapses
  them into one block;
- mutants the head's module kills and the base's let survive (`notice`: stronger; those the
  base killed and the head lets survive are `weakened_property` findings above);
- failing property tests on either host, at the test's path and line from the report
  (`failure`, also when it failed at the base ref too: the message says so; the details carry
  each host's message and the command that replays it under its seed). A test whose report
  gave no usable path (none, absolute, or leaving the repository) is annotated on the
  manifest's line 1 naming the test, so it still shows on the pull request; without a
  manifest path it appears in the summary only.

Of a many-property verdict: each property's annotations in that order, worst property
first, the title naming the property ("entropy-gate (beta): skip_marker"); one a second
property repeats (a finding in a conftest both share) is sent once. There is no cap on the
total, as for one property: the batches carry them all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from entropy_action.core.findings import Finding
from entropy_action.core.score import Survivor
from entropy_action.manifest.pindiff import PinChange
from entropy_action.render import markdown, paths, phrases, properties
from entropy_action.verdict.model import FAILING, OrderPair, TestResult, Verdict
from entropy_action.verdict.rollup import deciding

MAX_SUMMARY = 65_535  # characters of output.summary
MAX_TEXT = 65_535  # characters of output.text
MAX_PER_REQUEST = 50  # annotations per POST or PATCH
MAX_MESSAGE_BYTES = 64 * 1024  # an annotation's message and raw_details
MAX_TITLE = 255  # characters of an annotation's title
Level = Literal["notice", "warning", "failure"]
Conclusion = Literal["success", "failure", "neutral"]  # neutral: a maintainer's acceptance
# The requested action a rejected check run offers a maintainer (GitHub: at most 3 actions;
# label and identifier at most 20 characters, description 40); github.acceptance handles it.
ACCEPT_ACTION = {
    "label": "Accept after review",
    "description": "A maintainer accepts this head as is",
    "identifier": "entropy-gate-accept",
}
_HOSTS: tuple[tuple[str, Literal["a", "b"]], ...] = (("A", "a"), ("B", "b"))
_TITLE = "entropy-gate: "  # how every annotation's title starts


@dataclass(frozen=True)
class Annotation:
    """One annotation as the checks API takes it."""

    path: str
    line: int
    level: Level
    message: str
    title: str
    raw_details: str = ""

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "path": self.path,
            "start_line": self.line,
            "end_line": self.line,
            "annotation_level": self.level,
            "message": _cap_bytes(self.message, MAX_MESSAGE_BYTES) or "(no message)",
            "title": _cap_chars(self.title, MAX_TITLE),
        }
        if self.raw_details:
            body["raw_details"] = _cap_bytes(self.raw_details, MAX_MESSAGE_BYTES)
        return body


@dataclass(frozen=True)
class JudgedMerge:
    """What the verdict judged: the pull request's head merged into its base at one commit.
    A check run sits on a commit, which other pull requests may share: its output names the
    pair it speaks for."""

    base_ref: str  # the base branch ("main")
    base_sha: str
    head_sha: str
    pull_request: int | None = None  # None: a merge group
    head_ref: str = ""
    merge_commit: str = ""  # the commit the hosts ran ("": not known here)

    def line(self) -> str:
        """The summary's first line."""
        merge = f", merge commit `{self.merge_commit[:12]}`" if self.merge_commit else ""
        if self.pull_request is None:
            return (
                f"**Judged:** merge group `{self.head_sha[:12]}` against "
                f"{markdown.code(self.base_ref)} at `{self.base_sha[:12]}`{merge}."
            )
        head = f"{markdown.code(self.head_ref)} " if self.head_ref else ""
        return (
            f"**Judged:** pull request #{self.pull_request}, {head}(`{self.head_sha[:12]}`) "
            f"merged into {markdown.code(self.base_ref)} at `{self.base_sha[:12]}`{merge}."
        )


@dataclass(frozen=True)
class CheckRunPlan:
    """Everything the sender transmits; nothing is decided after this."""

    name: str
    head_sha: str
    conclusion: Conclusion
    title: str
    summary: str
    annotations: tuple[Annotation, ...] = field(default_factory=tuple)
    text: str = ""  # output.text: what a many-property summary left out ("" sends none)
    actions: tuple[dict[str, str], ...] = ()  # requested actions (buttons), on the POST

    def batches(self) -> list[tuple[Annotation, ...]]:
        """The annotations cut into requests: always one (maybe empty) for the POST."""
        items = self.annotations
        return [items[i : i + MAX_PER_REQUEST] for i in range(0, len(items), MAX_PER_REQUEST)] or [
            ()
        ]

    def _output(self, batch: Sequence[Annotation]) -> dict[str, Any]:
        output: dict[str, Any] = {"title": self.title, "summary": self.summary}
        if self.text:
            output["text"] = self.text
        if batch:
            output["annotations"] = [a.as_json() for a in batch]
        return output

    def create_body(self) -> dict[str, Any]:
        """The POST that creates the completed check run with the first batch."""
        return {
            "name": self.name,
            "head_sha": self.head_sha,
            "status": "completed",
            "conclusion": self.conclusion,
            "output": self._output(self.batches()[0]),
            **({"actions": [dict(a) for a in self.actions]} if self.actions else {}),
        }

    def update_bodies(self) -> Iterator[dict[str, Any]]:
        """One PATCH per further batch; annotations are appended by GitHub."""
        for batch in self.batches()[1:]:
            yield {"output": self._output(batch)}


def plan(
    verdict: Verdict,
    *,
    head_sha: str,
    check_name: str = "entropy-gate",
    manifest_path: str | None = "entropy.yaml",
    summary: str | None = None,
    judged: JudgedMerge | None = None,
    withheld: str | None = None,
    accept_action: bool = False,
) -> CheckRunPlan:
    """The check run for `verdict` on commit `head_sha`. `summary` defaults to the Markdown
    render of the verdict; it is truncated to GitHub's limit either way. A many-property
    verdict's default summary is fitted (`render.properties.fit`) and the sections it left
    out go in output.text, as far as they fit. `judged` names the merge the verdict is about
    (the summary's first line); `withheld` is why a merge candidate is not a success on this
    commit (another pull request shares it, the base changed): the conclusion is then
    `failure`, the title and the summary's first line say why. `accept_action`: a rejection
    offers the maintainer's "Accept after review" (ACCEPT_ACTION; github.acceptance)."""
    details = ""
    if summary is None and verdict.properties:
        fitted = properties.fit(verdict, MAX_SUMMARY, where=properties.WHERE_CHECK_RUN)
        summary, details = fitted.summary, markdown.truncate(fitted.details, MAX_TEXT)
    text = markdown.render(verdict) if summary is None else summary
    success = verdict.classification == "merge_candidate" and withheld is None
    title = markdown.title(verdict)
    lead = [judged.line()] if judged is not None else []
    if withheld is not None and verdict.classification == "merge_candidate":
        title = f"{title}, but not a success on this commit"
        lead.insert(0, f"> **Not a success on this commit:** {markdown.text(withheld)}")
    text = "\n\n".join([*lead, text]) if lead else text
    return CheckRunPlan(
        name=check_name,
        head_sha=head_sha,
        conclusion="success" if success else "failure",
        title=title,
        summary=markdown.truncate(text, MAX_SUMMARY),
        annotations=tuple(list_annotations(verdict, manifest_path=manifest_path)),
        text=details,
        actions=(ACCEPT_ACTION,) if accept_action and not success else (),
    )


def list_annotations(verdict: Verdict, *, manifest_path: str | None) -> Iterator[Annotation]:
    """Every annotation of the verdict, its absolute paths shortened (render.paths), for the
    check run and for publish's workflow-command fallback alike."""
    for annotation in _annotations(verdict, manifest_path):
        yield dataclasses.replace(
            annotation,
            message=_short(annotation.message),
            title=_short(annotation.title),
            raw_details=_short(annotation.raw_details),
        )


def _annotations(verdict: Verdict, manifest_path: str | None) -> Iterator[Annotation]:
    """Pin changes, findings, stronger mutants, tests; of a many-property verdict, each
    property's (worst first), its title naming the property, one on a line said once."""
    if not verdict.properties:
        yield from _own_annotations(verdict, manifest_path)
        return
    seen: set[tuple[str, int, str, str]] = set()
    for prop in deciding(verdict.properties):
        for annotation in _own_annotations(prop.verdict, manifest_path):
            key = (annotation.path, annotation.line, annotation.level, annotation.message)
            if key not in seen:
                seen.add(key)
                named = annotation.title.replace(_TITLE, f"{_TITLE[:-2]} ({prop.property_id}): ", 1)
                yield dataclasses.replace(annotation, title=named)


def _own_annotations(verdict: Verdict, manifest_path: str | None) -> Iterator[Annotation]:
    """One verdict's pin changes, findings, stronger mutants, tests."""
    for change in verdict.pin_diff:
        yield _pin_annotation(change)
    for finding in verdict.findings:
        if finding.introduced or verdict.strict_baseline:  # a base notice: the summary only
            yield _finding_annotation(finding, verdict.strict_baseline)
    for survivor in verdict.mutation.strengthened if verdict.mutation else ():
        yield _stronger_annotation(survivor)
    for test in verdict.tests:
        annotation = _test_annotation(test, manifest_path, verdict.order_dependence)
        if annotation is not None:
            yield annotation


def _pin_annotation(change: PinChange) -> Annotation:
    return Annotation(
        path=change.path,
        line=max(change.line, 1),
        level="failure" if change.rejects else "notice",
        message=change.message,
        title=f"entropy-gate: pin {change.kind}: {change.key}",
    )


def _finding_annotation(finding: Finding, strict: bool) -> Annotation:
    level: Level = "failure" if finding.introduced or strict else "notice"
    if finding.level == "warning":
        level = "warning"
    prefix = "" if finding.introduced else markdown.PRE_EXISTING
    test = f" (test {finding.test})" if finding.test and finding.test not in finding.message else ""
    message = f"{prefix}{finding.message}{test}"
    if finding.remediation is not None and level != "notice":
        message = f"{phrases.WHAT_TO_DO}: {finding.remediation.what}\n{message}"
    return Annotation(
        path=finding.path,
        line=max(finding.line, 1),
        level=level,
        message=message,
        title=f"entropy-gate: {finding.kind}",
    )


def _stronger_annotation(survivor: Survivor) -> Annotation:
    return Annotation(
        path=survivor.path,
        line=max(survivor.line, 1),
        level="notice",
        message=phrases.stronger(survivor.mutant, survivor.test),
        title="entropy-gate: stronger property",
    )


def _test_annotation(
    test: TestResult, manifest_path: str | None, pairs: Sequence[OrderPair] = ()
) -> Annotation | None:
    failing = [(name, key) for name, key in _HOSTS if test.outcome(key) in FAILING]
    if not failing:
        return None
    hosts = " and ".join(f"host {name}" for name, _ in failing)
    message = f"{test.id} failed on {hosts} (host A {test.host_a}, host B {test.host_b})"
    at_base = phrases.at_base_note(test)
    if at_base:  # head outcomes decide: the base run explains, it never excuses (#9)
        message += f"; it {at_base}"
    details = "\n\n".join(
        [f"host {name}:\n{m}" for name, m in (("A", test.message_a), ("B", test.message_b)) if m]
        + [
            f"replay{f' on host {host}' if host else ''}: {command}"
            for host, command in phrases.replays(test, pairs)
        ]
    )
    path, line = _test_location(test, manifest_path)
    if path is None:
        return None
    return Annotation(
        path=path,
        line=line,
        level="failure",
        message=message,
        title=f"entropy-gate: property failed on {hosts}",
        raw_details=details,
    )


def _test_location(test: TestResult, manifest_path: str | None) -> tuple[str | None, int]:
    if test.path and _repo_relative(test.path):
        return PurePosixPath(test.path.replace("\\", "/")).as_posix(), max(test.line or 1, 1)
    return manifest_path, 1


def _repo_relative(path: str) -> bool:
    """A path inside the repository: relative, no `..`, no drive."""
    posix = PurePosixPath(path.replace("\\", "/"))
    return not posix.is_absolute() and ".." not in posix.parts and ":" not in path


def _short(value: str) -> str:
    """Each line's absolute paths cut to their last parts (render.paths)."""
    return "\n".join(paths.shorten(line) for line in value.split("\n"))


def _cap_chars(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _cap_bytes(value: str, limit: int) -> str:
    data = value.encode("utf-8")
    if len(data) <= limit:
        return value
    return data[: limit - 4].decode("utf-8", "ignore") + "…"
