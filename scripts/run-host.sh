#!/usr/bin/env bash
# run-host.sh: the action's `run` command. Inputs come from the environment only:
#   GATE (the installed entropy-gate), HOST (a|b), MANIFEST, BASE_REF (may be empty),
#   PYTHON_IN (the properties' interpreter; default python on PATH), REPORT_DIR (may be empty).
# Host B needs time_machine importable by that interpreter (the clock shift runs inside the
# test process): when it is missing, it is installed there from requirements/host-b.lock
# (hashed). Exit 0 when the host produced a report (passed or failed: the verdict job judges
# it), 2 when the run itself was invalid, 3 on an internal error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${HOST:-}" in
  a|b) ;;
  *) echo "::error title=entropy-gate::input host must be a or b for command run"; exit 2 ;;
esac
py=${PYTHON_IN:-$(command -v python || command -v python3)}
out=${REPORT_DIR:-${RUNNER_TEMP:?}/entropy-gate/host-$HOST}
rm -rf "$out"
mkdir -p "$(dirname "$out")"
if ! "$py" -c 'import pytest' 2>/dev/null; then
  echo "::error title=entropy-gate::pytest is not importable by $py: install the project's test dependencies there (the install input)"
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
args=(run --host "$HOST" --out "$out" --manifest "$MANIFEST" --python "$py")
if [ "$HOST" = b ]; then args+=(--isolate); fi
if [ -n "${BASE_REF:-}" ]; then args+=(--base-ref "$BASE_REF"); fi
# `run` fences the pytest log it echoes (PR code's output) with ::stop-commands::.
rc=0
"$GATE" "${args[@]}" || rc=$?
echo "report-dir=$out" >> "$GITHUB_OUTPUT"
case $rc in
  0) echo "host $HOST: the properties passed; the verdict job judges the report" ;;
  1) echo "host $HOST: a property failed; the verdict job judges the report" ;;
  *) echo "::error title=entropy-gate::host $HOST could not run the properties (exit $rc)"; exit "$rc" ;;
esac
