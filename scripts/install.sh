#!/usr/bin/env bash
# install.sh VENV: install entropy-gate from this action's own folder (never from the PR's tree)
# into the venv VENV. Every dependency, and the build backend, comes from
# requirements/action.lock and is checked against its sha256 (--require-hashes); the package
# itself is then built from a copy of its sources with --no-deps --no-build-isolation, so no
# unhashed build requirement is fetched. Idempotent within a job (verdict, then publish).
# ENTROPY_GATE_INSTALL_PYTHON picks the interpreter for the venv (default python3, >= 3.10).
# ENTROPY_GATE_VENV_CACHE=DIR (opt-in) keeps one venv per interpreter and action source in DIR
# and links VENV to it, so jobs on one machine install once (act's host mode, ephemeral
# runners with a warm disk). Only for machines no PR code can write to: host jobs run the
# PR's code, and a venv in a shared folder is then theirs to tamper with.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:?usage: install.sh VENV}
stamp="$venv/.entropy-gate-source"  # inside the venv: a cached venv stamps the cache
if [ -x "$venv/bin/entropy-gate" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$here" ]; then
  exit 0
fi
python=${ENTROPY_GATE_INSTALL_PYTHON:-python3}

build() { # build DIR: the venv, from the hashed lock, then the package without dependencies
  local dir=$1 src
  local pip=(-m pip --disable-pip-version-check --quiet)
  "$python" -m venv --clear "$dir"
  "$dir/bin/python" "${pip[@]}" install --require-hashes -r "$here/requirements/action.lock"
  src=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/entropy-gate-src.XXXXXX")
  cp -R "$here/pyproject.toml" "$here/README.md" "$here/entropy_action" "$src/"
  "$dir/bin/python" "${pip[@]}" install --no-deps --no-build-isolation --no-index "$src"
  rm -rf "$src"
}

if [ -n "${ENTROPY_GATE_VENV_CACHE:-}" ]; then
  key=$("$python" - "$here" <<'PY'
import hashlib, pathlib, sys
root = pathlib.Path(sys.argv[1])
digest = hashlib.sha256(f"{sys.executable} {sys.version}".encode())
files = [root / "requirements" / "action.lock", root / "pyproject.toml"]
files += sorted(p for p in (root / "entropy_action").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
for path in files:
    digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
print(digest.hexdigest()[:20])
PY
)
  mkdir -p "$ENTROPY_GATE_VENV_CACHE"
  cached="$ENTROPY_GATE_VENV_CACHE/$key"
  exec 9>"$cached.lock"
  if command -v flock >/dev/null; then flock 9; fi  # concurrent jobs wait for one build
  if [ ! -x "$cached/bin/entropy-gate" ]; then build "$cached"; fi
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  ln -s "$cached" "$venv"
  echo "entropy-gate: venv from ENTROPY_GATE_VENV_CACHE ($cached)"
else
  build "$venv"
fi
printf '%s\n' "$here" > "$stamp"
"$venv/bin/entropy-gate" --version
