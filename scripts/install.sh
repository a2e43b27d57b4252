#!/usr/bin/env bash
# install.sh VENV: install entropy-gate from this action's own folder (never from the PR's tree)
# into the venv VENV. Every dependency, and the build backend, comes from
# requirements/action.lock and is checked against its sha256 (--require-hashes); the package
# itself is then built from a copy of its sources with --no-deps --no-build-isolation, so no
# unhashed build requirement is fetched. Idempotent within a job (verdict, then publish).
# ENTROPY_GATE_INSTALL_PYTHON picks the interpreter for the venv (default python3, >= 3.10).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:?usage: install.sh VENV}
stamp="$venv/.entropy-gate-source"
if [ -x "$venv/bin/entropy-gate" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$here" ]; then
  exit 0
fi
python=${ENTROPY_GATE_INSTALL_PYTHON:-python3}
pip=(-m pip --disable-pip-version-check --quiet)
"$python" -m venv --clear "$venv"
"$venv/bin/python" "${pip[@]}" install --require-hashes -r "$here/requirements/action.lock"
src=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/entropy-gate-src.XXXXXX")
trap 'rm -rf "$src"' EXIT
cp -R "$here/pyproject.toml" "$here/README.md" "$here/entropy_action" "$src/"
"$venv/bin/python" "${pip[@]}" install --no-deps --no-build-isolation --no-index "$src"
printf '%s\n' "$here" > "$stamp"
"$venv/bin/entropy-gate" --version
