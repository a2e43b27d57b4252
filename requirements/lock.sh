#!/usr/bin/env bash
# Regenerate the hashed lock files the action installs from (one command: requirements/lock.sh).
# A universal resolution (Python 3.10-3.13, every platform), so one lock serves every runner.
# Needs uv (pip install uv); `pip-compile --generate-hashes` would resolve for one interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
uv=${UV:-uv}
common=(--universal --python-version 3.10 --generate-hashes --quiet)
"$uv" pip compile "${common[@]}" pyproject.toml requirements/build.in -o requirements/action.lock
"$uv" pip compile "${common[@]}" requirements/host-b.in -c requirements/action.lock \
  -o requirements/host-b.lock
"$uv" pip compile "${common[@]}" requirements/uv.in -o requirements/uv.lock  # the installer
"$uv" pip compile "${common[@]}" requirements/release.in -o requirements/release.txt
"$uv" pip compile --universal --python-version 3.10 --quiet pyproject.toml requirements/compat.in \
  -o requirements/compat.lock  # the compat tier's venvs (tests/compat); no hashes: -e of the gate
