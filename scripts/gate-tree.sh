#!/usr/bin/env bash
# gate-tree.sh DIR [FILE...]: one sha256 over entropy-gate's own venv DIR (every file's path
# and bytes, every symlink's path and target, never followed) and the FILEs given (the `$GATE`
# wrapper), printed on stdout. install.sh takes it right after the build, before any PR code
# ran in the job; verify-gate.sh takes it again after the project's install, which runs the
# PR's code: a venv that changed in between is one the gate did not build. The interpreter is
# the runner's own (ENTROPY_GATE_INSTALL_PYTHON, default python3), isolated (-I) and started
# from the folder being hashed, never the venv's.
set -euo pipefail
dir=${1:?usage: gate-tree.sh DIR [FILE...]}
shift
python=${ENTROPY_GATE_INSTALL_PYTHON:-python3}
cd "$dir"
"$python" -I -B - "$@" <<'PY'
import hashlib, os, sys

digest = hashlib.sha256()


def add(label, path):
    if os.path.islink(path):
        digest.update(b"L\0" + label.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(os.readlink(path).encode("utf-8", "surrogateescape") + b"\0")
        return
    with open(path, "rb") as handle:
        content = hashlib.sha256(handle.read()).hexdigest()
    digest.update(b"F\0" + label.encode("utf-8", "surrogateescape") + b"\0" + content.encode() + b"\0")


for top, folders, files in os.walk(".", followlinks=False):
    folders.sort()
    for name in sorted(files + [f for f in folders if os.path.islink(os.path.join(top, f))]):
        add(os.path.join(top, name), os.path.join(top, name))
for extra in sys.argv[1:]:
    add("+" + extra, extra)
print(digest.hexdigest())
PY
