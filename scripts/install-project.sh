#!/usr/bin/env bash
# install-project.sh: the project under test on this host, when the workflow's `install` input
# is empty (the default). Inputs come from the environment only: PYTHON (the interpreter the
# properties run with; default python on PATH). Runs in the checkout (the PR's tree).
# What it does, in order, and says so in one line each:
#   1. a pyproject.toml (or setup.py/setup.cfg) at the root: `pip install -e .[EXTRA]`, EXTRA
#      the first of test, tests, testing the project declares: in pyproject.toml's
#      [project.optional-dependencies], else setup.cfg's [options.extras_require], else the
#      extras_require of setup.py's setup() call (read, never run); the line names the extra
#      and the file (none declared: `pip install -e .`);
#   2. pytest still not importable (the project keeps its test dependencies elsewhere):
#      `pip install pytest`.
# ENTROPY_GATE_PROJECT_INSTALLER=uv (the workflow's project-installer input) installs with
# `uv pip install` instead, uv taken from the action's hashed requirements/uv.lock (the same
# uv entropy-gate's own venv is built with; scripts/uv.sh) and given pip's PIP_INDEX_URL,
# PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS and PIP_NO_INDEX; the project's own uv configuration
# applies. Where uv cannot be installed, pip does it, said in one line. pip is the default.
# Set the workflow's `install` input when the project needs anything else (a requirements
# file, a system library, extras of its own).
set -euo pipefail
py=${PYTHON:-$(command -v python || command -v python3)}
pip=("$py" -m pip --disable-pip-version-check)
install=("${pip[@]}" install --quiet)
how="pip install"
installer=${ENTROPY_GATE_PROJECT_INSTALLER:-pip}
case "$installer" in
  pip) ;;
  uv)
    # shellcheck source=scripts/uv.sh
    . "$(dirname "${BASH_SOURCE[0]}")/uv.sh"
    work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/entropy-gate-project.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    if uv=$(uv_binary "$py" "$work/uv"); then
      mapfile -d '' index < <(uv_index)
      # The interpreter by its absolute path: a bare name could be a Python uv manages.
      target=$("$py" -I -c 'import sys; print(sys.executable)')
      install=("$uv" pip install --quiet --python "$target" --compile-bytecode "${index[@]}")
      how="uv pip install"
    else
      echo "entropy-gate: $uv: the project is installed with pip (project-installer: uv)"
    fi
    ;;
  *)
    echo "entropy-gate: project-installer must be pip or uv, not '$installer'" >&2
    exit 2
    ;;
esac
if [ -f pyproject.toml ] || [ -f setup.py ] || [ -f setup.cfg ]; then
  found=$("$py" - <<'PY'
import ast
import configparser
import sys

NAMES = ("test", "tests", "testing")


def pyproject():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: no TOML reader in the standard library
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            return None
    try:
        with open("pyproject.toml", "rb") as handle:
            return tomllib.load(handle).get("project", {}).get("optional-dependencies")
    except (OSError, ValueError, AttributeError):
        return None


def setup_cfg():
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read("setup.cfg", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    if not parser.has_section("options.extras_require"):
        return None
    return dict(parser["options.extras_require"])


def setup_py():
    try:
        with open("setup.py", encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    assigned = {
        target.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        name = getattr(node, "func", None)
        if not isinstance(node, ast.Call) or getattr(name, "id", getattr(name, "attr", "")) != "setup":
            continue
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg == "extras_require" and isinstance(value, ast.Name):
                value = assigned.get(value.id)
            if keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                return {k.value: None for k in value.keys if isinstance(k, ast.Constant)}
    return None


for source, read in (("pyproject.toml", pyproject), ("setup.cfg", setup_cfg), ("setup.py", setup_py)):
    extras = read()
    for name in NAMES:
        if isinstance(extras, dict) and name in extras:
            print(name, source)
            sys.exit(0)
PY
)
  extra=${found%% *}
  if [ -n "$found" ]; then
    echo "entropy-gate: installing the project under test: $how -e '.[$extra]' (the $extra extra of ${found#* }; install input empty)"
    "${install[@]}" -e ".[$extra]"
  else
    echo "entropy-gate: installing the project under test: $how -e '.' (no test, tests or testing extra declared; install input empty)"
    "${install[@]}" -e .
  fi
else
  echo "entropy-gate: no pyproject.toml, setup.py or setup.cfg at the root: the project is not installed (set the install input if it needs installing)"
fi
if ! "$py" -c 'import pytest' 2>/dev/null; then
  echo "entropy-gate: pytest is not among the project's dependencies: $how pytest"
  "${install[@]}" pytest
fi
