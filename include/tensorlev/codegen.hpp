#pragma once
/// @file codegen.hpp
/// Index notation compiled to loops at compile time (seed 003, section 4):
/// include this to assign expressions to tensor accesses.
///
///     using namespace tensorlev::indices;
///     tensor<double, dense_vector> y({A.dimension(0)});
///     y(i) = A(i, j) * x(j);
///
/// `loop_nest` (the loops a statement compiles to, printed as C) is in
/// codegen/print.hpp, which tensorlev.hpp includes: a translation unit
/// that only computes does not parse the printer (3-8% of one SpMV's
/// compile time with g++ -O2; bench/README.md, compile time).

#include "codegen/describe.hpp"
#include "codegen/device_form.hpp"
#include "codegen/kernel.hpp"
#include "codegen/plan.hpp"
#include "notation.hpp"
