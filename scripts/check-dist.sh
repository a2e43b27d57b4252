#!/usr/bin/env bash
# check-dist.sh DIST: the built sdist and wheel in DIST as a user gets them. `twine check
# --strict` (metadata, the long description renders), then the wheel alone in a fresh venv in
# a temporary folder, with no source tree beside it (a file the wheel lacks fails here, not on
# a user's machine): `entropy-gate --version` is the wheel's version, the demo matches every
# row, and a docs-only change in the demo's repository gates to merge_candidate.
# PYTHON (default python3) has twine and makes the venv; the wheel's dependencies come from
# pip's configured index. .ci/run and the release workflow run it.
set -euo pipefail
dist=$(cd "${1:?usage: check-dist.sh DIST}" && pwd)
python=${PYTHON:-python3}
case $python in */*) python=$(cd "$(dirname "$python")" && pwd)/${python##*/} ;; esac
shopt -s nullglob
wheels=("$dist"/entropy_gate-*-py3-none-any.whl)
sdists=("$dist"/entropy_gate-*.tar.gz)
if [ "${#wheels[@]}" -ne 1 ] || [ "${#sdists[@]}" -ne 1 ]; then
  echo "check-dist: $dist must hold one wheel and one sdist of entropy-gate" >&2
  exit 2
fi
wheel=${wheels[0]}
version=${wheel##*/entropy_gate-}
version=${version%%-py3-none-any.whl}
if [ "${sdists[0]##*/}" != "entropy_gate-$version.tar.gz" ]; then
  echo "check-dist: the sdist ${sdists[0]##*/} is not version $version" >&2
  exit 2
fi
"$python" -m twine check --strict "$wheel" "${sdists[0]}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/entropy-gate-dist.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"  # no source tree here: the wheel's files are all there is
"$python" -m venv venv
venv/bin/python -m pip install --quiet --disable-pip-version-check "$wheel"
gate=$scratch/venv/bin/entropy-gate
said=$("$gate" --version)
if [ "$said" != "entropy-gate $version" ]; then
  echo "check-dist: the installed wheel says '$said', its file name $version" >&2
  exit 1
fi
echo "check-dist: $said installed from ${wheel##*/} (${SECONDS} s)"
start=$SECONDS
"$gate" demo --keep "$scratch/demo"
echo "check-dist: the demo from the wheel took $((SECONDS - start)) s"
repo=$scratch/demo/honest-fix
echo "One more line of docs." >> "$repo/README.md"
(cd "$repo" && "$gate" gate --base-ref HEAD --out "$scratch/docs-gate") > "$scratch/gate.log" || {
  cat "$scratch/gate.log"
  echo "check-dist: a docs-only change did not gate to merge_candidate" >&2
  exit 1
}
grep -q "^entropy-gate verdict: merge_candidate" "$scratch/gate.log"
echo "check-dist: a docs-only change in the demo's repository: merge_candidate (${SECONDS} s in all)"
