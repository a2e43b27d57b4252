#!/usr/bin/env bash
# demo-repo.sh DIR PATCH: the bundled invoice example as a git repository in DIR (base commit
# on main, then PATCH from entropy_action/gate/demo_data/patches as the head), for the self-test
# workflow. Prints `base=<sha>` and `head=<sha>` (step-output lines).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:?usage: demo-repo.sh DIR PATCH}
patch=${2:?usage: demo-repo.sh DIR PATCH}
data="$here/entropy_action/gate/demo_data"
[ -d "$data/patches/$patch" ] || { echo "no demo patch named $patch" >&2; exit 2; }
clock=$(( $(date +%s) / 86400 * 86400 ))
fill() { sed -i -e "s|{clock_unix}|$clock|" -e "s|{temp_root}|$dir.tmp|" "$dir/entropy.yaml"; }
rm -rf "$dir"
cp -R "$data/base" "$dir"
fill
g() { git -C "$dir" -c user.name=demo -c user.email=demo@example.invalid "$@"; }
g init -q -b main
g add -A
g commit -qm "invoice example with its pins"
echo "base=$(g rev-parse HEAD)"
cp -R "$data/patches/$patch/." "$dir/"
fill
g add -A
g commit -qm "patch: $patch"
echo "head=$(g rev-parse HEAD)"
