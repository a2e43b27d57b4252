#!/usr/bin/env bash
# run-host.sh: the action's `run` command, after prepare-host.sh. Inputs come from the
# environment only: GATE (the installed entropy-gate), HOST (a|b), MANIFEST, BASE_REF (may be
# empty), PYTHON_IN (the interpreter prepare-host.sh settled on), REPORT_DIR (may be empty),
# CACHE_KEY (the base evidence's key from `entropy-gate cache-key`; empty: no cache) and
# EVIDENCE_DIR (the folder actions/cache restored the entry into and saves from).
# Exit 0 when the host produced a report (passed or failed: the verdict job judges it), 2 when
# the run itself was invalid, 3 on an internal error. Sets the step outputs report-dir and, when
# the run filed the base run under CACHE_KEY in EVIDENCE_DIR, cached=true.
set -euo pipefail
case "${HOST:-}" in
  a|b) ;;
  *) echo "::error title=entropy-gate::input host must be a or b for command run"; exit 2 ;;
esac
py=${PYTHON_IN:-$(command -v python || command -v python3)}
out=${REPORT_DIR:-${RUNNER_TEMP:?}/entropy-gate/host-$HOST}
rm -rf "$out"
mkdir -p "$(dirname "$out")"
args=(run --host "$HOST" --out "$out" --manifest "$MANIFEST" --python "$py")
if [ "$HOST" = b ]; then args+=(--isolate); fi
if [ -n "${BASE_REF:-}" ]; then args+=(--base-ref "$BASE_REF"); fi
if [ -n "${BASE_REF:-}" ] && [ -n "${CACHE_KEY:-}" ]; then
  args+=(--cache-dir "${EVIDENCE_DIR:?}")
fi
# `run` fences the pytest log it echoes (PR code's output) with ::stop-commands::.
rc=0
"$GATE" "${args[@]}" || rc=$?
echo "report-dir=$out" >> "$GITHUB_OUTPUT"
if [ -n "${CACHE_KEY:-}" ] && [ -f "$EVIDENCE_DIR/base-runs/${CACHE_KEY#entropy-gate-base-run-}/key.json" ]; then
  echo "cached=true" >> "$GITHUB_OUTPUT"
fi
case $rc in
  0) echo "host $HOST: the properties passed; the verdict job judges the report" ;;
  1) echo "host $HOST: a property failed; the verdict job judges the report" ;;
  *) why="entropy-gate run exited $rc before its report was complete (the log above says why)"
     echo "error=$why" >> "$GITHUB_OUTPUT"  # for host-error.sh, where `run` wrote no error.json
     echo "::error title=entropy-gate::host $HOST could not run the properties (exit $rc)"; exit "$rc" ;;
esac
