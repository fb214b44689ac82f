#pragma once
/// @file dist.hpp
/// Distribution over MPI (link `tensorlev::dist`): machine grids with
/// counted communication, tensor distribution notation, distributed tensors
/// and the distributed kernels.
#include "dist/algorithms.hpp"
#include "dist/box.hpp"
#include "dist/compute.hpp"
#include "dist/einsum.hpp"
#include "dist/einsum_leaf.hpp"
#include "dist/einsum_plan.hpp"
#include "dist/einsum_into.hpp"
#include "dist/einsum_run.hpp"
#include "dist/fetch_plan.hpp"
#include "dist/grid.hpp"
#include "dist/io.hpp"
#include "dist/kernels.hpp"
#include "dist/notation.hpp"
#include "dist/redistribute.hpp"
#include "dist/schedule.hpp"
#include "dist/tensor.hpp"
