# shellcheck shell=bash
# Shared by the build scripts (source it after install-deps.sh): sets
# `launcher` to the CMake arguments that compile through ccache, with its
# cache in ~/.cache/tensorlev/ccache (CCACHE_DIR overrides it), or to
# nothing when ccache is missing or TENSORLEV_CCACHE=0.
# A header-only library's objects depend on most of include/, so a commit
# that touches a core header misses nearly everywhere; what the cache saves
# is a rebuild of the same tree: CI run again on a commit already built on
# this machine (a second clone included: paths under the checkout are
# hashed relative to it, CCACHE_BASEDIR, and the build folders' own paths
# are not hashed, CCACHE_NOHASHDIR), or a build folder rebuilt from scratch.
# shellcheck disable=SC2034 # used by the scripts that source this file
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=)
if [ "${TENSORLEV_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/tensorlev/ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  # A miss costs the compile plus hashing the depfile's headers, without a
  # separate preprocessor run (depend mode: the build writes -MD depfiles);
  # about 2% over the bare compile for one sanitized unit here.
  export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
  # One CI run stores about 0.5 GB (compressed).
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
fi
