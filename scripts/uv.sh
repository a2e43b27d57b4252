# uv.sh: sourced by install.sh (entropy-gate's own venv) and install-project.sh (the project
# under test, with project-installer: uv). Defines, and runs nothing:
#   uv_binary PYTHON DIR  uv from requirements/uv.lock (pip --require-hashes, wheels only) into
#                         DIR with PYTHON, isolated (-I): prints uv's path, or why it could not
#                         be had (exit 1)
#   uv_index              uv's index flags from pip's variables, NUL-separated (uv reads no
#                         pip.conf and no PIP_*: PIP_INDEX_URL, PIP_EXTRA_INDEX_URL,
#                         PIP_FIND_LINKS and PIP_NO_INDEX carry over)
uv_lock="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/requirements/uv.lock"

uv_binary() {
  local python=$1 dir=$2 err="$2.log"
  if ! PIP_ROOT_USER_ACTION=ignore "$python" -I -m pip --disable-pip-version-check --quiet \
    install --require-hashes --no-deps --only-binary=:all: --target "$dir" \
    -r "$uv_lock" >"$err" 2>&1 || [ ! -x "$dir/bin/uv" ]; then
    echo "uv could not be installed from requirements/uv.lock ($(tail -n 1 "$err" 2>/dev/null))"
    return 1
  fi
  echo "$dir/bin/uv"
}

uv_index() {
  local link
  if [ -n "${PIP_INDEX_URL:-}" ]; then printf '%s\0' --index-url "$PIP_INDEX_URL"; fi
  for link in ${PIP_EXTRA_INDEX_URL:-}; do printf '%s\0' --extra-index-url "$link"; done
  for link in ${PIP_FIND_LINKS:-}; do printf '%s\0' --find-links "$link"; done
  case "${PIP_NO_INDEX:-}" in 1|true|yes|on) printf '%s\0' --no-index ;; esac
}
