#!/usr/bin/env bash
# prepare-host.sh: the first step of the action's `run` command, before the base evidence's
# cache key is taken (the key names the interpreter's installed distributions, so whatever
# this installs must be in place first). Inputs come from the environment only:
#   HOST (a|b), PYTHON_IN (the properties' interpreter; default python on PATH).
# Sets the step output python (the interpreter every later step uses); on failure, error
# (the one line the host's error report carries).
# Host B needs time_machine importable by that interpreter (the clock shift runs inside the
# test process): when it is missing, it is installed there from requirements/host-b.lock
# (hashed). Exit 2 when the host cannot run the properties at all.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${HOST:-}" in
  a|b) ;;
  *) echo "::error title=entropy-gate::input host must be a or b for command run"; exit 2 ;;
esac
py=${PYTHON_IN:-$(command -v python || command -v python3)}
if ! "$py" -c 'import pytest' 2>/dev/null; then
  why="pytest is not importable by $py: install the project's test dependencies there (the install input)"
  echo "::error title=entropy-gate::$why"
  echo "error=$why" >> "$GITHUB_OUTPUT"  # the host's error report (host-error.sh) says it
  exit 2
fi
if [ "$HOST" = b ] && ! "$py" -c 'import time_machine' 2>/dev/null; then
  # Jobs sharing one interpreter (a self-hosted runner, act) install one at a time.
  exec 8>"$("$py" -c 'import sys; print(sys.prefix)')/.entropy-gate-time-machine.lock"
  if command -v flock >/dev/null; then flock 8; fi
  if ! "$py" -c 'import time_machine' 2>/dev/null; then
    echo "host B: installing time-machine into $py (requirements/host-b.lock, hashed) for the clock shift"
    "$py" -m pip --disable-pip-version-check --quiet install --require-hashes --no-deps \
      -r "$here/requirements/host-b.lock"
  fi
  exec 8>&-
fi
echo "python=$py" >> "$GITHUB_OUTPUT"
