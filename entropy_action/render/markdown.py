"""The Markdown summary over a Verdict: the check run's `output.summary` and the job summary.

What a PR author reads first: a verdict line (with what an env_coupled outcome follows), the
seed's table row, then only what differs (tests, the commands that replay the failing ones, pin
changes, findings, warnings, notices, the mutation strength, reasons, host errors) and last the
inputs digest. Rendering only; every decision was made by `verdict.classify`. The wording of a
fact is `render.phrases`', shared with the text summary and the check run's annotations.

Everything that came from a host's report or from the PR's files (test ids, messages, paths,
host errors, the reasons quoting them) is untrusted: inline text is backslash-escaped (no
emphasis, links, raw HTML, mentions or table breaks), code spans and fences are longer than
any backtick run inside them, and long messages are cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from entropy_action.core.findings import Finding
from entropy_action.core.score import MutationScore
from entropy_action.manifest.pindiff import PinChange
from entropy_action.render import paths, phrases
from entropy_action.verdict import remediation
from entropy_action.verdict.classify import GATE_CONFIG
from entropy_action.verdict.model import FAILING, Classification, TestResult, Verdict
from entropy_action.verdict.pairing import NO_PIN_CHECK

MAX_MESSAGE_LINES = 20  # of one test's failure message or one host error
MAX_MESSAGE_CHARS = 2000
MAX_TESTS_SHOWN = 100  # rows of the differing-tests table
TRUNCATED_NOTE = (
    "**… summary truncated at {limit:,} {unit}.** The verdict JSON (the `verdict` artifact) "
    "and `entropy-gate compare` locally have everything."
)

# The classification in words: the check run's title and the summary's verdict line.
TITLES: dict[Classification, str] = {
    "merge_candidate": "Merge candidate: both hosts pass under intact pins, nothing silenced",
    "real_defect": "Real defect: the properties fail on both hosts",
    "env_coupled": "Environment-coupled: passes on host A, fails on host B",
    "env_coupled_reverse": "Environment-coupled the other way: fails on host A, passes on host B",
    "pin_mutation": "Pin mutation: pins in entropy.yaml or the gate's configuration changed",
    "entropy_silenced": "Entropy silenced: the patch silences nondeterminism in the tests",
    "masked_defect": "Masked defect: the properties fail and the patch silences them",
    "invalid": "Invalid input: the runs could not be judged",
}

NOT_RUN = "not run"  # a table cell when no host reported
INVALID_INPUT = "invalid input: "  # verdict.classify's prefix of a reason the inputs fail
PRE_EXISTING = "pre-existing — "  # the wording of `scan` and the text summary
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
REPLAY_INTRO = (
    "Each command runs a failing test again as its host ran it (host B: its clock, scrubbed "
    "environment and HOME, seeds, TZ, LANG, listing order and CPU count), from the repository "
    "root, with the host's report folder as `host-a/` or `host-b/` (`entropy-gate gate --out "
    "DIR` writes them; in CI, the host's artifact):"
)


def text(value: str) -> str:
    """Untrusted text as inline Markdown that renders literally, on one line.

    Every ASCII punctuation character is backslash-escaped (CommonMark renders `\\X` as X for
    all of them), so no emphasis, link, autolink, HTML tag, entity, heading or table cell
    boundary can come from the data; line breaks become spaces.
    """
    flat = " ".join(paths.shorten(value).split())
    return _PUNCTUATION.sub(r"\\\1", flat)


def prose(value: str) -> str:
    """Untrusted text as inline Markdown in which `quoted` parts render as code spans (the
    gate's messages quote code that way) and the rest as `text` does; with an odd number of
    backticks, all of it as `text`."""
    parts = value.split("`")
    if len(parts) % 2 == 0:
        return text(value)
    out = []
    for index, part in enumerate(parts):
        flat = re.sub(r"\s+", " ", paths.shorten(part))
        if index % 2 == 0:
            out.append(_PUNCTUATION.sub(r"\\\1", flat))
        else:
            out.append(code(part) if part.strip() else _PUNCTUATION.sub(r"\\\1", f"`{flat}`"))
    return "".join(out).strip()


def code(value: str) -> str:
    """Untrusted text as one inline code span (not for table cells: pipes stay)."""
    flat = " ".join(paths.shorten(value).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def fenced(value: str, info: str = "text", *, cut: bool = True) -> list[str]:
    """Untrusted text as a fenced block no line inside can close (long text `cut`)."""
    value = "\n".join(paths.shorten(line) for line in value.split("\n"))
    longest = max((len(run) for run in re.findall(r"`{3,}", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *(_cut(value) if cut else value).split("\n"), fence]


def _cut(message: str) -> str:
    lines = message.strip("\n").split("\n")
    out = "\n".join(lines[:MAX_MESSAGE_LINES])
    if len(out) > MAX_MESSAGE_CHARS:
        out = out[:MAX_MESSAGE_CHARS] + " …"
    if len(lines) > MAX_MESSAGE_LINES:
        out += f"\n… {len(lines) - MAX_MESSAGE_LINES} more lines"
    return out


def title(verdict: Verdict) -> str:
    """The check run's title: the classification in words; on a many-property verdict, the
    property that decides it (`render.properties`)."""
    if verdict.properties:
        return phrases.properties_title(verdict.classification, verdict.properties)
    if verdict.crash is not None:
        return verdict.crash.title
    return TITLES[verdict.classification]


def render(verdict: Verdict, *, limit: int | None = None) -> str:
    """The whole summary as GitHub-flavoured Markdown; a many-property verdict's by
    `render.properties` (fitted within `limit` characters when one is given)."""
    if verdict.properties:
        from entropy_action.render import properties  # noqa: PLC0415 (it builds on this module)

        return properties.fit(verdict, limit).summary
    return join(sections(verdict))


def join(parts: list[list[str]]) -> str:
    """Sections as one Markdown text, a blank line after each non-empty one."""
    return "\n".join(line for section in parts if section for line in [*section, ""])


def sections(
    verdict: Verdict, *, heading: str | None = None, digest: bool = True
) -> list[list[str]]:
    """The summary's sections in order; `heading` replaces the headline's first line, and
    `digest=False` leaves the inputs digest out (a property's section: the roll-up has one)."""
    headline = _headline(verdict)
    if heading is not None:
        headline = [heading, *headline[1:]]
    static = [_pin_changes(verdict), _findings(verdict)]
    if verdict.crash is not None:  # what the patch was seen doing leads, then the cause
        causes = ["**Why the runs cannot be judged:**", *headline[3:]]
        seen = [headline[:3], _pins_seen(verdict), *static, _next_steps(verdict), causes]
        return [*seen, *_rest(verdict, digest=digest)]
    return [headline, _next_steps(verdict), *_rest(verdict, digest=digest, static=static)]


def _pins_seen(verdict: Verdict) -> list[str]:
    """A crashed run's page: the pin check's result in front of the cause, changed or not."""
    if not verdict.pins_intact:
        return []  # the pin changes' own section says which
    checked = NO_PIN_CHECK not in verdict.reasons
    return [
        f"**Pins:** {'intact against the base ref' if checked else 'not checked (no base ref)'}."
    ]


def _rest(
    verdict: Verdict, *, digest: bool, static: list[list[str]] | None = None
) -> list[list[str]]:
    """The sections after the headline and what to do (`static`: the pin changes and
    findings, in their place after the tests)."""
    return [
        _row(verdict),
        _tests(verdict),
        _replays(verdict),
        *(static or []),
        _warnings(verdict),
        _notices(verdict),
        _strength(verdict.mutation),
        _variations(verdict),
        _list("Reasons", _reasons(verdict), prose),
        _errors(verdict.errors),
        _digest(verdict.inputs_sha256) if digest else [],
    ]


def _headline(verdict: Verdict) -> list[str]:
    mark = "✅" if verdict.merge else "❌"
    action = "merge candidate" if verdict.merge else "do not merge"
    lead = f"**{text(verdict.crash.line)}**" if verdict.crash else f"**{title(verdict)}.**"
    lines = [f"## {mark} entropy-gate: `{verdict.classification}` ({action})", "", lead]
    causes = _causes(verdict)
    if causes:
        lines += ["", *(f"- {prose(cause.removeprefix(INVALID_INPUT))}" for cause in causes)]
    evidence = _base_on_head(verdict)
    if evidence:
        lines += ["", *evidence]
    if verdict.coupled_to:
        lines += ["", sentence(phrases.coupled([code(s) for s in verdict.coupled_to]))]
    if verdict.order_dependence:
        lines += ["", *(f"- {text(phrases.order_pair(p))}" for p in verdict.order_dependence)]
    return lines


def _reasons(verdict: Verdict) -> list[str]:
    """The reasons less what the page shows already: an invalid verdict's causes (they lead)
    and the live reads listed under Warnings."""
    shown = {f"`{f.location()}` {f.message}" for f in verdict.findings if f.level == "warning"}
    causes = _causes(verdict)
    return [r for r in verdict.reasons if r not in causes and r not in shown]


def _causes(verdict: Verdict) -> list[str]:
    """Why an invalid verdict could not judge: its invalid-input reasons, shown first (a
    host's own cause leads them, see `verdict.pairing`), and not again under Reasons."""
    if verdict.classification != "invalid":
        return []
    return [r for r in verdict.reasons if r.startswith(INVALID_INPUT)]


def _base_on_head(verdict: Verdict) -> list[str]:
    """On a silencing verdict, the best evidence the gate has: the base's test, run on the
    head's code (strength.base_on_head), failed where the head's test passes."""
    if verdict.classification not in ("entropy_silenced", "masked_defect"):
        return []
    lines = []
    for finding in _counted(verdict):
        shown = remediation.shown_by_base(finding.message)
        if finding.kind == "test_changed_to_pass" and shown is not None:
            name = code(finding.test or finding.location())
            lines.append(f"- **{sentence(phrases.BASE_ON_HEAD)[:-1]}:** {name}: {code(shown)}")
    return lines


def _ran(verdict: Verdict) -> bool:
    """Whether any host reported: without one, the table's columns were not judged."""
    return not verdict.host_a == verdict.host_b == "missing"


def sentence(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:] + "."


def _counted(verdict: Verdict) -> list[Finding]:
    """The findings that count against the patch (`verdict.counted`'s rule)."""
    return [
        f
        for f in verdict.findings
        if f.level == "error" and (f.introduced or verdict.strict_baseline)
    ]


def _silencing(verdict: Verdict) -> str:
    """The table's silencing column (a changed gate configuration is a pin, not silencing)."""
    if [f for f in _counted(verdict) if f.kind != GATE_CONFIG]:
        return "present (strict baseline)" if verdict.strict_baseline else "introduced"
    errors = [f for f in verdict.findings if f.level == "error" and f.kind != GATE_CONFIG]
    return "pre-existing only" if errors else "none"


def _row(verdict: Verdict) -> list[str]:
    pins = "yes" if verdict.pins_intact else "**no**"
    if any(f.kind == GATE_CONFIG for f in _counted(verdict)):
        pins += " (gate configuration **changed**)"
    silencing = _silencing(verdict)
    host_a: str = verdict.host_a
    host_b: str = verdict.host_b
    if not _ran(verdict):  # nothing ran: only what rejects on its own is shown (a crash:
        host_a = host_b = NOT_RUN  # the pin check and the scan ran without the hosts)
        pins = NOT_RUN if pins == "yes" and verdict.crash is None else pins
        if verdict.crash is None and silencing in ("none", "pre-existing only"):
            silencing = NOT_RUN
    return [
        "| host A | host B | pins intact | silencing | classification |",
        "|---|---|---|---|---|",
        f"| {host_a} | {host_b} | {pins} | {silencing} | `{verdict.classification}` |",
    ]


def differs(test: TestResult) -> bool:
    return not test.host_a == test.host_b == "passed" and not (
        test.host_a == test.host_b == "skipped"
    )


def _tests(verdict: Verdict) -> list[str]:
    tests = verdict.tests
    shown = [t for t in tests if differs(t)]
    if not tests:
        return ["### Tests", "", "No test was reported."]
    if not shown:
        return []
    lines = [
        f"### Tests that differ or did not pass ({len(shown)} of {len(tests)})",
        "",
        "| test | host A | host B | note |",
        "|---|---|---|---|",
    ]
    lines.extend(_test_row(test) for test in shown[:MAX_TESTS_SHOWN])
    if len(shown) > MAX_TESTS_SHOWN:
        lines += ["", f"… and {len(shown) - MAX_TESTS_SHOWN} more (see the verdict JSON)."]
    lines.extend(_messages(shown[:MAX_TESTS_SHOWN]))
    if verdict.classification == "invalid":  # the cause leads; the table only follows from it
        summary = lines[0].removeprefix("### ")
        return ["<details>", f"<summary>{summary}</summary>", *lines[1:], "", "</details>"]
    return lines


def _test_row(test: TestResult) -> str:
    note = phrases.at_base_note(test)
    return f"| {text(test.id)} | {_outcome(test.host_a)} | {_outcome(test.host_b)} | {note} |"


def _outcome(outcome: str) -> str:
    return f"**{outcome}**" if outcome in FAILING or outcome == "missing" else outcome


def _messages(tests: list[TestResult]) -> list[str]:
    lines: list[str] = []
    for test in tests:
        for name, message in (("A", test.message_a), ("B", test.message_b)):
            if message and test.outcome("a" if name == "A" else "b") in FAILING:
                lines += ["", f"{text(test.id)} on host {name}:", "", *fenced(message)]
    return lines


def _replays(verdict: Verdict) -> list[str]:
    """One fenced block of commands, each replaying a failing test under its seed."""
    shown = [t for t in verdict.tests if differs(t)][:MAX_TESTS_SHOWN]
    commands: list[str] = []
    victims = {pair.victim for pair in verdict.order_dependence if pair.replay}
    for test in (t for t in shown if t.id not in victims):  # their pair's command follows
        for host, command in phrases.replays(test):
            commands += [f"# host {host}", command] if host else [command]
    for pair in verdict.order_dependence:
        commands += [f"# {phrases.order_pair(pair)}", pair.replay] if pair.replay else []
    if not commands:
        return []
    return ["### Replay", "", REPLAY_INTRO, "", *fenced("\n".join(commands), "sh", cut=False)]


def _pin_line(change: PinChange) -> str:
    effect = "rejects" if change.rejects else "allowed"
    return f"{code(f'{change.path}:{change.line}')} {text(change.message)} ({effect})"


def _pin_changes(verdict: Verdict) -> list[str]:
    if verdict.pin_diff:
        return _list("Pin changes", [_pin_line(c) for c in verdict.pin_diff], str)
    keys = [f"{kind}: {', '.join(k)}" for kind, k in verdict.pin_changes.items() if k]
    return _list("Pin changes", keys, text)


def _finding_line(finding: Finding, prefix: str = "") -> str:
    """One line: where, the kind, the message; the test named once (the message names it
    already, or it is added)."""
    where = code(finding.location())
    named = not finding.test or finding.test in finding.message
    test = "" if named else f" (test {code(finding.test or '')})"
    return f"{where} **{finding.kind}**{test}: {prefix}{prose(finding.message)}"


def _findings(verdict: Verdict) -> list[str]:
    return _list("Findings", [_finding_line(f) for f in _counted(verdict)], str)


MAX_STEPS = 10  # next steps spelled out; the rest are counted (the verdict JSON has them)


def _next_steps(verdict: Verdict) -> list[str]:
    """What to do, deciding first (verdict.remediation): each step, where, and what shows it."""
    steps = verdict.next_steps
    if not steps:
        return []
    lines = [f"### {sentence(phrases.WHAT_TO_DO)[:-1]}", ""]
    for number, step in enumerate(steps[:MAX_STEPS], 1):
        where = f" — {code(step.where)}" if step.where else ""
        lines += [
            f"{number}. **{prose(sentence(step.what))}**{where}\\",  # a hard line break
            f"   {prose(step.evidence)}",
        ]
    if len(steps) > MAX_STEPS:
        lines += ["", f"… and {len(steps) - MAX_STEPS} more (see the verdict JSON)."]
    return lines


def _warnings(verdict: Verdict) -> list[str]:
    """Findings the patch introduced that explain the verdict and never reject (live reads of
    an unpinned source); those that stood at the base are notices."""
    warned = [f for f in verdict.findings if f.level == "warning" and f.introduced]
    return _list("Warnings", [_finding_line(f) for f in warned], str)


def _notices(verdict: Verdict) -> list[str]:
    """Findings that stood at the base ref, live reads among them: one collapsed block (they
    count for nothing; under strict_baseline the errors count, and are findings)."""
    pre = [
        f
        for f in verdict.findings
        if not f.introduced and (f.level == "warning" or not verdict.strict_baseline)
    ]
    if not pre:
        return []
    return [
        "<details>",
        f"<summary>{phrases.notices(len(pre))}</summary>",
        "",
        *(f"- {_finding_line(f)}" for f in pre),
        "",
        "</details>",
    ]


def _strength(score: MutationScore | None) -> list[str]:
    """The mutation scores at the base and the head, and each mutant that changed sides."""
    if score is None:
        return []
    scores = phrases.strength(score.render(), text(score.mode), score.not_counted)
    weaker = phrases.weaker(len(score.weakened), code("weakened_property"))
    items = [weaker] if score.weakened else []
    items += [phrases.stronger(code(m.mutant), code(m.test)) for m in score.strengthened]
    lines = ["### Property strength", "", sentence(scores)]
    lines += ["", *(f"- {item}" for item in items)] if items else []
    if score.strengthened and not score.weakened:
        lines += ["", f"**{sentence(phrases.STRONGER_AT_HEAD)}**"]
    return lines


MAX_VARIATION_CELL = 300  # characters of host.json text in one cell of the variations table


def _variations(verdict: Verdict) -> list[str]:
    """Host B's variations: the one line, then every dimension in a collapsed table. The
    words come from host B's host.json (untrusted): escaped, each cell cut."""
    listed = verdict.host_b_variations
    if not listed:
        return []
    varied = [text(v.dimension) for v in listed if v.varied]
    held = [(text(v.dimension), text(phrases.cut_why(v.why_not))) for v in listed if not v.varied]
    rows = [
        f"| {text(v.dimension)} | {'yes' if v.varied else 'no'} | {_cell(v.how)} | "
        f"{_cell(v.why_not or '')} |"
        for v in listed
    ]
    return [
        "### Host B's variations",
        "",
        sentence(phrases.host_b_variations(varied, held)),
        "",
        "<details>",
        f"<summary>every dimension host B has ({len(listed)})</summary>",
        "",
        "| dimension | varied | how | why not |",
        "|---|---|---|---|",
        *rows,
        "",
        "</details>",
    ]


def _cell(value: str) -> str:
    cut = value if len(value) <= MAX_VARIATION_CELL else value[: MAX_VARIATION_CELL - 1] + "…"
    return text(cut)


def _digest(digest: str | None) -> list[str]:
    return [sentence(phrases.inputs_digest(code(digest)))] if digest else []


def _list(heading: str, items: list[str], render_item: Callable[[str], str]) -> list[str]:
    if not items:
        return []
    return [f"### {heading}", ""] + [f"- {render_item(item)}" for item in items]


def _errors(errors: list[str]) -> list[str]:
    if not errors:
        return []
    lines = ["### Host errors"]
    for error in errors:
        lines += ["", *fenced(error)]
    return lines


def truncate(markdown: str, limit: int, *, unit: str = "characters") -> str:
    """`markdown` within `limit` (characters, or UTF-8 bytes with unit="bytes"), cut at a line
    boundary, an open code fence closed, and a note saying so appended."""
    measure: Callable[[str], int] = (lambda s: len(s.encode("utf-8"))) if unit == "bytes" else len
    if measure(markdown) <= limit:
        return markdown
    note = "\n\n" + TRUNCATED_NOTE.format(limit=limit, unit=unit) + "\n"
    budget = limit - measure(note) - 8  # room for a closing fence
    lines, kept, size, fence = markdown.split("\n"), [], 0, ""
    for line in lines:
        if size + measure(line) + 1 > budget:
            kept.append(_prefix(line, budget - size - 1, measure))  # what fits of the last
            fence = track_fence(fence, kept[-1])
            break
        kept.append(line)
        size += measure(line) + 1
        fence = track_fence(fence, line)
    closing = [fence] if fence else []
    return "\n".join([*kept, *closing]) + note


def _prefix(line: str, budget: int, measure: Callable[[str], int]) -> str:
    """The longest prefix of `line` whose measure is within `budget` (binary search)."""
    low, high = 0, len(line)
    while low < high:
        middle = (low + high + 1) // 2
        if measure(line[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return line[:low]


def track_fence(open_fence: str, line: str) -> str:
    """The fence still open after `line` ("" when none)."""
    match = re.match(r"^(`{3,})", line)
    if not match:
        return open_fence
    if not open_fence:
        return match.group(1)
    closes = line.strip() == "`" * len(line.strip()) and len(line.strip()) >= len(open_fence)
    return "" if closes else open_fence
