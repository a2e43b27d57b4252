"""The README's "Adopt it in your repository", run as written on a scratch library.

The steps are read from the README's code blocks, in order, so this test breaks when the
README changes them: each `sh` block runs verbatim under bash in a real git repository of a
small library (real git, real subprocesses: `entropy-gate init`, the review, the commit, the
docs-only patch, `entropy-gate gate`), and the `yaml` block is written to the path the README
names for it. One step is substituted: the first block installs the CLI from PyPI, pinned to
this checkout's version (`pip install entropy-gate==X.Y.Z`, the release the workflow's `@vX`
names; the git form of the same tag is the fallback the README gives), which needs the
published release; this checkout's installed entropy-gate (the interpreter running these
tests, its `bin/` first on PATH) stands in for it. That environment lives outside the scratch
repository, as a project's venv would. (tests/integration/test_release.py installs the pinned
form from a local index.)
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from entropy_action import __version__
from tests.conftest import FULL_PYTHON  # the test venv (its bin/ has the console script)

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SECTION = "## Adopt it in your repository"
MAJOR = f"v{__version__.split('.')[0]}"
INSTALL = f"python -m pip install entropy-gate=={__version__}"
FALLBACK = f"python -m pip install 'entropy-gate @ git+https://github.com/entropy-gate/entropy-gate@{MAJOR}'"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)

LIBRARY = {
    "pyproject.toml": """\
[project]
name = "slugs"
version = "1.0"

[tool.pytest.ini_options]
pythonpath = ["."]
""",
    "slugs/__init__.py": '''\
"""Slugs for titles: plain, unique (a random suffix) and dated."""

import random
import string
from datetime import date


def slugify(title: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in title.lower()).split()
    return "-".join(words)


def unique(title: str) -> str:
    suffix = "".join(random.choice(string.ascii_lowercase) for _ in range(4))
    return f"{slugify(title)}-{suffix}"


def dated(title: str) -> str:
    return f"{date.today():%Y%m%d}-{slugify(title)}"
''',
    "tests/test_x.py": """\
import re

from slugs import dated, slugify, unique


def test_slugify_is_idempotent():
    for title in ["Hello, World!", "  spaces  ", "Unicode text 42"]:
        assert slugify(slugify(title)) == slugify(title)


def test_unique_keeps_the_slug():
    assert re.fullmatch(r"hello-world-[a-z]{4}", unique("Hello, World!"))


def test_dated_slugs_start_with_a_date():
    assert re.fullmatch(r"\\d{8}-release-notes", dated("Release notes"))
""",
    "README.md": "# slugs\n\nSlugs for titles.\n",
}


@dataclass(frozen=True)
class Step:
    lang: str
    text: str
    path: str | None  # where a yaml block goes: the file the README names before it


def adoption_steps(readme: str) -> list[Step]:
    """The code blocks of the README's adoption section, in order."""
    start = readme.index(SECTION)
    end = readme.find("\n## ", start + len(SECTION))
    section = readme[start : end if end != -1 else len(readme)]
    steps, last = [], 0
    for found in BLOCK.finditer(section):
        path = None
        if found.group(1) == "yaml":
            named = re.findall(r"lines in `([^`]+)`", section[last : found.start()])
            assert named, "the README's yaml block does not say which file it goes in"
            path = named[-1]
        steps.append(Step(found.group(1), found.group(2), path))
        last = found.end()
    return steps


def scratch_env(tmp_path: Path) -> dict[str, str]:
    """The environment a user's shell would have: this checkout's gate first on PATH."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "ENTROPY_", "COV_", "GIT_", "VIRTUAL_ENV"))
    }
    env["PATH"] = f"{Path(FULL_PYTHON).parent}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # the base evidence cache: fresh
    env["HOME"] = str(tmp_path / "home")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    for role in ("AUTHOR", "COMMITTER"):  # who the user is: set once, as a user's git would be
        env[f"GIT_{role}_NAME"] = "A. User"
        env[f"GIT_{role}_EMAIL"] = "user@example.invalid"
    return env


def sh(script: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def library(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A small library's repository: committed, clean, the gate not adopted yet."""
    (tmp_path / "home").mkdir()
    env = scratch_env(tmp_path)
    repo = tmp_path / "slugs"
    for name, text in LIBRARY.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    for command in ("git init -q -b main", "git add -A", "git commit -q -m 'slugs 1.0'"):
        assert sh(command, repo, env).returncode == 0
    return repo, env


def test_the_readme_names_every_adoption_step() -> None:
    steps = adoption_steps(README.read_text(encoding="utf-8"))
    assert [s.lang for s in steps] == ["sh", "sh", "sh", "yaml", "sh", "sh"]
    assert steps[0].text == f"{INSTALL}\n", "the install step changed: update INSTALL here"
    assert steps[3].path == ".github/workflows/entropy-gate.yml"
    assert f"@{MAJOR}\n" in steps[3].text  # the workflow of the release the pin installs
    assert "entropy-gate init --module tests/test_x.py" in steps[1].text
    assert "entropy-gate gate" in steps[-1].text


