"""scan/workflows.py: which workflow files can change the gate's check, read as data."""

from __future__ import annotations

import pytest

from entropy_action.scan import workflows

CI = """\
name: CI
on:
  pull_request:
    branches: ["master"]
permissions:
  contents: read
jobs:
  tests:
    name: "Python ${{ matrix.python-version }} on ${{ matrix.platform }}"
    runs-on: ${{ matrix.platform }}
    strategy:
      matrix:
        platform: [ubuntu-latest]
        python-version: ["3.12", "3.13"]
    steps:
      - uses: actions/checkout@v6
      - run: python -m pytest
"""


UNREAD = "it cannot be read as a workflow (not YAML, not a mapping, a key twice)"
NAMES = "it names entropy-gate (a call of it, or a job posting a check of its name)"


def test_a_read_only_workflow_with_plain_or_matrix_job_names_cannot_change_the_check() -> None:
    assert workflows.reach(CI.encode()).why is None
    read_all = CI.replace("permissions:\n  contents: read\n", "permissions: read-all\n")
    assert workflows.reach(read_all.encode()).why is None
    own = CI.replace("permissions:\n  contents: read\n", "").replace(
        "    runs-on:", "    permissions: {contents: read}\n    runs-on:"
    )
    assert workflows.reach(own.encode()).why is None


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (
            lambda t: t.replace("permissions:\n  contents: read\n", ""),
            "its job 'tests' declares no `permissions:`, so its token has the repository's "
            "default, which may write check runs (declare `permissions: {contents: read}`)",
        ),
        (
            lambda t: t.replace("contents: read", "contents: read\n  checks: write"),
            "its job 'tests' may write checks (`checks: write`)",
        ),
        (
            lambda t: t.replace("  contents: read\n", "  statuses: write\n"),
            "its job 'tests' may write statuses (`statuses: write`)",
        ),
        (
            lambda t: t.replace("permissions:\n  contents: read\n", "permissions: write-all\n"),
            "its job 'tests' has `permissions: write-all`",
        ),
        (
            lambda t: t.replace("    runs-on:", "    permissions: write-all\n    runs-on:"),
            "its job 'tests' has `permissions: write-all`",
        ),
        (
            lambda t: t.replace(
                'name: "Python', 'name: "${{ github.head_ref }}-${{ matrix.platform }}" #'
            ),
            "its job 'tests' takes its name from an expression "
            "('${{ github.head_ref }}-${{ matrix.platform }}')",
        ),
        (
            lambda t: (
                t + "  entropy-gate:\n    runs-on: ubuntu-latest\n    steps: [{run: 'true'}]\n"
            ),
            "it names entropy-gate (a call of it, or a job posting a check of its name)",
        ),
        (
            lambda t: t.replace("name: CI", "name: CI  # Entropy-Gate"),
            "it names entropy-gate (a call of it, or a job posting a check of its name)",
        ),
        (lambda t: "{{{ not yaml", UNREAD),
        (lambda t: "- a list\n", UNREAD),
        (lambda t: t + "permissions: write-all\n", UNREAD),  # which one counts? neither
        (
            lambda t: t.replace(
                "    runs-on:", "    permissions: {}\n    permissions: write-all\n    runs-on:"
            ),
            "its job 'tests' cannot be read",
        ),
    ],
)
def test_what_lets_a_workflow_change_the_check(edit, why) -> None:
    assert workflows.reach(edit(CI).encode()).why == why


def test_unreadable_files_fail_closed() -> None:
    assert workflows.reach(b"\xff\xfe").why == "it is not UTF-8, so it was not read"
    big = b"#" * (workflows.MAX_BYTES + 1)
    assert (
        workflows.reach(big).why
        == f"it is larger than {workflows.MAX_BYTES} bytes, so it was not read"
    )
    levels = [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 12)]
    bomb = "l0: &l0 [lol]\n" + "\n".join(levels) + "\n" + CI
    assert workflows.reach(bomb.encode()).why is None  # aliases are references: nothing grows


def test_a_tab_after_a_key_is_read_as_github_reads_it() -> None:
    """PyYAML refuses `run:<TAB>...` (tzlocal's lint.yml); GitHub and libyaml take the tab as a
    space, so the workflow is judged by what it says, not called unreadable."""
    tabbed = CI.replace("- run: python -m pytest", "- run:\tpython -m pytest")
    assert "\t" in tabbed
    assert workflows.reach(tabbed.encode()).why is None
    writes = tabbed.replace("  contents: read\n", "  contents: read\n  checks:\twrite\n")
    why = "its job 'tests' may write checks (`checks: write`)"
    assert workflows.reach(writes.encode()).why == why
    indented = CI.replace("    steps:\n", "\tsteps:\n")  # a tab as indentation: no reader takes it
    assert workflows.reach(indented.encode()).why == UNREAD


def test_a_name_from_matrix_values_joined_by_or_is_the_files_own() -> None:
    """itsdangerous's tests.yaml: `name: ${{ matrix.name || matrix.python }}`."""
    joined = CI.replace(
        'name: "Python ${{ matrix.python-version }} on ${{ matrix.platform }}"',
        "name: ${{ matrix.name || matrix.python-version && 'py' || 'default' }}",
    )
    assert workflows.reach(joined.encode()).why is None
    for outside in ("matrix.name || github.head_ref", "format('{0}', matrix.name)"):
        named = CI.replace('"Python ${{ matrix.python-version }} on', f'"${{{{ {outside} }}}}" #')
        why = workflows.reach(named.encode()).why
        assert why is not None
        assert why.startswith("its job 'tests' takes its name from an expression")


