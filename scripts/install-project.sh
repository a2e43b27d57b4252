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
# Set the workflow's `install` input when the project needs anything else (a requirements
# file, a system library, extras of its own).
set -euo pipefail
py=${PYTHON:-$(command -v python || command -v python3)}
pip=("$py" -m pip --disable-pip-version-check)
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
    echo "entropy-gate: installing the project under test: pip install -e '.[$extra]' (the $extra extra of ${found#* }; install input empty)"
    "${pip[@]}" install --quiet -e ".[$extra]"
  else
    echo "entropy-gate: installing the project under test: pip install -e '.' (no test, tests or testing extra declared; install input empty)"
    "${pip[@]}" install --quiet -e .
  fi
else
  echo "entropy-gate: no pyproject.toml, setup.py or setup.cfg at the root: the project is not installed (set the install input if it needs installing)"
fi
if ! "$py" -c 'import pytest' 2>/dev/null; then
  echo "entropy-gate: pytest is not among the project's dependencies: pip install pytest"
  "${pip[@]}" install --quiet pytest
fi
