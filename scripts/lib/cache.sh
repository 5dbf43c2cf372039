# shellcheck shell=bash
# Where the scripts keep what they install from PyPI and npm (virtual environments, tokenizer
# files): one cache folder outside the checkout, so a fresh clone (and a second CI run) installs
# nothing it already has. Source this file; it defines convoy_cache_dir and convoy_python.
#   CONVOY_CACHE_DIR   overrides the folder (default: $XDG_CACHE_HOME/convoy or ~/.cache/convoy)

convoy_cache_dir() {
  local dir=${CONVOY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/convoy}
  mkdir -p "$dir"
  echo "$dir"
}

# Debian's python3 (not a pyenv or conda one that may be on PATH for a person but not in CI):
# every virtual environment the scripts make starts from it (scripts/setup installs python3-venv).
convoy_python() {
  if [[ -x /usr/bin/python3 ]]; then
    echo /usr/bin/python3
  else
    command -v python3
  fi
}
