#!/usr/bin/env bash
# venv-cache-key.sh: the actions/cache key of entropy-gate's own venv on this runner, printed
# as `key=KEY` (and written to $GITHUB_OUTPUT). Only the action's gate-venv-cache (the
# reusable workflow's host jobs) asks for it; install.sh checks a restored venv against it.
# The key names what the venv is a function of, and nothing the PR's tree holds:
# - the runner: RUNNER_OS, its image (ImageOS, ImageVersion on GitHub's runners), the
#   machine and /etc/os-release;
# - the interpreter the venv is made from (ENTROPY_GATE_INSTALL_PYTHON, default python3): its
#   exact version and the real path of its base executable (a venv's python links to it);
# - this action's own files: requirements/action.lock, requirements/uv.lock, pyproject.toml,
#   scripts/install.sh and scripts/uv.sh, and every file of entropy_action/ (its version and code).
# The interpreter runs isolated (-I) from an empty folder of its own: the working directory
# is the PR's checkout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${ENTROPY_GATE_INSTALL_PYTHON:-python3}
work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/entropy-gate-key.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
key=$("$python" -I -B - "$here" <<'PY'
import hashlib, os, pathlib, platform, sys

root = pathlib.Path(sys.argv[1])
digest = hashlib.sha256()
for name in ("RUNNER_OS", "ImageOS", "ImageVersion"):
    digest.update(f"{name}={os.environ.get(name, '')}\0".encode())
try:
    digest.update(pathlib.Path("/etc/os-release").read_bytes())
except OSError:
    pass
base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
digest.update(f"{platform.machine()}\0{base}\0{sys.version}\0".encode())
files = [root / "requirements" / name for name in ("action.lock", "uv.lock")]
files += [root / "pyproject.toml", root / "scripts" / "install.sh", root / "scripts" / "uv.sh"]
package = root / "entropy_action"
files += sorted(
    p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
)
for path in files:
    digest.update(str(path.relative_to(root)).encode() + b"\0")
    digest.update(hashlib.sha256(path.read_bytes()).digest())
runner = (os.environ.get("RUNNER_OS") or platform.system()).lower()
image = os.environ.get("ImageOS", "")
version = "%d.%d.%d" % sys.version_info[:3]
print("-".join(filter(None, ("entropy-gate-venv", runner, image, f"py{version}", digest.hexdigest()))))
PY
)
echo "key=$key"
if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "key=$key" >> "$GITHUB_OUTPUT"; fi
