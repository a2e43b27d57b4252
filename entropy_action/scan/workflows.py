"""What a GitHub Actions workflow file can do to the gate's check, read from its text as data.

A pull request's edit of a workflow can change the check it is judged by only if the
workflow (as the patch leaves it) calls entropy-gate, or can post a check run or a commit
status — a required status check is satisfied by any check of its name:

- it calls entropy-gate: a `uses:` naming it (the caller: its inputs, its events), or names
  it at all ("entropy-gate" anywhere in the file, or in any key or value once YAML's escapes
  are read, or in a job name its matrix values and strings can spell: a job of that name
  posts a check run of that name, whatever its permissions);
- a job's name is built from an expression whose value the file does not hold (anything but
  `matrix.*` and the file's strings joined by `||` or `&&`: `${{ github.head_ref }}` is the
  branch's name, which the author picks), or from a matrix whose values come from one
  (`matrix: ${{ fromJSON(...) }}`), and its text around the expressions lets it be the
  check's name (`${{ matrix.os }}` can; `Tests on ${{ matrix.python-version }}` cannot: a
  required status check matches a name whole);
- a job's token may write checks or statuses: `checks: write`, `statuses: write` or
  `write-all` for the workflow or the job, or no `permissions:` at either level — the
  token then has the repository's default, which is read-write on older repositories.

A workflow that does none of this (`permissions: contents: read`, jobs named in plain words
or after matrix values) cannot: its edit is a note. A file that cannot be read (not UTF-8,
not YAML, past the size cap) is taken to be able to (fail closed). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import yaml

MAX_BYTES = 1024 * 1024
NAME = "entropy-gate"
NAMES_IT = "it names entropy-gate (a call of it, or a job posting a check of its name)"
MAX_NAMES = 4096  # a job's names spelled out from its matrix, past which it is not read
WRITERS = frozenset({"checks", "statuses"})
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_OPERAND = r"(?:matrix(?:\.[A-Za-z0-9_-]+|\[\s*'[^']*'\s*\]|\[\s*\d+\s*\])+|'[^']*')"
# Matrix values and the file's own strings, joined by || or && (`matrix.name || matrix.python`);
# a value may be indexed (`matrix.config[1]`: an item of a list the matrix holds, still one of
# its scalars, which is what a name is spelled from).
_MATRIX_ONLY = re.compile(rf"^\s*{_OPERAND}(?:\s*(?:\|\||&&)\s*{_OPERAND})*\s*$")


@dataclass(frozen=True)
class Reach:
    """Why the workflow can change the check (None: it cannot)."""

    why: str | None


def reach(text: bytes) -> Reach:
    """Whether a workflow file as `text` can change the gate's check, and why."""
    if len(text) > MAX_BYTES:
        return Reach(f"it is larger than {MAX_BYTES} bytes, so it was not read")
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        return Reach("it is not UTF-8, so it was not read")
    if NAME in decoded.lower():
        return Reach(NAMES_IT)
    root = _compose(decoded)
    if not isinstance(root, yaml.MappingNode) or _repeats(root):
        return Reach("it cannot be read as a workflow (not YAML, not a mapping, a key twice)")
    if any(NAME in value.lower() for value in _scalars(root)):  # spelled with YAML's escapes
        return Reach(NAMES_IT)
    return Reach(_jobs_reach(root))


