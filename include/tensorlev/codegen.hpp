#pragma once
/// @file codegen.hpp
/// Index notation compiled to loops at compile time (seed 003, section 4):
/// include this to assign expressions to tensor accesses.
///
///     using namespace tensorlev::indices;
///     tensor<double, dense_vector> y({A.dimension(0)});
///     y(i) = A(i, j) * x(j);

#include "codegen/describe.hpp"
#include "codegen/device_form.hpp"
#include "codegen/kernel.hpp"
#include "codegen/plan.hpp"
#include "codegen/print.hpp"
#include "notation.hpp"
