#!/usr/bin/env bash
# install.sh VENV: install entropy-gate from this action's own folder (never from the PR's tree)
# into the venv VENV. Every dependency, and the build backend, comes from
# requirements/action.lock and is checked against its sha256 (--require-hashes); the package
# itself is then built from a copy of its sources with --no-deps --no-build-isolation, so no
# unhashed build requirement is fetched. The installer is uv (requirements/uv.lock, itself
# installed with pip --require-hashes into this script's own folder, then thrown away; uv
# takes pip's PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS and PIP_NO_INDEX, not
# pip.conf), or pip where uv cannot be installed (said in one line) or
# ENTROPY_GATE_INSTALLER=pip asks for it.
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
# The host jobs' venv cache (the action's gate-venv-cache; never the check or verdict job):
# ENTROPY_GATE_VENV_KEY=KEY (scripts/venv-cache-key.sh) with ENTROPY_GATE_VENV_RESTORED=DIR,
# where actions/cache restored an entry under KEY, moves DIR into place instead of building,
# only when it is this action's venv for this interpreter: its key stamp is KEY, its
# interpreter is this one, `entropy-gate --version` is this action's and every file of its
# entropy_action package is the action's own; anything else is said in one line and the venv
# is built from the lock. With ENTROPY_GATE_VENV_SAVE=DIR instead (nothing was restored), the
# venv just built is linked into DIR/venv for actions/cache/save, before any PR code runs.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:?usage: install.sh VENV}
absolute() { case "$1" in /*|'') printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
venv=$(absolute "$venv")
for name in ENTROPY_GATE_VENV_FROM ENTROPY_GATE_VENV_PACK ENTROPY_GATE_VENV_CACHE \
  ENTROPY_GATE_VENV_RESTORED ENTROPY_GATE_VENV_SAVE; do
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

# uv_binary and uv_index (scripts/uv.sh, this action's own file: sourced before any PR code)
# shellcheck source=scripts/uv.sh
. "$here/scripts/uv.sh"

build() { # build DIR: the venv, from the hashed lock, then the package without dependencies
  local dir=$1 src uv got=false
  src=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/entropy-gate-src.XXXXXX")
  cp -R "$here/pyproject.toml" "$here/README.md" "$here/entropy_action" "$src/"
  if [ "${ENTROPY_GATE_INSTALLER:-uv}" = pip ]; then
    uv="ENTROPY_GATE_INSTALLER=pip"
  elif uv=$(uv_binary "$python" "$work/uv"); then
    got=true
  fi
  if $got; then
    # uv: no config file (--no-config: the working directory's parents are not read) and no
    # cache (--no-cache: nothing another job wrote), every wheel checked against the lock;
    # bytecode compiled as pip does (the gate runs with -B and writes none).
    local index=() flags=(--no-config --no-cache --quiet)
    mapfile -d '' index < <(uv_index)
    # The interpreter by its absolute path: a bare name could be a Python uv manages.
    "$uv" venv "${flags[@]}" --clear --no-python-downloads \
      --python "$("$python" -I -c 'import sys; print(sys.executable)')" "$dir"
    "$uv" pip install "${flags[@]}" --python "$dir/bin/python" --compile-bytecode \
      "${index[@]}" --require-hashes -r "$here/requirements/action.lock"
    "$uv" pip install "${flags[@]}" --python "$dir/bin/python" --compile-bytecode \
      --no-deps --no-build-isolation --no-index "$src"
    echo "entropy-gate: venv built with uv ($("$uv" --version)) from the hashed lock"
  else
    echo "entropy-gate: $uv: building the venv with pip (slower)"
    local pip=(-m pip --disable-pip-version-check --quiet)
    "$python" -I -m venv --clear "$dir"
    "$dir/bin/python" -I "${pip[@]}" install --require-hashes -r "$here/requirements/action.lock"
    "$dir/bin/python" -I "${pip[@]}" install --no-deps --no-build-isolation --no-index "$src"
  fi
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

cached_key="$venv/.entropy-gate-cache-key"  # inside the venv: the key it was saved under

not_ours() { # not_ours DIR: why the venv actions/cache restored at DIR is not this action's
  # venv for this interpreter (nothing when it is). Read before anything of it runs: its key
  # stamp, its interpreter's real path and every file of its gate package against the
  # action's own; only then is it run (isolated, from $work) for its --version.
  local dir=$1 why want got
  if [ "$(cat "$dir/.entropy-gate-cache-key" 2>/dev/null)" != "$ENTROPY_GATE_VENV_KEY" ]; then
    echo "was not saved under this key"; return
  fi
  why=$("$python" -I -B - "$dir" "$here/entropy_action" 2>/dev/null <<'PY'
import filecmp, glob, os, sys

venv, ours = (os.path.realpath(p) for p in sys.argv[1:])
base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
python = os.path.join(venv, "bin", "python")
lib = "python%d.%d" % sys.version_info[:2]
sites = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "entropy_action"))
if not os.path.exists(python):
    print("has no bin/python")
elif os.path.realpath(python) != base:
    print(f"runs {os.path.realpath(python)}, not this runner's {base}")
elif [os.path.relpath(s, venv) for s in sites] != [f"lib/{lib}/site-packages/entropy_action"]:
    print(f"has no entropy_action package for {lib} alone")
else:
    for top, folders, files in os.walk(sites[0]):
        folders[:] = [f for f in folders if f != "__pycache__"]
        for name in sorted(files):
            path = os.path.join(top, name)
            own = os.path.join(ours, os.path.relpath(path, sites[0]))
            if os.path.islink(path) or not os.path.isfile(own) or not filecmp.cmp(path, own, shallow=False):
                print(f"has {os.path.relpath(path, venv)}, not the action's own file")
                raise SystemExit
PY
) || why="could not be read"
  if [ -n "$why" ]; then echo "$why"; return; fi
  want="entropy-gate $(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$here/entropy_action/__init__.py")"
  got=$("$dir/bin/python" -I -B -m entropy_action --version 2>/dev/null | head -n 1) || got=""
  if [ "$got" != "$want" ]; then echo "says '${got:-nothing}' to --version, not '$want'"; fi
}

from_cache() { # from_cache DIR: the venv actions/cache restored at DIR, when it is ours
  local dir=$1 why
  why=$(not_ours "$dir" 2>&1) || why="could not be checked"
  if [ -n "$why" ]; then
    echo "::warning title=entropy-gate::the cached venv (${ENTROPY_GATE_VENV_KEY}) $(echo "$why" | head -n 1 | tr -d '\r'): not used, building it here"
    rm -rf "$dir"
    return 1
  fi
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  mv "$dir" "$venv"
  echo "entropy-gate: venv restored from the cache (${ENTROPY_GATE_VENV_KEY}), checked against this action and interpreter"
}

if [ -n "${ENTROPY_GATE_VENV_FROM:-}" ] && [ -n "${ENTROPY_GATE_VENV_DIGEST:-}" ] \
  && [ -z "${ENTROPY_GATE_VENV_CACHE:-}" ] \
  && unpack "$ENTROPY_GATE_VENV_FROM" "$ENTROPY_GATE_VENV_DIGEST"; then
  :
elif [ -z "${ENTROPY_GATE_VENV_CACHE:-}" ] && [ -n "${ENTROPY_GATE_VENV_RESTORED:-}" ] \
  && [ -n "${ENTROPY_GATE_VENV_KEY:-}" ] && from_cache "$ENTROPY_GATE_VENV_RESTORED"; then
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
  if [ -n "${ENTROPY_GATE_VENV_SAVE:-}" ] && [ -n "${ENTROPY_GATE_VENV_KEY:-}" ]; then
    # For actions/cache/save, before any PR code runs: hard links, not a copy (the folder is
    # removed once saved; the gate runs with -B and writes nothing into its venv).
    printf '%s\n' "$ENTROPY_GATE_VENV_KEY" > "$cached_key"
    rm -rf "$ENTROPY_GATE_VENV_SAVE"
    mkdir -p "$ENTROPY_GATE_VENV_SAVE"
    cp -al "$venv" "$ENTROPY_GATE_VENV_SAVE/venv" 2>/dev/null \
      || { rm -rf "$ENTROPY_GATE_VENV_SAVE/venv"; cp -a "$venv" "$ENTROPY_GATE_VENV_SAVE/venv"; }
    output "venv-save=true"
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
