#!/usr/bin/env bash
# host-error.sh: the action's failure step of a host job, and its `host-error` command. A step
# failed before `entropy-gate run` reported: the host's report folder gets error.json (the
# step and its one line; `entropy-gate host-error`), which the verdict leads with. A folder
# that holds host.json or the error.json `run` wrote itself is left as it is. Inputs come from
# the environment only: GATE, HOST (a|b), REPORT_DIR (may be empty), STEP and MESSAGE (the
# host-error command's inputs; empty in the failure step), and for the failure step the
# outcomes of the action's steps (PROJECT, VALIDATE, PREPARE, CACHE_KEY_STEP, RUN) with the error lines
# PREPARE_ERROR and RUN_ERROR that prepare-host.sh and run-host.sh leave as step outputs.
# A leg of a list manifest (PROPERTIES: its ids, space-separated; LEG: its number) writes the
# report into each of its properties' folders, its message naming the leg.
# Sets the step output report-dir (the folder the host job uploads).
set -euo pipefail
case "${HOST:-}" in
  a|b) ;;
  *) echo "::error title=entropy-gate::input host must be a or b for the host's error report"; exit 2 ;;
esac
out=${REPORT_DIR:-${RUNNER_TEMP:?}/entropy-gate/host-$HOST}
step=${STEP:-} message=${MESSAGE:-}
if [ -z "$step" ]; then
  if [ "${PROJECT:-}" = failure ]; then
    step="install the project under test" message="the install input failed; the host job's log says why"
  elif [ "${VALIDATE:-}" = failure ]; then
    step="validate the manifest"
  elif [ "${PREPARE:-}" = failure ]; then
    step="prepare the host" message=${PREPARE_ERROR:-}
  elif [ "${CACHE_KEY_STEP:-}" = failure ]; then
    step="the base evidence's cache key"
  elif [ "${RUN:-}" = failure ]; then
    step="run the properties" message=${RUN_ERROR:-}
  else
    step="the action's run command"
  fi
fi
args=(host-error --host "$HOST" --out "$out" --step "$step")
read -r -a props <<< "${PROPERTIES:-}"  # ids: never globbed, never evaluated
for id in "${props[@]}"; do args+=(--property "$id"); done
if [ -n "${LEG:-}" ] && [ "${#props[@]}" -gt 0 ]; then  # a leg of a list: name it
  said=${message:-"the step failed; the log of the host job says why"}
  message="leg $LEG of host $HOST: $said"
fi
"$GATE" "${args[@]}" --message "$message"
echo "report-dir=$out" >> "$GITHUB_OUTPUT"
