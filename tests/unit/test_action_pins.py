"""One SHA per action: every `uses:` of a third-party action, in every workflow, template,
`action.yml` and the YAML the docs show, pins the same full commit with the same `# vX.Y.Z`
comment (the form Dependabot updates, one pull request moving every pin of an action), and
the actions the act runs map (tests/support/e2e_kit.py) are exactly those commits. The
gate's own action and reusable workflows are called at the README's major tag (`@v1`)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from entropy_action import __version__
from tests.support.e2e_kit import PINNED

ROOT = Path(__file__).resolve().parents[2]
OWN = "entropy-gate/entropy-gate"
USES = re.compile(
    r"""^[\s-]*uses:\s*["']?(?P<action>[\w.-]+/[\w.-]+)(?P<sub>/[^@\s"']*)?@(?P<ref>[^\s"'#]+)["']?
        [ \t]*(?:\#[ \t]*(?P<comment>\S+))?""",
    re.MULTILINE | re.VERBOSE,
)
SHA = re.compile(r"[0-9a-f]{40}")
SEMVER = re.compile(r"v\d+\.\d+\.\d+")
YAML_BLOCK = re.compile(r"^```ya?ml\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def sources() -> dict[str, str]:
    """Every text that holds `uses:` lines, by name: the workflows, the templates, the
    composite action, and the YAML blocks of README.md and docs/*.md."""
    files = [
        *sorted((ROOT / ".github/workflows").glob("*.yml")),
        *sorted((ROOT / "workflow-templates").glob("*.yml")),
        ROOT / "action.yml",
    ]
    found = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = YAML_BLOCK.findall(page.read_text(encoding="utf-8"))
        found.update(
            {f"{page.relative_to(ROOT)} (yaml block {i + 1})": b for i, b in enumerate(blocks)}
        )
    return found


def pins(texts: dict[str, str]) -> dict[str, dict[tuple[str, str | None], list[str]]]:
    """action (owner/repo, a sub-path folded in) -> (ref, comment) -> where it is written."""
    found: dict[str, dict[tuple[str, str | None], list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for name, text in texts.items():
        for use in USES.finditer(text):
            line = text.count("\n", 0, use.start()) + 1
            found[use["action"]][(use["ref"], use["comment"])].append(f"{name}:{line}")
    return found


def problems(texts: dict[str, str], major: str) -> list[str]:
    """Every pin that breaks the rule, one line each."""
    out = []
    for action, refs in sorted(pins(texts).items()):
        if action == OWN:  # the major tag; docs/ci.md shows the SHA form as `@<sha>`
            wrong = [(ref, w[0]) for (ref, _), w in refs.items() if ref not in (major, "<sha>")]
            out += [f"{OWN}@{ref}: {where}: call the gate at {major}" for ref, where in wrong]
            continue
        if len(refs) > 1:
            listed = "; ".join(
                f"@{ref} # {c} ({len(w)}x, first {w[0]})" for (ref, c), w in refs.items()
            )
            out.append(f"{action}: {len(refs)} pins: {listed}")
        for (ref, comment), where in refs.items():
            if not SHA.fullmatch(ref):
                out.append(f"{action}@{ref}: {where[0]}: pin a full commit SHA")
            if comment is None or not SEMVER.fullmatch(comment):
                out.append(f"{action}@{ref[:12]}: {where[0]}: add the release as '# vX.Y.Z'")
    return out


def test_every_action_is_pinned_once_by_sha_with_its_release() -> None:
    assert problems(sources(), f"v{__version__.split('.')[0]}") == []


RELEASE_ONLY = ".github/workflows/release.yml"  # GitHub's OIDC, PyPI: never run under act


def test_the_pins_are_the_commits_the_act_runs_map() -> None:
    """Every third-party action outside the release workflow is one the offline kit holds,
    at the commit the act runs map it to (tests/support/e2e_kit.py)."""
    texts = sources()
    found = pins(texts)
    for action, sha in PINNED.items():
        assert [ref for ref, _ in found[action]] == [sha], action
    elsewhere = pins({name: text for name, text in texts.items() if name != RELEASE_ONLY})
    assert set(elsewhere) - {OWN} == set(PINNED)


def test_a_second_sha_a_tag_pin_and_a_missing_comment_are_each_named() -> None:
    new, old = (
        "11d5960a326750d5838078e36cf38b85af677262",
        "11bd71901bbe5b1630ceea73d27597364c9af683",
    )
    texts = {
        "a.yml": f"steps:\n  - uses: actions/checkout@{new} # v4.4.0\n",
        "b.yml": (
            "steps:\n"
            f"  - uses: actions/checkout@{old} # v4.2.2\n"
            "  - uses: actions/setup-python@v5\n"
            "  - uses: actions/cache/restore@0057852bfaa89a56745cba8c7296529d2fc39830\n"
            "  - uses: entropy-gate/entropy-gate@main\n"
        ),
    }
    assert problems(texts, "v1") == [
        "actions/cache@0057852bfaa8: b.yml:4: add the release as '# vX.Y.Z'",
        f"actions/checkout: 2 pins: @{new} # v4.4.0 (1x, first a.yml:2); "
        f"@{old} # v4.2.2 (1x, first b.yml:2)",
        "actions/setup-python@v5: b.yml:3: pin a full commit SHA",
        "actions/setup-python@v5: b.yml:3: add the release as '# vX.Y.Z'",
        "entropy-gate/entropy-gate@main: b.yml:5: call the gate at v1",
    ]


def test_the_reader_sees_every_step_yaml_sees() -> None:
    """The regex finds each `uses:` a YAML parser finds in the workflows (none hides behind
    quoting or flow style)."""
    for path in sorted((ROOT / ".github/workflows").glob("*.yml")):
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        parsed = [
            s.get("uses")
            for job in loaded["jobs"].values()
            for s in ([job] if "uses" in job else job.get("steps", []))
        ]
        expected = sorted(u for u in parsed if u and not u.startswith("./"))
        text = path.read_text(encoding="utf-8")
        got = sorted(f"{m['action']}{m['sub'] or ''}@{m['ref']}" for m in USES.finditer(text))
        assert got == expected, path.name


@pytest.mark.parametrize(
    "text", ['- uses: "actions/checkout@abc" # v1.0.0', "- uses: actions/checkout@abc"]
)
def test_quoted_and_bare_pins_are_read_alike(text: str) -> None:
    ((_, refs),) = pins({"x.yml": text}).items()
    assert [ref for ref, _ in refs] == ["abc"]


def test_dependabot_updates_the_actions_and_the_python_dependencies() -> None:
    config = yaml.safe_load((ROOT / ".github/dependabot.yml").read_text(encoding="utf-8"))
    updates = {u["package-ecosystem"]: u for u in config["updates"]}
    assert set(updates) == {"github-actions", "pip"}
    assert updates["github-actions"]["directory"] == "/"  # .github/workflows/ and action.yml
    assert updates["pip"]["directories"] == ["/", "/requirements"]
    assert all(u["cooldown"]["default-days"] >= 7 for u in updates.values())