def _compose(text: str) -> yaml.Node | None:
    """The node graph: aliases stay references to one node (nothing is expanded), and only
    the top level and each job's own keys are read, so an alias bomb costs nothing."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        if not _tab_refused(exc):
            return None
    # PyYAML refuses a tab after `key:` (`run:<TAB>pyroma -d .`, tzlocal's lint.yml) that
    # GitHub and libyaml take as the space it is; only that refusal is read again, and only
    # where PyYAML was built with libyaml (else the file stays unread: fail closed).
    loader = getattr(yaml, "CSafeLoader", None)
    try:
        return None if loader is None else yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return None


def _tab_refused(exc: yaml.YAMLError) -> bool:
    return "found character '\\t' that cannot start any token" in str(exc)


def _jobs_reach(root: yaml.MappingNode) -> str | None:
    top = _get(root, "permissions")
    jobs = _get(root, "jobs")
    if not isinstance(jobs, yaml.MappingNode):
        return _writes(top, "the workflow")
    if _repeats(jobs):
        return "a job is defined twice"
    for key, job in jobs.value:
        name = str(key.value)
        if not isinstance(job, yaml.MappingNode) or _repeats(job):
            return f"its job {name!r} cannot be read"
        titled = _get(job, "name")
        title = str(titled.value) if isinstance(titled, yaml.ScalarNode) else ""
        matrix = _matrix(job)
        unknown = _unknown_name(title) or ("${{" in title and _holds_expression(matrix))
        if unknown and _can_be(title, NAME):
            if _unknown_name(title):
                return f"its job {name!r} takes its name from an expression ({title!r})"
            return f"its job {name!r} takes its name from a matrix built from an expression"
        if "${{" in title and not unknown:
            names = _spelled(title, sorted(set(_scalars(matrix))))
            if names is None:
                return f"its job {name!r} takes more than {MAX_NAMES} names from its matrix"
            if any(NAME in each.lower() for each in names):
                return f"its job {name!r} can be named after the check ({title!r})"
        own = _get(job, "permissions")
        why = _writes(own if own is not None else top, f"its job {name!r}")
        if why is not None:
            return why
    return None


def _writes(permissions: yaml.Node | None, who: str) -> str | None:
    """Why a token with these `permissions` may post a check run or a status (None: not)."""
    if permissions is None:
        return (
            f"{who} declares no `permissions:`, so its token has the repository's default, "
            "which may write check runs (declare `permissions: {contents: read}`)"
        )
    if isinstance(permissions, yaml.ScalarNode):
        value = str(permissions.value).strip()
        return f"{who} has `permissions: {value}`" if value == "write-all" else None
    if not isinstance(permissions, yaml.MappingNode):
        return f"{who}'s `permissions:` cannot be read"
    for key, value in permissions.value:
        if str(key.value) in WRITERS and str(getattr(value, "value", "")).strip() == "write":
            return f"{who} may write {key.value} (`{key.value}: write`)"
    return None


def _unknown_name(name: str) -> bool:
    """A name with an expression whose value is not the file's own (matrix values are)."""
    return any(not _MATRIX_ONLY.match(inner) for inner in _EXPRESSION.findall(name))


def _can_be(title: str, check: str) -> bool:
    """Whether `title`, each expression in it read as any text at all, can be `check` (a job's
    check run carries its name, and a required status check matches a name whole): `Tests on
    ${{ matrix.python-version }}` cannot be `entropy-gate` whatever its matrix holds."""
    parts = _EXPRESSION.split(title.strip())
    pattern = ".*".join(re.escape(part) for part in parts[::2])
    return re.fullmatch(rf"\s*{pattern}\s*", check, re.IGNORECASE | re.DOTALL) is not None


def _matrix(job: yaml.MappingNode) -> yaml.Node | None:
    strategy = _get(job, "strategy")
    return _get(strategy, "matrix") if isinstance(strategy, yaml.MappingNode) else strategy


def _holds_expression(node: yaml.Node | None) -> bool:
    return any("${{" in value for value in _scalars(node))


def _spelled(title: str, values: list[str]) -> list[str] | None:
    """Every name `title` can take, each expression (matrix values and the file's strings,
    joined by || or &&: its value is one of theirs) read as any value the matrix holds or any
    string it spells; None past MAX_NAMES. `${{ matrix.a }}-gate` with `a: [entropy]` is the
    check's name though no line of the file spells it."""
    names = [""]
    for index, part in enumerate(_EXPRESSION.split(title)):
        if index % 2 == 0:
            names = [name + part for name in names]
            continue
        strings = re.findall(r"'([^']*)'", part)
        choices = set(strings) | ({"", *values} if "matrix" in part else set())
        names = [name + choice for name in names for choice in sorted(choices)]
        if len(names) > MAX_NAMES:
            return None
    return names


def _scalars(node: yaml.Node | None) -> Iterator[str]:
    """The values of the scalars under `node`, keys included: each node is visited once, so an
    alias bomb costs what its text does."""
    seen: set[int] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.ScalarNode):
            yield str(current.value)
        elif isinstance(current, yaml.MappingNode):
            stack += [part for pair in current.value for part in pair]
        elif isinstance(current, yaml.SequenceNode):
            stack += current.value


def _repeats(node: yaml.MappingNode) -> bool:
    """A key given twice: which one a reader takes differs, so the file is not read."""
    keys = [str(getattr(name, "value", "")) for name, _ in node.value]
    return len(keys) != len(set(keys))


def _get(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for name, value in node.value:
        if isinstance(name, yaml.ScalarNode) and name.value == key:
            return value  # type: ignore[no-any-return]
    return None
