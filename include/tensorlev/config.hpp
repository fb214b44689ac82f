#pragma once
/// @file config.hpp
/// Compiler and back-end annotations used across the library.
///
/// - `TENSORLEV_ALWAYS_INLINE`: for the few small functions on a generated
///   kernel's innermost path whose call overhead showed in profiles (an
///   appended output entry), so the compiler's inlining budget does not
///   decide a kernel's speed. `TENSORLEV_LAMBDA_ALWAYS_INLINE` (after a
///   lambda's parameter list) likewise for a lambda.
/// - `TENSORLEV_PREFETCH(p)`: a software prefetch of address p (host code).
/// - `TENSORLEV_HOST_DEVICE`: on what a kernel calls per component (level
///   functions, value access), so that the same code compiles for a device
///   back end. Under nvcc (and clang CUDA, HIP) it is `__host__ __device__`;
///   elsewhere empty. Define it yourself before including tensorlev to
///   override.

#if defined(__GNUC__) || defined(__clang__)
#define TENSORLEV_ALWAYS_INLINE [[gnu::always_inline]] inline
#define TENSORLEV_LAMBDA_ALWAYS_INLINE __attribute__((always_inline))
#else
#define TENSORLEV_ALWAYS_INLINE inline
#define TENSORLEV_LAMBDA_ALWAYS_INLINE
#endif

/// `TENSORLEV_PREFETCH(p)`: asks for the cache line at p (a read, kept in
/// every cache level); nothing where the compiler has no builtin for it.
#if defined(__GNUC__) || defined(__clang__)
#define TENSORLEV_PREFETCH(p) __builtin_prefetch(p)
#else
#define TENSORLEV_PREFETCH(p) ((void)(p))
#endif

/// `TENSORLEV_ROLLED_LOOP`: before a loop of a constant trip count that
/// should be vectorized as a loop: keeps GCC from unrolling it completely
/// before its loop vectorizer runs. Unrolled first, a 16-wide workspace
/// becomes 16 scalars that GCC 12's SLP pass does not put back together
/// (CSF MTTKRP on Zen 4: 16 scalar multiplications per entry, 2.2x slower;
/// bench/README.md, "Rolled loops"). Nothing with other compilers.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define TENSORLEV_ROLLED_LOOP _Pragma("GCC unroll 1")
#else
#define TENSORLEV_ROLLED_LOOP
#endif

/// `TENSORLEV_LANE_VECTORS`: 1 where the block workspace (SELL-C's and
/// grouped rows' sums of C rows, kernel::blocked) may be one value of a
/// GCC/clang vector type, kept in a register across the slot loop; 0
/// elsewhere (an array, which GCC 12 keeps in memory, a store per slot).
/// Define it to 0 for a compiler whose GNU vector extension falls short.
#ifndef TENSORLEV_LANE_VECTORS
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define TENSORLEV_LANE_VECTORS 1
#else
#define TENSORLEV_LANE_VECTORS 0
#endif
#endif

/// `TENSORLEV_BLOCK_LOCALS`: 1 where the loop right inside a block whose
/// workspace is one vector (TENSORLEV_LANE_VECTORS; SELL-C's slots,
/// grouped rows' columns) keeps the vector and its position in locals,
/// stored back after the loop (kernel::lane_block_loop). On by default
/// with clang, off with GCC: clang 14 leaves that loop out of line, where
/// through the references the vector's stores (may_alias) may alias the
/// position and the operands' array pointers, so it loaded and stored the
/// sums, the position and the pointers on every slot (SELL-8 1.3-1.7x
/// slower than a hand loop); GCC inlines the loop into the block, where the
/// vector is a local already, and with the locals it left the loop out of
/// line and ran cage10's SELL-8 15% slower (bench/README.md, "SELL-8 under
/// clang"). Define it to 0 or 1 before including tensorlev to choose.
#ifndef TENSORLEV_BLOCK_LOCALS
#if defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define TENSORLEV_BLOCK_LOCALS 1
#else
#define TENSORLEV_BLOCK_LOCALS 0
#endif
#endif

/// `TENSORLEV_HOIST_SPECIALIZE`: 1 where a hoisted sub-nest (CSF MTTKRP's,
/// kernel::hoisted) is specialized for registers: the first entry a fibre
/// reaches stores into the workspace (no zeroing per fibre), and where the
/// rank is 8, 16 or 32 the last loops run with it a compile-time constant,
/// summing the output's row over a slice's fibres (kernel::fibres). On by
/// default with GCC, off with clang: clang 14 leaves that sub-nest's
/// per-entry calls out of line, and there the specialized loops are 1.1x
/// (first entry) to 1.25x (widths) slower than the general ones
/// (bench/README.md, "MTTKRP: constant widths and the buffered row").
/// Define it to 0 or 1 before including tensorlev to choose; files of one
/// program may differ in it (the statements and kernels of each setting
/// are distinct types: TENSORLEV_KERNEL_ABI below).
#ifndef TENSORLEV_HOIST_SPECIALIZE
#if defined(__GNUC__) && !defined(__clang__)
#define TENSORLEV_HOIST_SPECIALIZE 1
#else
#define TENSORLEV_HOIST_SPECIALIZE 0
#endif
#endif

// The statement (codegen/output/common.hpp) and kernel (codegen/kernel.hpp)
// templates live in an inline namespace named after the settings that
// change their plans or functions' bodies (TENSORLEV_HOIST_SPECIALIZE,
// TENSORLEV_LANE_VECTORS, TENSORLEV_BLOCK_LOCALS): translation units built with different settings
// (a GCC one and a clang one, a .cu file and a .cpp file, or a -D)
// instantiate differently named types, so the linker never mixes one
// setting's definitions with the other's (the specialized hoisted sub-nest
// leaves t unzeroed for loops that store the first entry; COO hoists only
// where specialized; the block workspace is a vector or an array).
#if TENSORLEV_HOIST_SPECIALIZE && TENSORLEV_LANE_VECTORS && TENSORLEV_BLOCK_LOCALS
#define TENSORLEV_KERNEL_ABI hoist_specialized_lanes_locals
#elif TENSORLEV_HOIST_SPECIALIZE && TENSORLEV_LANE_VECTORS
#define TENSORLEV_KERNEL_ABI hoist_specialized_lanes
#elif TENSORLEV_HOIST_SPECIALIZE
#define TENSORLEV_KERNEL_ABI hoist_specialized
#elif TENSORLEV_LANE_VECTORS && TENSORLEV_BLOCK_LOCALS
#define TENSORLEV_KERNEL_ABI hoist_general_lanes_locals
#elif TENSORLEV_LANE_VECTORS
#define TENSORLEV_KERNEL_ABI hoist_general_lanes
#else
#define TENSORLEV_KERNEL_ABI hoist_general
#endif

#ifndef TENSORLEV_HOST_DEVICE
#if defined(__CUDACC__) || defined(__HIPCC__)
#define TENSORLEV_HOST_DEVICE __host__ __device__
#else
#define TENSORLEV_HOST_DEVICE
#endif
#endif

/// Before a TENSORLEV_HOST_DEVICE member of a template over a storage
/// policy whose host-only instantiations (owning storage: reference-counted
/// vectors) are never called on a device: nvcc then does not warn that the
/// host/device function calls a host function (the pragma holds for
/// templated functions only). Empty for other compilers.
#if defined(__CUDACC__) && !defined(__clang__)
#define TENSORLEV_HD_ANY_STORAGE _Pragma("nv_exec_check_disable")
#else
#define TENSORLEV_HD_ANY_STORAGE
#endif
