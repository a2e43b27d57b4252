#!/usr/bin/env bash
# install-project.sh: the project under test on this host, when the workflow's `install` input
# is empty (the default). Inputs come from the environment only: PYTHON (the interpreter the
# properties run with; default python on PATH). Runs in the checkout (the PR's tree).
# What it does, in order, and says so in one line each:
#   1. a pyproject.toml (or setup.py/setup.cfg) at the root: `pip install -e .[EXTRA]`, EXTRA
#      the first of test, tests, testing that [project.optional-dependencies] declares
#      (none declared: `pip install -e .`);
#   2. pytest still not importable (the project keeps its test dependencies elsewhere):
#      `pip install pytest`.
# Set the workflow's `install` input when the project needs anything else (a requirements
# file, a system library, extras of its own).
set -euo pipefail
py=${PYTHON:-$(command -v python || command -v python3)}
pip=("$py" -m pip --disable-pip-version-check)
if [ -f pyproject.toml ] || [ -f setup.py ] || [ -f setup.cfg ]; then
  extra=$("$py" - <<'PY'
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: no TOML reader in the standard library
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        sys.exit(0)
try:
    with open("pyproject.toml", "rb") as handle:
        extras = tomllib.load(handle).get("project", {}).get("optional-dependencies", {})
except (OSError, ValueError):
    sys.exit(0)
for name in ("test", "tests", "testing"):
    if isinstance(extras, dict) and name in extras:
        print(name)
        break
PY
)
  target=.
  if [ -n "$extra" ]; then target=".[$extra]"; fi
  echo "entropy-gate: installing the project under test: pip install -e '$target' (install input empty)"
  "${pip[@]}" install --quiet -e "$target"
else
  echo "entropy-gate: no pyproject.toml, setup.py or setup.cfg at the root: the project is not installed (set the install input if it needs installing)"
fi
if ! "$py" -c 'import pytest' 2>/dev/null; then
  echo "entropy-gate: pytest is not among the project's dependencies: pip install pytest"
  "${pip[@]}" install --quiet pytest
fi
