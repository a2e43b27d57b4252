#!/usr/bin/env bash
# bench/trial_run.sh NAME MODULE PRODUCTION [PATCH...] (docs/adoption-trials.md, issue 20), with
# /work/trials/NAME an unpacked sdist under git and /work/trials/venvs/NAME its venv:
# init (first time), then each patch on a branch from
# `base`, gated with the trial venv; one TSV line per patch to results.tsv
set -uo pipefail
name=$1; module=$2; production=$3; shift 3
cd /work/trials/$name
export GIT_AUTHOR_NAME=trial GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=trial GIT_COMMITTER_EMAIL=t@example.invalid
venv=/work/trials/venvs/$name
export PATH=$venv/bin:$PATH
if ! git rev-parse -q --verify base >/dev/null; then
  entropy-gate init --module "$module" > ../$name.init.txt 2>&1
  git add entropy.yaml && git commit -qm "entropy.yaml as drafted" && git tag base
fi
for kind in "$@"; do
  git checkout -q -f base && git clean -qfd
  git checkout -q -B "trial-$kind"
  python3 "$(dirname "$0")/trial_patch.py" "$kind" "$module" "$production" || { echo "$name $kind: patch failed"; continue; }
  git add -A && git commit -qm "$kind"
  start=$(date +%s.%N)
  code=0
  entropy-gate gate --base-ref base --python $venv/bin/python --json ../$name.$kind.json --out /tmp/trial-out/$name-$kind > ../$name.$kind.log 2>&1 || code=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  cls=$(python3 -c "import json,sys; print(json.load(open('../$name.$kind.json'))['classification'])" 2>/dev/null || echo none)
  printf "%s\t%s\t%s\t%s\t%.1f\n" "$name" "$kind" "$cls" "$code" "$wall" | tee -a ../results.tsv
done
git checkout -q -f base
