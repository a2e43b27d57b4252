#!/bin/bash
# verify-gate.sh: the step of the action's `run` command after the project's install (the
# first of the PR's code in a host job) and before entropy-gate runs again. The gate refuses an
# environment it did not build: its venv must be what install.sh built before any PR code ran
# (TREE, the digest install.sh took: a step output, which no later step can change), hashed by
# the runner's interpreter install.sh found then (ENTROPY_GATE_INSTALL_PYTHON, an absolute
# path). The `$GATE` wrapper is written anew (its two lines are the gate's own). Inputs come
# from the environment only: VENV, TREE, GATE, HOST (a|b), REPORT_DIR (may be empty),
# PROPERTIES (a leg's ids), LEG. The project's install step refuses BASH_ENV, ENV, LD_PRELOAD
# and LD_AUDIT set through $GITHUB_ENV. What a host job's PR code can still do (it runs with
# the runner's rights) is in docs/ci.md's threat table: this makes a forged host cost work.
# On a refusal: `::error` with the reason, error.json in the host's report folder (each of the
# leg's properties' folders) written with the runner's Python, never the gate's, the step
# output report-dir, and exit 2.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${HOST:-}" in
  a|b) ;;
  *) echo "::error title=entropy-gate::input host must be a or b for command run"; exit 2 ;;
esac
python=${ENTROPY_GATE_INSTALL_PYTHON:-python3}
why=""
got=$(ENTROPY_GATE_INSTALL_PYTHON=$python /bin/bash "$here/scripts/gate-tree.sh" "${VENV:?}" 2>/dev/null || echo unreadable)
if [ -z "${TREE:-}" ] || [ "$got" != "$TREE" ]; then
  why="entropy-gate's own venv ($VENV) changed after it was installed, while the project's install ran the PR's code (sha256 ${TREE:-none} then, $got now): a venv the gate did not build is never run"
fi
if [ -z "$why" ]; then
  printf '#!/bin/sh\nexec "%s" -I -B -m entropy_action "$@"\n' "$VENV/bin/python" > "${GATE:?}"
  chmod +x "$GATE"
  echo "entropy-gate: its venv is the one installed before the project's install (sha256 $TREE)"
  exit 0
fi
echo "::error title=entropy-gate::host $HOST: $why"
out=${REPORT_DIR:-${RUNNER_TEMP:?}/entropy-gate/host-$HOST}
read -r -a props <<< "${PROPERTIES:-}"  # ids: never globbed, never evaluated
folders=("$out")
if [ "${#props[@]}" -gt 0 ]; then
  folders=()
  for id in "${props[@]}"; do folders+=("$out/properties/$id"); done
  why="leg ${LEG:-?} of host $HOST: $why"
fi
"$python" -I -B - "$HOST" "$why" "${folders[@]}" <<'PY'
import json, os, sys

host, message, folders = sys.argv[1], sys.argv[2], sys.argv[3:]
report = {"format": 1, "host": host, "step": "verify entropy-gate", "message": message[:600]}
for folder in folders:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "error.json"), "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)
PY
echo "report-dir=$out" >> "$GITHUB_OUTPUT"
exit 2
