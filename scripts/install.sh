#!/usr/bin/env bash
# install.sh VENV: install entropy-gate from this action's own folder (never from the PR's tree)
# into the venv VENV. Every dependency, and the build backend, comes from
# requirements/action.lock and is checked against its sha256 (--require-hashes); the package
# itself is then built from a copy of its sources with --no-deps --no-build-isolation, so no
# unhashed build requirement is fetched.
# It trusts only what it built or verified itself: a venv already at VENV is reused only when
# this job's own install left it there, unchanged (VENV.tree holds the gate-tree.sh digest it
# took; a later install in the job, publish after verdict, compares); anything else at VENV
# is removed, said in one line, and built again. The digest is also the step output
# `venv-tree`, which verify-gate.sh compares after the project's install (PR code) ran.
# ENTROPY_GATE_INSTALL_PYTHON picks the interpreter for the venv (default python3, >= 3.10).
# ENTROPY_GATE_VENV_CACHE=DIR (opt-in) keeps one venv per interpreter and action source in DIR
# and links VENV to it, so jobs on one machine install once (act's host mode, ephemeral
# runners with a warm disk). Only for machines no PR code can write to: host jobs run the
# PR's code, and a venv in a shared folder is then theirs to tamper with.
# One install per workflow run (the reusable workflow's check job builds, the other jobs on
# its runner image reuse): ENTROPY_GATE_VENV_PACK=TAR packs the venv just built into TAR and
# prints `digest=SHA256` (a step output); ENTROPY_GATE_VENV_FROM=TAR with
# ENTROPY_GATE_VENV_DIGEST=SHA256 unpacks TAR instead of building, only when its sha256 is
# that digest (the check job's output: the check job runs no PR code, and a host job cannot
# replace its artifact) and its interpreter runs; anything else is said in one line and the
# venv is built from the lock as usual.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:?usage: install.sh VENV}
absolute() { case "$1" in /*|'') printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
venv=$(absolute "$venv")
for name in ENTROPY_GATE_VENV_FROM ENTROPY_GATE_VENV_PACK ENTROPY_GATE_VENV_CACHE; do
  if [ -n "${!name:-}" ]; then export "$name=$(absolute "${!name}")"; fi
done
# No PR code may run here: the job's working directory is the PR's checkout, and `python -m`,
# `-c` and `-` put the working directory first on sys.path (a `venv.py` or `pip/` there would
# run instead of the real one). Every interpreter below runs isolated (-I: no working
# directory, PYTHON* variable or user site on sys.path), from an empty folder of its own.
work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/entropy-gate-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
stamp="$venv/.entropy-gate-source"  # inside the venv: a cached venv stamps the cache
record="$venv.tree"  # beside it: the digest this job's install took of it
python=${ENTROPY_GATE_INSTALL_PYTHON:-python3}
tree() { ENTROPY_GATE_INSTALL_PYTHON=$python "$here/scripts/gate-tree.sh" "$venv"; }
output() { if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1" >> "$GITHUB_OUTPUT"; fi; }

if [ -e "$venv" ] || [ -L "$venv" ]; then
  # (a cached venv carries no stamp: the cache's key names the action's sources)
  if [ -x "$venv/bin/python" ] \
    && { [ -n "${ENTROPY_GATE_VENV_CACHE:-}" ] || [ "$(cat "$stamp" 2>/dev/null)" = "$here" ]; } \
    && [ -f "$record" ] && [ "$(tree)" = "$(cat "$record")" ]; then
    output "venv-tree=$(cat "$record")"
    output "venv-dir=$(cd "$venv" && pwd -P)"
    exit 0  # this job's own install, unchanged (verdict, then publish)
  fi
  echo "::warning title=entropy-gate::$venv holds a venv this job's install did not build, or one changed since: removed, building it here"
  rm -rf "$venv" "$record"
fi

build() { # build DIR: the venv, from the hashed lock, then the package without dependencies
  local dir=$1 src
  local pip=(-m pip --disable-pip-version-check --quiet)
  "$python" -I -m venv --clear "$dir"
  "$dir/bin/python" -I "${pip[@]}" install --require-hashes -r "$here/requirements/action.lock"
  src=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/entropy-gate-src.XXXXXX")
  cp -R "$here/pyproject.toml" "$here/README.md" "$here/entropy_action" "$src/"
  "$dir/bin/python" -I "${pip[@]}" install --no-deps --no-build-isolation --no-index "$src"
  rm -rf "$src"
}

sha256() { # sha256 FILE, with the runner's own tools (never the venv being checked)
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1
  else python3 -I -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
  fi
}

unpack() { # unpack TAR DIGEST: the packed venv, when it is the one the check job built
  local tar=$1 want=$2 got tmp
  if [ ! -f "$tar" ]; then
    echo "entropy-gate: no packed venv at $tar: building it here"
    return 1
  fi
  got=$(sha256 "$tar")
  if [ "$got" != "$want" ]; then
    echo "::warning title=entropy-gate::the packed venv's sha256 is $got, not the check job's $want: building it here"
    return 1
  fi
  tmp=$(mktemp -d "$(dirname "$venv")/.entropy-gate-unpack.XXXXXX")
  tar -xf "$tar" -C "$tmp" --no-same-owner
  # -I: the working directory (the PR's tree) must not be what makes it import
  if ! "$tmp/venv/bin/python" -I -B -c 'import entropy_action' 2>/dev/null; then
    echo "entropy-gate: the packed venv does not run on this runner: building it here"
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$venv"
  mv "$tmp/venv" "$venv"
  rm -rf "$tmp"
  echo "entropy-gate: venv unpacked from the check job's build (sha256 $want)"
}

if [ -n "${ENTROPY_GATE_VENV_FROM:-}" ] && [ -n "${ENTROPY_GATE_VENV_DIGEST:-}" ] \
  && [ -z "${ENTROPY_GATE_VENV_CACHE:-}" ] \
  && unpack "$ENTROPY_GATE_VENV_FROM" "$ENTROPY_GATE_VENV_DIGEST"; then
  :
elif [ -n "${ENTROPY_GATE_VENV_CACHE:-}" ]; then
  key=$("$python" -I - "$here" <<'PY'
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
  # From here on the cached venv itself: the link is in a folder other jobs on the machine
  # may share (act's RUNNER_TEMP for jobs of one name), whose installs remove and remake it.
  venv=$cached
  stamp="$venv/.entropy-gate-source"
else
  build "$venv"
  if [ -n "${ENTROPY_GATE_VENV_PACK:-}" ]; then
    # The venv as the directory `venv` in TAR, symlinks and modes kept (an artifact would not).
    tar -cf "$ENTROPY_GATE_VENV_PACK" -C "$(dirname "$venv")" \
      --transform "s|^$(basename "$venv")|venv|" "$(basename "$venv")"
    digest=$(sha256 "$ENTROPY_GATE_VENV_PACK")
    echo "entropy-gate: venv packed for the other jobs on this image (sha256 $digest)"
    output "venv-digest=$digest"
  fi
fi
# Written only when it says otherwise, and whole; never into a venv ENTROPY_GATE_VENV_CACHE
# shares: other jobs' verify-gate.sh hash it meanwhile, and their action paths differ (act
# gives each job its own), so a rewrite would look like tampering. A cached venv is relinked
# instead of reused, which costs a link.
if [ -z "${ENTROPY_GATE_VENV_CACHE:-}" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$here" ]; then
  printf '%s\n' "$here" > "$stamp.$$" && mv -f "$stamp.$$" "$stamp"
fi
# The interpreter by path (an unpacked venv's scripts keep the path of the job that built it);
# -B: no bytecode written into the venv, whose digest is taken next.
"$venv/bin/python" -I -B -m entropy_action --version
tree_digest=$(tree)
printf "%s\n" "$tree_digest" > "$record"
output "venv-tree=$tree_digest"
output "venv-dir=$venv"  # the venv this digest is of (the cached one, with the cache)
