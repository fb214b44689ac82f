#pragma once
/// @file version.hpp
/// The library's version (also CMake's project version and the pkg-config
/// file's, which are read from here):
///
///     #if TENSORLEV_VERSION >= 100   // 0.1.0 or newer
///
/// TENSORLEV_VERSION is major * 10000 + minor * 100 + patch.

#define TENSORLEV_VERSION_MAJOR 0
#define TENSORLEV_VERSION_MINOR 1
#define TENSORLEV_VERSION_PATCH 0
#define TENSORLEV_VERSION (TENSORLEV_VERSION_MAJOR * 10000 + TENSORLEV_VERSION_MINOR * 100 + TENSORLEV_VERSION_PATCH)
#define TENSORLEV_VERSION_STR_(x) #x
#define TENSORLEV_VERSION_STR(x) TENSORLEV_VERSION_STR_(x)
#define TENSORLEV_VERSION_STRING                                                                  \
  TENSORLEV_VERSION_STR(TENSORLEV_VERSION_MAJOR)                                                  \
  "." TENSORLEV_VERSION_STR(TENSORLEV_VERSION_MINOR) "." TENSORLEV_VERSION_STR(TENSORLEV_VERSION_PATCH)
