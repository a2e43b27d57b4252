#!/usr/bin/env bash
# One adoption trial on an unpacked sdist, as a new user would do it (docs/adoption-trials.md):
# git init the folder, a .venv inside it with the project editable, entropy-gate init,
# commit the draft, a docs-only patch, entropy-gate gate. Prints init's output, the verdict
# and the wall times.
#   bench/adoption_trial.sh UNPACKED_SDIST MODULE [PIP_ARGS...]
# e.g. pip download --no-deps --no-binary :all: boltons==26.2.0 && tar xzf boltons-26.2.0.tar.gz
#      bench/adoption_trial.sh boltons-26.2.0 tests/test_timeutils.py
set -euo pipefail
src=$(realpath "$1"); module=$2; shift 2
gate=$(realpath "$(dirname "$0")/..")
work=$(mktemp -d)/$(basename "$src")
cp -r "$src" "$work" && cd "$work"
export GIT_AUTHOR_NAME=trial GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=trial GIT_COMMITTER_EMAIL=t@example.invalid
git init -q -b main && git add -A && git commit -qm sdist
python3 -m venv .venv
.venv/bin/pip install -q -e . pytest "$@" -e "$gate" 2>&1 | grep -v '^WARNING: Location' || true
git checkout -q -- . && git clean -qfd -e .venv  # what the editable build wrote
echo "== $work"
start=$(date +%s.%N)
.venv/bin/entropy-gate init --module "$module" 2>/dev/null | sed -n '1,/^seams to fix/p'
echo "init wall: $(echo "$(date +%s.%N) - $start" | bc) s"
git add entropy.yaml && git commit -qm "entropy.yaml as drafted"
readme=$(ls README* 2>/dev/null | head -1); echo "A docs line." >> "${readme:-README.md}"
git add -A && git commit -qm docs
start=$(date +%s.%N)
code=0
.venv/bin/entropy-gate gate --base-ref HEAD~1 --python .venv/bin/python > gate.log 2>&1 || code=$?
echo "gate wall: $(echo "$(date +%s.%N) - $start" | bc) s, exit $code"
grep -E "^entropy-gate verdict:|^tests:|invalid input|^  host [AB]: " gate.log | head -8
