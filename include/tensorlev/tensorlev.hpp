#pragma once
/// @file tensorlev.hpp
/// Everything single-node: levels, formats, tensors, packing, printing and
/// file IO. MPI lives in tensorlev/dist/ and is never included from here.

#include "codegen.hpp"
#include "codegen/print.hpp"
#include "fuse.hpp"
#include "numeric_plan.hpp"
#include "coordinate_list.hpp"
#include "error.hpp"
#include "io/io_error.hpp"
#include "format.hpp"
#include "formats.hpp"
#include "level_concepts.hpp"
#include "levels/compressed.hpp"
#include "levels/compressed_aos.hpp"
#include "levels/dense.hpp"
#include "levels/hashed.hpp"
#include "levels/offset.hpp"
#include "levels/range.hpp"
#include "levels/singleton.hpp"
#include "levels/singleton_aos.hpp"
#include "pack.hpp"
#include "print.hpp"
#include "tensor.hpp"
#include "version.hpp"
#include "view.hpp"
