# shellcheck shell=bash
# Shared by the setup scripts (source it): Debian package helpers that work
# as root or through sudo on a fresh Debian 12 machine.
#   apt_install PKG...      installs the packages that are not installed yet
#                           (nothing with TENSORLEV_NO_APT=1)
#   apt_ensure_source PKG   makes `apt-get source PKG` work, adding Debian's
#                           deb-src entry (bookworm, main) when none is set
#   apt_ensure_non_free PKG makes PKG installable when it is in Debian's
#                           non-free component (MKL), adding that component
#                           (bookworm) when no source lists it
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

apt_install() {
  # TENSORLEV_NO_APT=1: a machine without a package registry (the lent GPU
  # machines): install nothing and let the build say what is missing.
  [ "${TENSORLEV_NO_APT:-0}" = 1 ] && return 0
  local need=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  if ((${#need[@]})); then
    $SUDO apt-get update -q >&2
    $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >&2
  fi
}

apt_ensure_source() {
  if ! apt-cache showsrc "$1" 2>/dev/null | grep -q "^Package: $1"; then
    echo "Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $SUDO tee /etc/apt/sources.list.d/tensorlev-deb-src.sources >/dev/null
    $SUDO apt-get update -q >&2
  fi
}

apt_ensure_non_free() {
  [ "${TENSORLEV_NO_APT:-0}" = 1 ] && return 0
  if ! apt-cache policy "$1" 2>/dev/null | grep -Eq 'Candidate: [^(]'; then
    echo "Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $SUDO tee /etc/apt/sources.list.d/tensorlev-non-free.sources >/dev/null
    $SUDO apt-get update -q >&2
  fi
}
