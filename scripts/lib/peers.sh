#!/usr/bin/env bash
# Installs the benchmark clients convoy is compared with (its peers: AIPerf and GuideLLM, from
# PyPI, pinned) each into its own virtual environment in the cache folder (scripts/lib/cache.sh),
# never into the checkout. Idempotent: a second call installs nothing (a stamp holds the pin).
#
#   scripts/lib/peers.sh install NAME    install NAME (aiperf, guidellm) once; prints its venv
#   scripts/lib/peers.sh versions        prints "NAME VERSION" per pinned peer
#
# Exit 2 when PyPI cannot be reached (stderr says "PyPI cannot be reached") or pip fails (the
# venv's pip.log says why). Both pins install on Debian 12's python3.11 (each needs >= 3.10).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cache.sh
source "$here/cache.sh"

peer_version() {  # the pin of a peer
  case $1 in
    aiperf) echo 0.13.0 ;;
    guidellm) echo 0.8.1 ;;
    *)
      echo "scripts/lib/peers.sh: unknown peer '$1' (aiperf, guidellm)" >&2
      exit 2
      ;;
  esac
}

# The lock file of a peer: every package of its venv, pinned (pip freeze of a first install), so
# an install resolves nothing (pip's resolver took minutes here) and gets the same packages.
peer_lock() { echo "$here/peers-$1-$2.txt"; }

peer_install() {  # peer_install NAME: prints the venv folder
  local name=$1 version dir lock want
  version=$(peer_version "$name")
  dir="$(convoy_cache_dir)/$name-$version"
  lock=$(peer_lock "$name" "$version")
  want="$name==$version"
  [[ -f $lock ]] && want="$want $(md5sum <"$lock" | cut -d' ' -f1)"
  if [[ -f $dir/.installed && $(cat "$dir/.installed") == "$want" ]]; then
    echo "$dir"
    return 0
  fi
  local index=${PIP_INDEX_URL:-https://pypi.org/simple}
  if ! curl -sf -o /dev/null --max-time 15 "${index%/}/$name/"; then
    echo "scripts/lib/peers.sh: PyPI cannot be reached (${index%/}/$name/); $name $version is not installed" >&2
    exit 2
  fi
  echo "scripts/lib/peers.sh: installing $name $version into $dir" >&2
  rm -rf "$dir"
  if ! "$(convoy_python)" -m venv "$dir" >/dev/null 2>&1; then
    echo "scripts/lib/peers.sh: python3 -m venv failed (apt-get install python3-venv)" >&2
    exit 2
  fi
  # --no-compile: byte-compiling transformers alone takes minutes on 2 cores; Python compiles
  # what it imports on first use.
  local args=("$name==$version")
  [[ -f $lock ]] && args=(--no-deps -r "$lock")
  if ! "$dir/bin/pip" install --quiet --disable-pip-version-check --no-compile "${args[@]}" \
      >"$dir/pip.log" 2>&1; then
    echo "scripts/lib/peers.sh: pip could not install $name==$version (see $dir/pip.log)" >&2
    exit 2
  fi
  echo "$want" >"$dir/.installed"
  echo "$dir"
}

case ${1:-} in
  install)
    [[ $# == 2 ]] || { echo "usage: scripts/lib/peers.sh install NAME" >&2; exit 2; }
    peer_install "$2"
    ;;
  versions)
    for p in aiperf guidellm; do echo "$p $(peer_version "$p")"; done
    ;;
  *)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
