"""The release workflow's own steps (.github/workflows/release.yml), as commands a test runs.

    python3 scripts/release.py check vX.Y.Z        the tag names this checkout's version
    python3 scripts/release.py notes vX.Y.Z        the CHANGELOG's section for it, on stdout
    python3 scripts/release.py major-tag vX.Y.Z    move vX to the release, if it is vX's newest

Standard library only (it runs on the runner's python3 before anything is installed). Every
refusal is one line on stderr and exit 1; a usage error exits 2.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAG = re.compile(r"v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
VERSION_LINE = re.compile(r'^__version__ = "([^"]+)"$', re.MULTILINE)
HEADING = re.compile(r"^## \[?(\d+\.\d+\.\d+)\]?(?:[\s(—-].*)?$")
Version = tuple[int, int, int]


class ReleaseError(Exception):
    """A release step that must not go on: its message is the one line the log shows."""


def parse_tag(tag: str) -> Version:
    found = TAG.fullmatch(tag)
    if found is None:
        raise ReleaseError(f"{tag!r} is not a release tag: vX.Y.Z (no pre-release suffix)")
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


def dotted(version: Version) -> str:
    return ".".join(str(part) for part in version)


def package_version(root: Path) -> str:
    text = (root / "entropy_action/__init__.py").read_text(encoding="utf-8")
    found = VERSION_LINE.search(text)
    if found is None:
        raise ReleaseError("entropy_action/__init__.py: no __version__ line")
    return found.group(1)


def changelog_section(text: str, version: str) -> str:
    """The body of the CHANGELOG's `## X.Y.Z ...` section (to the next `## `), trimmed."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if (m := HEADING.match(line)) and m[1] == version]
    if not starts:
        raise ReleaseError(
            f"CHANGELOG.md: no '## {version}' section (rename '## Unreleased' to "
            f"'## {version} — YYYY-MM-DD' in the release commit)"
        )
    body = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith("## "):
            break
        body.append(line)
    notes = "\n".join(body).strip()
    if not notes:
        raise ReleaseError(f"CHANGELOG.md: the '## {version}' section is empty")
    return notes + "\n"


def check(root: Path, tag: str) -> str:
    """Why the tag may be released: it is vX.Y.Z, the package says X.Y.Z, the CHANGELOG has
    the section, and the README pins X.Y.Z where the workflow lines name vX."""
    version = dotted(parse_tag(tag))
    declared = package_version(root)
    if declared != version:
        raise ReleaseError(
            f"{tag}: entropy_action/__init__.py says __version__ = {declared!r}; "
            "tag the commit that sets it"
        )
    notes = changelog_section((root / "CHANGELOG.md").read_text(encoding="utf-8"), version)
    readme = (root / "README.md").read_text(encoding="utf-8")
    if f"pip install entropy-gate=={version}" not in readme:
        raise ReleaseError(f"README.md: no 'pip install entropy-gate=={version}' line")
    return f"{tag}: version {version}, CHANGELOG section of {len(notes.splitlines())} line(s)"


def newest(tags: Sequence[str], major: int) -> Version | None:
    """The highest vMAJOR.Y.Z release among `tags` (other names are not releases)."""
    releases = [v for t in tags if TAG.fullmatch(t) and (v := parse_tag(t))[0] == major]
    return max(releases, default=None)


def remote_tags(remote: str, env: Mapping[str, str]) -> dict[str, str]:
    """Tag -> the commit it names on `remote` (an annotated tag peeled to its commit)."""
    tags: dict[str, str] = {}
    for line in git(["ls-remote", "--tags", remote], env).stdout.splitlines():
        sha, _, ref = line.partition("\t")
        name = ref.removeprefix("refs/tags/")
        if name.endswith("^{}"):
            tags[name[:-3]] = sha  # the peeled line follows the tag object's
        elif name != ref:
            tags.setdefault(name, sha)
    return tags


def move_major(tag: str, remote: str, env: Mapping[str, str]) -> str:
    """Point vX at the release's commit on `remote` when the release is vX's newest there;
    a fix release of an older line (v1.2.1 after v1.3.0) leaves vX where it is."""
    version = parse_tag(tag)
    major = f"v{version[0]}"
    known = remote_tags(remote, env)
    if tag not in known:
        raise ReleaseError(f"{tag}: not a tag on {remote}; push the release tag first")
    top = newest(list(known), version[0])
    if top != version:
        where = known.get(major, "(none)")
        return f"{major} stays at {where}: v{dotted(top or version)} is newer than {tag}"
    commit = known[tag]
    if known.get(major) == commit:
        return f"{major} already names {tag} ({commit})"
    git(["push", "--force", remote, f"{commit}:refs/tags/{major}"], env)
    return f"{major} -> {tag} ({commit})"


def push_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for git: with GH_TOKEN set, an Authorization header for github.com
    passed through GIT_CONFIG_* (never written to .git/config, never on a command line)."""
    env = dict(environ)
    token = env.pop("GH_TOKEN", "")
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
        env[f"GIT_CONFIG_KEY_{count}"] = "http.https://github.com/.extraheader"
        env[f"GIT_CONFIG_VALUE_{count}"] = f"AUTHORIZATION: basic {basic}"
        env["GIT_CONFIG_COUNT"] = str(count + 1)
    return env


def git(args: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["git", *args], capture_output=True, text=True, env=dict(env), check=False, timeout=300
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise ReleaseError(f"git {args[0]}: {last}")
    return proc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("check", "notes", "major-tag"))
    parser.add_argument("tag", help="the release tag, vX.Y.Z")
    parser.add_argument("--remote", default="origin", help="major-tag: where to move it")
    args = parser.parse_args(argv)
    try:
        if args.step == "check":
            print(check(ROOT, args.tag))
        elif args.step == "notes":
            version = dotted(parse_tag(args.tag))
            text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
            sys.stdout.write(changelog_section(text, version))
        else:
            print(move_major(args.tag, args.remote, push_env(os.environ)))
    except ReleaseError as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