def test_a_name_from_an_item_of_a_matrix_list_is_the_files_own() -> None:
    """python-recurring-ical-events' tests.yml: `name: ${{ matrix.config[1] }}`, each
    `config` a list of the Python version, the tox environment and a time zone. Its items
    are the matrix's scalars: a name spelled from them is read like any matrix value's."""
    matrix = (
        "      matrix:\n        config:\n"
        '        - ["3.12", "py312", "Europe/London"]\n'
        '        - ["3.13", "docs", "Europe/Berlin"]\n'
    )
    assert workflows.reach(_with(CI, '"${{ matrix.config[1] }}"', matrix).encode()).why is None
    entropy = matrix.replace('"docs"', '"entropy"')
    spelled = _with(CI, '"${{ matrix.config[ 1 ] }}-gate"', entropy)
    assert workflows.reach(spelled.encode()).why == (
        "its job 'tests' can be named after the check ('${{ matrix.config[ 1 ] }}-gate')"
    )
    outside = _with(CI, '"${{ matrix.config[github.run_number] }}"', matrix)
    why = workflows.reach(outside.encode()).why
    assert why is not None
    assert why.startswith("its job 'tests' takes its name from an expression")


@pytest.mark.parametrize(
    "matrix",
    [
        "      matrix: ${{ fromJSON(github.event.pull_request.title) }}\n",
        "      matrix:\n        platform: ['${{ github.head_ref }}']\n",
        "      matrix:\n        include: [{platform: '${{ github.head_ref }}'}]\n",
    ],
)
def test_a_name_from_a_matrix_built_from_an_expression_can_change_the_check(matrix) -> None:
    """The name holds only matrix values, but the matrix holds values the file does not: a PR
    title of the check's name names the job after it."""
    edited = _with(CI, '"${{ matrix.platform }}"', matrix)
    why = "its job 'tests' takes its name from a matrix built from an expression"
    assert workflows.reach(edited.encode()).why == why
    quiet = edited.replace("${{ github.head_ref }}", "ubuntu-latest")
    if "fromJSON" not in quiet:
        assert workflows.reach(quiet.encode()).why is None


@pytest.mark.parametrize(
    "title",
    [
        '"Python ${{ matrix.python-version }} on ${{ matrix.platform }}"',
        "Tests on ${{ matrix.python-version }}",  # stamina's ci.yml, its matrix from a job's output
        '"${{ github.head_ref }} Python ${{ matrix.python-version }}"',
    ],
)
def test_a_name_whose_own_text_rules_the_check_out_cannot_change_it(title) -> None:
    """A required status check matches a name whole: whatever the expressions give, `Tests on
    …` is not `entropy-gate` (hynek's projects take the matrix from the package's
    classifiers, an earlier job's output)."""
    matrix = "      matrix:\n        python-version: ${{ fromJson(needs.build.outputs.pythons) }}\n"
    assert workflows.reach(_with(CI, title, matrix).encode()).why is None
    why = "its job 'tests' takes its name from a matrix built from an expression"
    for could in ("${{ matrix.python-version }}", "entropy-${{ matrix.python-version }}"):
        assert workflows.reach(_with(CI, f'"{could}"', matrix).encode()).why == why, could
    spaced = _with(CI, '"  ${{ matrix.python-version }}-GATE "', matrix)
    assert workflows.reach(spaced.encode()).why == why


def _with(text: str, title: str, matrix: str) -> str:
    """`text` with its job's name and matrix replaced."""
    named = text.replace('"Python ${{ matrix.python-version }} on ${{ matrix.platform }}"', title)
    start = named.index("      matrix:\n")
    return named[:start] + matrix + named[named.index("    steps:") :]


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (  # YAML's escapes: no line of the file spells the name
            lambda t: t.replace("  tests:\n    name:", '  "entropy\\x2Dgate":\n    name:'),
            NAMES,
        ),
        (
            lambda t: t.replace('name: "Python', 'name: "\\u0065ntropy-Gate Python'),
            NAMES,
        ),
        (  # a matrix value and the name's own text
            lambda t: t.replace("[ubuntu-latest]", "[ubuntu-latest, entropy]").replace(
                '"Python ${{ matrix.python-version }} on ${{ matrix.platform }}"',
                '"${{ matrix.platform }}-gate"',
            ),
            "its job 'tests' can be named after the check ('${{ matrix.platform }}-gate')",
        ),
        (  # the file's strings in an expression, then text
            lambda t: t.replace('name: "Python', "name: \"${{ 'entropy' }}-gate Python"),
            "its job 'tests' can be named after the check "
            "(\"${{ 'entropy' }}-gate Python ${{ matrix.python-version }} on "
            '${{ matrix.platform }}")',
        ),
        (
            lambda t: t.replace(
                '"Python ${{ matrix.python-version }} on ${{ matrix.platform }}"',
                '"${{ matrix.platform }}${{ matrix.platform }}${{ matrix.platform }}'
                '${{ matrix.platform }}${{ matrix.platform }}"',
            ).replace("[ubuntu-latest]", "[" + ", ".join(f"os{i}" for i in range(9)) + "]"),
            "its job 'tests' takes more than 4096 names from its matrix",
        ),
    ],
)
def test_a_name_the_file_spells_only_once_read_can_change_the_check(edit, why) -> None:
    """The text search for entropy-gate reads the file's bytes; a job's name is what GitHub
    reads, escapes resolved and matrix values put in."""
    edited = edit(CI)
    assert "entropy-gate" not in edited.lower()
    assert workflows.reach(edited.encode()).why == why
