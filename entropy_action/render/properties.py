"""The Markdown summary of a verdict over many properties (`Verdict.properties`).

It leads with what decides: the headline, then a table of every property worst first
(`verdict.rollup.deciding`: property, module, classification, host A/B, tests), then one
section per property in that order, each the property's own verdict as `render.markdown`
renders it (headings one level down). A passing property's section is collapsed into a
`<details>` block; a property the head's manifest dropped reads as removed from the manifest.

GitHub takes at most 65,535 characters in a check run's output.summary (and as many in
output.text). `fit` keeps the summary within a limit by leaving out, in this order: the
passing properties' collapsed sections; then the failing sections that do not decide, least
severe first, each shortened to its heading; then the passing rows of the table; then those
headings, named in one line; then the table's rows that do not decide; and only then the
deciding sections, the same way. It says what it left out and where the whole verdict is;
what it left out, in full, is `Fitted.details` (the check run's output.text). Rendering only.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from entropy_action.render import markdown, phrases
from entropy_action.render.markdown import code, text
from entropy_action.verdict.model import PropertyVerdict, Verdict
from entropy_action.verdict.rollup import SEVERITY, deciding

WHERE = "the verdict JSON (the `verdict` artifact, its `properties` list) has every section"
WHERE_CHECK_RUN = (
    "the check run's details below hold the sections left out, as far as they fit, and " + WHERE
)
DETAILS_HEADING = "## Sections left out of the summary"


@dataclass(frozen=True)
class Fitted:
    """The summary within its limit, and what it left out."""

    summary: str
    left_out: tuple[str, ...] = ()  # the property ids whose sections are not there in full
    details: str = ""  # those sections in full, Markdown ("" when nothing was left out)


@dataclass
class _Section:
    prop: PropertyVerdict
    full: list[str]
    passing: bool
    state: str = "full"  # "full", "stub" (its heading and a note) or "gone" (named at the end)
    stub: list[str] = field(default_factory=list)
    full_size: int = -1

    def size(self) -> int:
        if self.state == "stub":
            return _size(self.stub)  # three lines
        if self.full_size < 0:
            self.full_size = _size(self.full)
        return self.full_size


def _size(block: list[str]) -> int:
    """What `block` adds to `markdown.join`: its lines and the blank line after it."""
    return sum(len(line) + 1 for line in block) + 1 if block else 0


def fit(verdict: Verdict, limit: int | None = None, *, where: str = WHERE) -> Fitted:
    """The summary of a many-property `verdict`, within `limit` characters when one is given
    (see the module's docstring for what gives way first)."""
    ordered = deciding(verdict.properties or [])
    sections = [_section(prop) for prop in ordered]
    layout = _Layout(verdict, ordered, sections, where)
    if limit is not None:
        layout.shrink(limit)
    summary = markdown.join(layout.blocks())
    if limit is not None:
        summary = markdown.truncate(summary, limit)  # the last resort: never over the limit
    left = [s for s in sections if s.state != "full" or (s.passing and not layout.passing_bodies)]
    details = markdown.join([[DETAILS_HEADING], *(s.full for s in left)]) if left else ""
    return Fitted(summary, tuple(s.prop.property_id for s in left), details)


class _Layout:
    """The summary's blocks for the current state of what is left out."""

    def __init__(
        self, verdict: Verdict, ordered: list[PropertyVerdict], sections: list[_Section], where: str
    ) -> None:
        self.verdict, self.ordered, self.sections, self.where = verdict, ordered, sections, where
        self.passing_bodies = True
        self.rows = "all"  # the table's rows: "all", "failing", or "deciding" only
        self.row_text = {id(p): _row(p) for p in ordered}
        self.head = _headline(verdict, ordered)

    def blocks(self) -> list[list[str]]:
        shown = [s for s in self.sections if not s.passing or self.passing_bodies]
        return [
            self.head,
            self._table(),
            *(s.full if s.state == "full" else s.stub for s in shown if s.state != "gone"),
            self._passing_note(),
            self._gone_note(),
            _digest(self.verdict),
        ]

    def size(self) -> int:
        """The length of `markdown.join(self.blocks())`, each section's measured once."""
        shown = [s for s in self.sections if not s.passing or self.passing_bodies]
        sections = sum(s.size() for s in shown if s.state != "gone")
        rest = [self._table(), self._passing_note(), self._gone_note(), _digest(self.verdict)]
        rest.append(self.head)
        return sections + sum(_size(block) for block in rest) - 1

    def shrink(self, limit: int) -> None:
        failing = [s for s in reversed(self.sections) if not s.passing]  # least severe first
        worst = self.verdict.classification
        others = [s for s in failing if s.prop.verdict.classification != worst]
        deciders = [s for s in failing if s.prop.verdict.classification == worst]
        steps: list[tuple[str, _Section | None]] = [("passing bodies", None)]
        steps += [("stub", s) for s in others]
        steps += [("passing rows", None)]
        steps += [("gone", s) for s in others]
        steps += [("other rows", None)]
        steps += [("stub", s) for s in deciders]  # those that decide give way last
        steps += [("gone", s) for s in deciders]
        for step, section in steps:
            if self.size() <= limit:
                return
            if section is not None:
                self._set(section, step)
            elif step == "passing bodies":
                self.passing_bodies = False
            elif step == "passing rows":
                self.rows = "failing"
            else:
                self.rows = "deciding"

    def _set(self, section: _Section, state: str) -> None:
        section.state = state
        section.stub = [section.full[0], "", f"Left out for length: {self.where}."]

    def _table(self) -> list[str]:
        worst = self.verdict.classification
        listed = [
            self.rows == "all"
            or (self.rows == "failing" and not _passes(p))
            or p.verdict.classification == worst
            for p in self.ordered
        ]
        lines = [
            "| property | module | classification | host A | host B | tests |",
            "|---|---|---|---|---|---|",
            *(self.row_text[id(p)] for p, shown in zip(self.ordered, listed, strict=True) if shown),
        ]
        hidden = [p for p, shown in zip(self.ordered, listed, strict=True) if not shown]
        if hidden:
            lines += ["", f"… and {len(hidden)} more properties, not listed: {_tally(hidden)}."]
        return lines

    def _passing_note(self) -> list[str]:
        passing = [s for s in self.sections if s.passing]
        if self.passing_bodies or not passing:
            return []
        count = len(passing)
        return [
            f"The sections of the {count} passing properties are left out for length: {self.where}."
        ]

    def _gone_note(self) -> list[str]:
        gone = [s.prop.property_id for s in self.sections if s.state == "gone"]
        if not gone:
            return []
        names = ", ".join(code(name) for name in gone)
        lead = f"**Left out for length:** the sections of {len(gone)} properties"
        return [f"{lead} ({names}): {self.where}."]


def _passes(prop: PropertyVerdict) -> bool:
    return prop.verdict.classification == "merge_candidate"


def _headline(verdict: Verdict, ordered: list[PropertyVerdict]) -> list[str]:
    mark = "✅" if verdict.merge else "❌"
    action = "merge candidate" if verdict.merge else "do not merge"
    return [
        f"## {mark} entropy-gate: `{verdict.classification}` ({action})",
        "",
        f"**{markdown.TITLES[verdict.classification]}.**",
        "",
        f"{text(phrases.properties_title(verdict.classification, ordered))}: "
        f"{_tally(ordered)}; the worst decides.",
    ]


def _tally(ordered: list[PropertyVerdict]) -> str:
    counts = [(sum(p.verdict.classification == c for p in ordered), c) for c in SEVERITY]
    return ", ".join(f"{n} `{c}`" for n, c in counts if n)


def _row(prop: PropertyVerdict) -> str:
    verdict = prop.verdict
    if prop.module is None:
        module, host_a, host_b = f"*{phrases.REMOVED}*", markdown.NOT_RUN, markdown.NOT_RUN
    else:
        module, host_a, host_b = text(prop.module), verdict.host_a, verdict.host_b
        if verdict.host_a == verdict.host_b == "missing":
            host_a = host_b = markdown.NOT_RUN
    shown = sum(markdown.differs(t) for t in verdict.tests)
    tests = f"{len(verdict.tests)}" + (f", {shown} differ or did not pass" if shown else "")
    cells = [text(prop.property_id), module, f"`{verdict.classification}`", host_a, host_b, tests]
    return f"| {' | '.join(cells)} |"


def _section(prop: PropertyVerdict) -> _Section:
    """The property's own summary, headings one level down: under a heading naming it, or,
    when it passes, collapsed into a `<details>` block naming it."""
    verdict = prop.verdict
    body = _demoted(markdown.join(markdown.sections(verdict, heading="", digest=False)))
    lines = body.split("\n")[1:-1]  # without the replaced heading and the last newline
    module = f" — {code(prop.module)}" if prop.module is not None else f" ({phrases.REMOVED})"
    if _passes(prop):
        where = f" — {_html(prop.module)}" if prop.module is not None else ""
        summary = (
            f"<summary>✅ property {_html(prop.property_id)}{where}: merge_candidate</summary>"
        )
        return _Section(prop, ["<details>", summary, *lines, "", "</details>"], passing=True)
    heading = f"### ❌ property {code(prop.property_id)}{module}: `{verdict.classification}`"
    return _Section(prop, [heading, *lines], passing=False)


def _demoted(value: str) -> str:
    """Every heading outside a code fence one level down (untrusted text cannot start a
    heading: `markdown.text` escapes `#`)."""
    out, fence = [], ""
    for line in value.split("\n"):
        demoted = "#" + line if not fence and line.startswith("#") else line
        out.append(demoted)
        fence = markdown.track_fence(fence, demoted)
    return "\n".join(out)


def _html(value: str) -> str:
    """Untrusted text inside the `<summary>` tag (raw HTML there, not Markdown): escaped."""
    return html.escape(" ".join(value.split()))


def _digest(verdict: Verdict) -> list[str]:
    digest = verdict.inputs_sha256
    return [markdown.sentence(phrases.inputs_digest(code(digest)))] if digest else []