def test_the_install_pins_the_release_the_workflow_calls_with_the_git_form_as_fallback() -> None:
    readme = README.read_text(encoding="utf-8")
    section = readme[readme.index(SECTION) : readme.index("\n## ", readme.index(SECTION) + 1)]
    prose = BLOCK.sub("", section)
    assert f"`{FALLBACK}`" in " ".join(prose.split())  # inline, as prose: not a step to run
    assert prose.index("PyPI") < prose.index("git+https")  # PyPI first, the tag as the fallback
    pinned = re.findall(r"pip install entropy-gate==(\S+)", readme)
    assert pinned == [__version__]
    majors = set(re.findall(r"entropy-gate/entropy-gate/\.github/workflows/[\w.-]+@(v\d+)", readme))
    assert majors == {MAJOR}


def test_a_section_without_the_workflow_file_is_refused() -> None:
    readme = f"{SECTION}\n\nSome lines:\n\n```yaml\non: pull_request\n```\n\n## Next\n"
    with pytest.raises(AssertionError, match="which file"):
        adoption_steps(readme)


def test_the_adoption_steps_as_written_give_a_merge_candidate_on_a_docs_patch(
    library: tuple[Path, dict[str, str]],
) -> None:
    repo, env = library
    readme = README.read_text(encoding="utf-8")
    install, init, review, workflow, commit, docs_patch = adoption_steps(readme)
    assert install.text == f"{INSTALL}\n"  # substituted: this checkout's gate is on PATH
    gate = Path(FULL_PYTHON).parent / "entropy-gate"
    assert gate.exists(), f"{gate}: this checkout's entropy-gate is not installed"

    drafted = sh(init.text, repo, env)
    assert drafted.returncode == 0, drafted.stdout + drafted.stderr
    source = LIBRARY["slugs/__init__.py"].splitlines()
    choice = next(i for i, s in enumerate(source, 1) if "random.choice(" in s)
    today = next(i for i, s in enumerate(source, 1) if "date.today()" in s)
    assert drafted.stdout.splitlines()[1:] == [
        "wrote entropy.yaml: 3 pin(s) (clock_unix, tz, rng_seed)",
        "seams to fix:",
        f"  slugs/__init__.py:{choice}: reads `random.choice()`",
        f"  slugs/__init__.py:{today}: reads `date.today()`",
    ]

    reviewed = sh(review.text, repo, env)
    manifest = (repo / "entropy.yaml").read_text(encoding="utf-8")
    assert (reviewed.returncode, reviewed.stdout) == (0, manifest)
    assert "module: tests/test_x.py" in manifest
    assert f"# slugs/__init__.py:{today} reads `date.today()`: the clock; take a Clock" in manifest

    assert workflow.path is not None
    (repo / workflow.path).parent.mkdir(parents=True)
    (repo / workflow.path).write_text(workflow.text, encoding="utf-8")

    committed = sh(commit.text, repo, env)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    shown = sh("git show --name-only --format=%s HEAD && git status --porcelain", repo, env)
    assert shown.stdout.splitlines() == [
        "entropy-gate: pin the property module's entropy",
        "",
        ".github/workflows/entropy-gate.yml",
        "entropy.yaml",
    ]

    judged = sh(docs_patch.text, repo, env)
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "entropy-gate verdict: merge_candidate" in judged.stdout
    assert "tests: 3; 3 passed on both hosts" in judged.stdout
    changed = sh("git status --porcelain", repo, env).stdout
    assert changed == " M README.md\n"

    # The README says how to undo the docs change; a silencing patch is then rejected by the
    # same command: the adopted gate bites.
    undo = re.search(r"\(`(git restore [^`]+)` undoes the change\)", readme)
    assert undo, "the README no longer says how to undo the docs change"
    assert sh(undo.group(1), repo, env).returncode == 0
    assert sh("git status --porcelain", repo, env).stdout == ""
    test = repo / "tests/test_x.py"
    test.write_text(
        "import pytest\n\n"
        + LIBRARY["tests/test_x.py"].replace(
            "def test_dated_slugs", '@pytest.mark.skip(reason="flaky")\ndef test_dated_slugs'
        ),
        encoding="utf-8",
    )
    (gate_command,) = [c for c in docs_patch.text.splitlines() if c.startswith("entropy-gate gate")]
    rejected = sh(gate_command, repo, env)
    assert rejected.returncode == 1, rejected.stdout + rejected.stderr
    assert "entropy-gate verdict: entropy_silenced" in rejected.stdout

    # Dropping a pin the reviewed draft committed is a pin mutation, whatever the hosts say.
    assert sh("git checkout -- tests/test_x.py", repo, env).returncode == 0
    pinned = (repo / "entropy.yaml").read_text(encoding="utf-8")
    dropped = re.sub(r"(?m)^  rng_seed: .*\n", "", pinned)
    assert dropped != pinned
    (repo / "entropy.yaml").write_text(dropped, encoding="utf-8")
    mutated = sh(gate_command, repo, env)
    assert mutated.returncode == 1, mutated.stdout + mutated.stderr
    assert "entropy-gate verdict: pin_mutation" in mutated.stdout
