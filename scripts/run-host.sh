#!/usr/bin/env bash
# run-host.sh: the action's `run` command, after prepare-host.sh. Inputs come from the
# environment only: GATE (the installed entropy-gate), HOST (a|b), MANIFEST, BASE_REF (may be
# empty), PYTHON_IN (the interpreter prepare-host.sh settled on), REPORT_DIR (may be empty),
# PROPERTIES (a leg of a list manifest: its property ids, space-separated; empty: every one),
# CACHE_KEY (the base evidence's key from `entropy-gate cache-key`; empty: no cache) and
# EVIDENCE_DIR (the folder actions/cache restored the entry into and saves from).
# Exit 0 when the host produced a report (passed or failed: the verdict job judges it), 2 when
# the run itself was invalid, 3 on an internal error. Sets the step outputs report-dir and, when
# the run filed the base run in EVIDENCE_DIR, cached=true and key (the key it filed it under).
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
read -r -a props <<< "${PROPERTIES:-}"  # ids: never globbed, never evaluated
for id in "${props[@]}"; do args+=(--property "$id"); done
if [ "$HOST" = b ]; then args+=(--isolate); fi
if [ -n "${BASE_REF:-}" ]; then args+=(--base-ref "$BASE_REF"); fi
if [ -n "${BASE_REF:-}" ] && [ -n "${CACHE_KEY:-}" ]; then
  args+=(--cache-dir "${EVIDENCE_DIR:?}")
fi
# `run` fences the pytest log it echoes (PR code's output) with ::stop-commands::.
rc=0
"$GATE" "${args[@]}" || rc=$?
echo "report-dir=$out" >> "$GITHUB_OUTPUT"
# The key the run filed the base run under, taken by `run` itself after everything that
# changes the interpreter (host B installs time-machine into an interpreter the two hosts may
# share, after host A's cache-key step): the save files the entry under that key, never under
# a key the run's interpreter no longer matched. The folder held only the restored entry.
if [ -n "${CACHE_KEY:-}" ] && [ -d "$EVIDENCE_DIR/base-runs" ]; then
  digests=()
  for entry in "$EVIDENCE_DIR"/base-runs/*/key.json; do
    [ -f "$entry" ] || continue
    digests+=("$(basename "$(dirname "$entry")")")
  done
  filed=""
  if [ "${#props[@]}" -gt 1 ]; then
    # A leg of several properties is one entry (`cache-key`'s leg key: the sha256 of the
    # digests, sorted, one a line), saved only when the run filed one per property.
    if [ "${#digests[@]}" -eq "${#props[@]}" ]; then
      sum=$(printf '%s\n' "${digests[@]}" | LC_ALL=C sort | sha256sum)
      filed="entropy-gate-base-run-leg-${sum%% *}"
    fi
  else
    for digest in "${digests[@]}"; do
      if [ "entropy-gate-base-run-$digest" = "$CACHE_KEY" ]; then filed=$CACHE_KEY; break; fi
      filed="entropy-gate-base-run-$digest"
    done
  fi
  if [ -n "$filed" ]; then
    echo "cached=true" >> "$GITHUB_OUTPUT"
    echo "key=$filed" >> "$GITHUB_OUTPUT"
    if [ "$filed" != "$CACHE_KEY" ]; then
      echo "host $HOST: the interpreter changed after the cache key was taken; the base run is filed under the key the run saw ($filed)"
    fi
  fi
fi
case $rc in
  0) echo "host $HOST: the properties passed; the verdict job judges the report" ;;
  1) echo "host $HOST: a property failed; the verdict job judges the report" ;;
  *) why="entropy-gate run exited $rc before its report was complete (the log above says why)"
     echo "error=$why" >> "$GITHUB_OUTPUT"  # for host-error.sh, where `run` wrote no error.json
     echo "::error title=entropy-gate::host $HOST could not run the properties (exit $rc)"; exit "$rc" ;;
esac
