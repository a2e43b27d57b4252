"""The README is a front page and docs/ holds the reference: every link between them resolves.

The README stays short (at most 220 lines); every relative link in README.md and docs/*.md
points at a file of this repository and, with a `#fragment`, at a heading of that file under
GitHub's anchor rules; and every docs/*.md page is linked from the README's index.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 220
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link text kept, formatting and punctuation dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # [text](url) -> text
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor GitHub gives the headings of `path` (repeats get -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose(path.read_text(encoding="utf-8")):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        base = slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    targets = []
    for line in prose(path.read_text(encoding="utf-8")):
        targets += LINK.findall(CODE_SPAN.sub("", line))
    return targets


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)  # http:, https:, mailto:


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def test_the_slug_rules() -> None:
    assert slug("Seams for your code: the `entropy_gate` pytest plugin") == (
        "seams-for-your-code-the-entropy_gate-pytest-plugin"
    )
    assert slug("The composite action (custom matrices)") == "the-composite-action-custom-matrices"
    assert slug("entropy.yaml") == "entropyyaml"
    assert slug("Host A and host B") == "host-a-and-host-b"


def test_headings_in_code_blocks_are_not_anchors_and_repeats_are_numbered(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A\n\n```sh\n# not a heading\n```\n\n## A\n\n## B `c`\n", encoding="utf-8")
    assert anchors(page) == {"a", "a-1", "b-c"}


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    broken = []
    for target in filter(relative, links(path)):
        file_part, _, fragment = target.partition("#")
        where = (path.parent / file_part).resolve() if file_part else path
        if not where.exists() or not where.is_relative_to(ROOT):
            broken.append(f"{target}: no such file")
        elif fragment and (where.suffix != ".md" or fragment not in anchors(where)):
            broken.append(f"{target}: no heading #{fragment} in {where.relative_to(ROOT)}")
    assert broken == []


def test_a_broken_link_and_a_missing_anchor_are_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Known\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#known) [gone](nope.md) [anchor](other.md#unknown) `[code](x.md)`\n"
        "```\n[fenced](y.md)\n```\n[web](https://example.com/x.md)\n",
        encoding="utf-8",
    )
    assert links(page) == [
        "other.md#known",
        "nope.md",
        "other.md#unknown",
        "https://example.com/x.md",
    ]
    assert "known" in anchors(tmp_path / "other.md")
    assert "unknown" not in anchors(tmp_path / "other.md")


def test_every_docs_page_is_in_the_readme_index() -> None:
    linked = {
        (README.parent / target.partition("#")[0]).resolve()
        for target in filter(relative, links(README))
    }
    missing = [page.name for page in PAGES if page.resolve() not in linked]
    assert missing == [], f"docs pages the README does not link: {missing}"


def test_the_readmes_many_properties_manifest_validates() -> None:
    from entropy_action.manifest import groups, pinfile  # noqa: PLC0415 (only this test)

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Many properties, one status") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    loaded = pinfile.parse_file(block.group(1).encode(), "README.md")
    assert loaded.ids == ("invoices", "calendar")
    assert loaded.views[1].manifest.pins.tz == "Europe/Paris"
    assert len(groups.groups(loaded.views)) == 2
