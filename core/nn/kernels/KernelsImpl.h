// The training kernels, written once for every instruction-set path. A path's translation unit defines
// SGDSCOPE_KERNEL_NS (its namespace), includes its vector type as `Vec` with the tile sizes below, then this
// file; everything here then lives in that namespace, so no two paths share a symbol (the linker could
// otherwise keep an AVX-512 copy of an inline function for a caller on any CPU).
//
// The order of operations, which every path follows and which alone decides the bits:
// - linearForward: z[i][j] = bias[j], then z[i][j] = fma(a[i][k], w[j][k], z[i][j]) for k = 0, 1, ... in order;
// - inputGradient: p[i][j] = 0, then p[i][j] = fma(d[i][k], w[k][j], p[i][j]) for k in order;
// - weightGradient: every tree leaf is 0, then fma(d[s][o], a[s][i], .) for its samples s in order; tree
//   nodes are left + right, in the program's order;
// - activations and derivatives: per element, portable::tanh etc. and one multiplication.
// Vectors only ever run across outputs (j, or the gradient's i), never across the summed index, so the width
// of a vector changes nothing; k-blocking stores and reloads the running sum exactly. Only the register tile
// (Vec, gemmRows, gemmVectors, treeRows, treeVectors) and the tails differ between paths (BLIS's split).
//
// Expected before inclusion: SGDSCOPE_KERNEL_NS (the path's namespace), SGDSCOPE_KERNEL_NAME (its name) and
// SGDSCOPE_KERNEL_TABLE (the table's name in KernelTable.h), and in sgdscope::kernels::SGDSCOPE_KERNEL_NS the
// vector type Vec and the tile constants gemmRows, gemmVectors, treeRows, treeVectors, kBlockFloats.
#include "core/common/PortableMath.h"
#include "core/nn/kernels/KernelTable.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS {

namespace {

constexpr int lanes = Vec::width;
constexpr int gemmWidth = gemmVectors * lanes; // columns of a forward / input-gradient tile
constexpr int treeWidth = treeVectors * lanes; // columns of a weight-gradient tile
// k-block of the forward and input-gradient products: the packed panel (kBlock x gemmWidth) stays in L1
constexpr int kBlock = kBlockFloats / gemmWidth > 0 ? kBlockFloats / gemmWidth : 1;

constexpr int minOf(int a, int b)
{
    return a < b ? a : b;
}
constexpr int vectorsFor(int columns)
{
    return (columns + lanes - 1) / lanes;
}

// --- forward and input-gradient tiles ------------------------------------------------------------------------

/// C rows [0, Rows) x columns [0, valid) of one tile: C = init + A * B over kLength, with A read in place
/// (A(r, kk) = a[r * lda + kk]) and B packed (row kk of the panel at b + kk * gemmWidth).
/// init: the running sum already in C (resume), else bias (a row vector: bias[j] for column j), else rowBias
/// (a column: rowBias[r] for row r, a convolution's), else 0.
template<int Rows, int Vectors>
void gemmTile(int kLength, const float* a, std::ptrdiff_t lda, const float* b, float* c, std::ptrdiff_t ldc, int valid,
    const float* bias, const float* rowBias, bool resume)
{
    Vec acc[Rows][Vectors];
    if (resume) {
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
            for (int j = 0; j < Vectors; ++j)
                acc[r][j] = Vec::loadPartial(c + r * ldc + j * lanes, valid - j * lanes);
        }
    } else if (rowBias) {
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r) {
            const Vec init = Vec::broadcast(rowBias + r);
#pragma GCC unroll 16
            for (int j = 0; j < Vectors; ++j)
                acc[r][j] = init;
        }
    } else {
        Vec init[Vectors];
#pragma GCC unroll 16
        for (int j = 0; j < Vectors; ++j)
            init[j] = bias ? Vec::loadPartial(bias + j * lanes, valid - j * lanes) : Vec::zero();
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
            for (int j = 0; j < Vectors; ++j)
                acc[r][j] = init[j];
        }
    }
    const float* rows[Rows];
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r)
        rows[r] = a + r * lda;
    for (int kk = 0; kk < kLength; ++kk) {
        Vec bv[Vectors];
#pragma GCC unroll 8
        for (int j = 0; j < Vectors; ++j)
            bv[j] = Vec::load(b + kk * gemmWidth + j * lanes);
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r) {
            const Vec av = Vec::broadcast(rows[r] + kk);
#pragma GCC unroll 8
            for (int j = 0; j < Vectors; ++j)
                acc[r][j] = Vec::fma(av, bv[j], acc[r][j]);
        }
    }
#pragma GCC unroll 16
    for (int j = 0; j < Vectors; ++j) {
        const int left = valid - j * lanes;
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r)
            acc[r][j].storePartial(c + r * ldc + j * lanes, left);
    }
}

using GemmTileFunction = void (*)(
    int, const float*, std::ptrdiff_t, const float*, float*, std::ptrdiff_t, int, const float*, const float*, bool);

template<int Vectors>
GemmTileFunction gemmTileFor(int rows)
{
    switch (rows) {
#define SGDSCOPE_GEMM_CASE(R)                                                                                          \
    case R:                                                                                                            \
        if constexpr (R <= gemmRows)                                                                                   \
            return &gemmTile<R, Vectors>;                                                                              \
        break;
        SGDSCOPE_GEMM_CASE(1)
        SGDSCOPE_GEMM_CASE(2)
        SGDSCOPE_GEMM_CASE(3)
        SGDSCOPE_GEMM_CASE(4)
        SGDSCOPE_GEMM_CASE(5)
        SGDSCOPE_GEMM_CASE(6)
        SGDSCOPE_GEMM_CASE(7)
        SGDSCOPE_GEMM_CASE(8)
#undef SGDSCOPE_GEMM_CASE
    default:
        break;
    }
    return nullptr;
}

GemmTileFunction gemmTileFor(int rows, int vectors)
{
    static_assert(gemmRows <= 8 && gemmVectors <= 4);
    switch (vectors) {
    case 1:
        return gemmTileFor<1>(rows);
    case 2:
        if constexpr (gemmVectors >= 2)
            return gemmTileFor<2>(rows);
        break;
    case 3:
        if constexpr (gemmVectors >= 3)
            return gemmTileFor<3>(rows);
        break;
    case 4:
        if constexpr (gemmVectors >= 4)
            return gemmTileFor<4>(rows);
        break;
    default:
        break;
    }
    return nullptr;
}

std::size_t packFloats(int k, int n)
{
    const int strips = (n + gemmWidth - 1) / gemmWidth;
    return static_cast<std::size_t>(minOf(k, kBlock)) * static_cast<std::size_t>(strips) * gemmWidth;
}

/// C (m x n) = init + A (m x k) * B (k x n), B given by `packStrip` one k-block and strip at a time. A panel's
/// columns beyond the strip's valid ones are not written: their lanes compute values that are never stored.
template<typename PackStrip>
void gemm(int m, int n, int k, const float* a, std::ptrdiff_t lda, float* c, std::ptrdiff_t ldc, const float* bias,
    float* pack, PackStrip packStrip)
{
    const int strips = (n + gemmWidth - 1) / gemmWidth;
    const std::ptrdiff_t panelFloats = static_cast<std::ptrdiff_t>(minOf(k, kBlock)) * gemmWidth;
    for (int k0 = 0; k0 < k; k0 += kBlock) {
        const int kLength = minOf(kBlock, k - k0);
        for (int s = 0; s < strips; ++s) {
            const int j0 = s * gemmWidth;
            float* panel = pack + s * panelFloats;
            packStrip(panel, k0, kLength, j0, minOf(gemmWidth, n - j0));
        }
        for (int s = 0; s < strips; ++s) {
            const int j0 = s * gemmWidth;
            const int valid = minOf(gemmWidth, n - j0);
            const float* panel = pack + s * panelFloats;
            const int vectors = vectorsFor(valid);
            const GemmTileFunction full = gemmTileFor(gemmRows, vectors);
            for (int i0 = 0; i0 < m; i0 += gemmRows) {
                const int rows = minOf(gemmRows, m - i0);
                const GemmTileFunction tile = rows == gemmRows ? full : gemmTileFor(rows, vectors);
                tile(kLength, a + i0 * lda + k0, lda, panel, c + i0 * ldc + j0, ldc, valid, bias ? bias + j0 : nullptr,
                    nullptr, k0 > 0);
            }
        }
    }
}

/// Products whose outputs fit one vector and whose inputs are few (the seed example's 1-5-1 layers): B's rows
/// stay in registers and each row of C is one vector, one chain per lane; the same chains in the same order
/// as the tiles, without their packing and per-tile cost.
constexpr int narrowMostK = 8;

template<int K>
void narrowProduct(int m, int n, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t bk,
    std::ptrdiff_t bj, const float* bias, float* c, std::ptrdiff_t ldc)
{
    alignas(64) float row[lanes];
    Vec bv[K];
    for (int kk = 0; kk < K; ++kk) {
        for (int j = 0; j < lanes; ++j)
            row[j] = j < n ? b[kk * bk + j * bj] : 0.0f;
        bv[kk] = Vec::load(row);
    }
    const Vec init = bias ? Vec::loadPartial(bias, n) : Vec::zero();
    for (int i = 0; i < m; ++i) {
        const float* ai = a + i * lda;
        Vec acc = init;
#pragma GCC unroll 8
        for (int kk = 0; kk < K; ++kk)
            acc = Vec::fma(Vec::broadcast(ai + kk), bv[kk], acc);
        acc.storePartial(c + i * ldc, n);
    }
}

/// C = init + A B by narrowProduct when n <= lanes and k <= narrowMostK; false otherwise.
bool narrow(int m, int n, int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t bk,
    std::ptrdiff_t bj, const float* bias, float* c, std::ptrdiff_t ldc)
{
    if (n > lanes || k > narrowMostK)
        return false;
    switch (k) {
#define SGDSCOPE_NARROW_CASE(K)                                                                                        \
    case K:                                                                                                            \
        narrowProduct<K>(m, n, a, lda, b, bk, bj, bias, c, ldc);                                                       \
        return true;
        SGDSCOPE_NARROW_CASE(1)
        SGDSCOPE_NARROW_CASE(2)
        SGDSCOPE_NARROW_CASE(3)
        SGDSCOPE_NARROW_CASE(4)
        SGDSCOPE_NARROW_CASE(5)
        SGDSCOPE_NARROW_CASE(6)
        SGDSCOPE_NARROW_CASE(7)
        SGDSCOPE_NARROW_CASE(8)
#undef SGDSCOPE_NARROW_CASE
    default:
        return false;
    }
}

void linearForward(const LinearForwardArgs& x)
{
    if (narrow(x.m, x.n, x.k, x.a, x.lda, x.w, 1, x.k, x.bias, x.z, x.ldz)) // B(kk, j) = w[j][kk]
        return;
    // B(kk, j) = w[j][kk]: the weights transposed into the panel
    const float* w = x.w;
    const int k = x.k;
    gemm(x.m, x.n, x.k, x.a, x.lda, x.z, x.ldz, x.bias, x.pack,
        [w, k](float* panel, int k0, int kLength, int j0, int valid) {
            for (int jj = 0; jj < valid; ++jj) {
                float* column = panel + jj;
                const float* source = w + static_cast<std::ptrdiff_t>(j0 + jj) * k + k0;
                for (int kk = 0; kk < kLength; ++kk)
                    column[kk * gemmWidth] = source[kk];
            }
        });
}

void inputGradient(const InputGradientArgs& x)
{
    if (narrow(x.m, x.n, x.k, x.d, x.ldd, x.w, x.n, 1, nullptr, x.p, x.ldp)) // B(kk, j) = w[kk][j]
        return;
    // B(kk, j) = w[kk][j]: rows of the weights copied into the panel
    const float* w = x.w;
    const int n = x.n;
    gemm(x.m, x.n, x.k, x.d, x.ldd, x.p, x.ldp, nullptr, x.pack,
        [w, n](float* panel, int k0, int kLength, int j0, int valid) {
            for (int kk = 0; kk < kLength; ++kk) {
                const float* source = w + static_cast<std::ptrdiff_t>(k0 + kk) * n + j0;
                float* row = panel + kk * gemmWidth;
                for (int jj = 0; jj < valid; ++jj)
                    row[jj] = source[jj];
            }
        });
}

// --- weight-gradient tiles with the reduction tree ---------------------------------------------------------------

constexpr int slotStride = treeRows * treeWidth; // floats of one stack entry of a tile

/// Runs the tree program on one tile: rows o [0, Rows) (A(r, s) = d[s * ldd + r]) x columns [0, Vectors * lanes)
/// (B(s, col) = a[s * lda + col]); the stack entries live in `slots` (entry e, row r at e * slotStride +
/// r * treeWidth).
template<int Rows, int Vectors>
void treeTile(
    const TreeProgram& program, const float* d, std::ptrdiff_t ldd, const float* a, std::ptrdiff_t lda, float* slots)
{
    float* top = slots + program.stackIn * slotStride; // the next free stack entry
    for (int t = 0; t < program.stepCount; ++t) {
        const TreeStep& step = program.steps[t];
        Vec acc[Rows][Vectors];
        if (step.resume) {
            top -= slotStride;
#pragma GCC unroll 16
            for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
                for (int j = 0; j < Vectors; ++j)
                    acc[r][j] = Vec::load(top + r * treeWidth + j * lanes);
            }
        } else {
#pragma GCC unroll 16
            for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
                for (int j = 0; j < Vectors; ++j)
                    acc[r][j] = Vec::zero();
            }
        }
        if (step.leaves > 1) {
            // A whole subtree of single-sample chunks: the products of pairs of leaves added in registers, then
            // the levels above, each node left + right, in the scratch entries above the stack.
            float* scratch = slots + program.depth * slotStride;
            const float* dRow = d + static_cast<std::ptrdiff_t>(step.begin) * ldd;
            const float* aRow = a + static_cast<std::ptrdiff_t>(step.begin) * lda;
            for (int pair = 0; pair < step.leaves / 2; ++pair, dRow += 2 * ldd, aRow += 2 * lda) {
                float* node = scratch + pair * slotStride;
#pragma GCC unroll 16
                for (int j = 0; j < Vectors; ++j) {
                    const Vec left = Vec::load(aRow + j * lanes);
                    const Vec right = Vec::load(aRow + lda + j * lanes);
#pragma GCC unroll 16
                    for (int r = 0; r < Rows; ++r) {
                        const Vec l = Vec::fma(Vec::broadcast(dRow + r), left, Vec::zero());
                        const Vec rr = Vec::fma(Vec::broadcast(dRow + ldd + r), right, Vec::zero());
                        Vec::add(l, rr).store(node + r * treeWidth + j * lanes);
                    }
                }
            }
            for (int width = step.leaves / 2; width > 1; width /= 2) {
                for (int i = 0; i < width / 2; ++i) {
                    const float* left = scratch + 2 * i * slotStride;
                    const float* right = left + slotStride;
                    float* node = scratch + i * slotStride;
#pragma GCC unroll 16
                    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
                        for (int j = 0; j < Vectors; ++j)
                            Vec::add(Vec::load(left + r * treeWidth + j * lanes),
                                Vec::load(right + r * treeWidth + j * lanes))
                                .store(node + r * treeWidth + j * lanes);
                    }
                }
            }
#pragma GCC unroll 16
            for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
                for (int j = 0; j < Vectors; ++j)
                    acc[r][j] = Vec::load(scratch + r * treeWidth + j * lanes);
            }
        } else {
            const float* dRow = d + static_cast<std::ptrdiff_t>(step.begin) * ldd;
            const float* aRow = a + static_cast<std::ptrdiff_t>(step.begin) * lda;
            for (int s = step.begin; s < step.end; ++s, dRow += ldd, aRow += lda) {
                Vec bv[Vectors];
#pragma GCC unroll 8
                for (int j = 0; j < Vectors; ++j)
                    bv[j] = Vec::load(aRow + j * lanes);
#pragma GCC unroll 16
                for (int r = 0; r < Rows; ++r) {
                    const Vec av = Vec::broadcast(dRow + r);
#pragma GCC unroll 8
                    for (int j = 0; j < Vectors; ++j)
                        acc[r][j] = Vec::fma(av, bv[j], acc[r][j]);
                }
            }
        }
        for (int m = 0; m < step.merges; ++m) {
            top -= slotStride; // the left sibling: left + right
#pragma GCC unroll 16
            for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
                for (int j = 0; j < Vectors; ++j)
                    acc[r][j] = Vec::add(Vec::load(top + r * treeWidth + j * lanes), acc[r][j]);
            }
        }
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
            for (int j = 0; j < Vectors; ++j)
                acc[r][j].store(top + r * treeWidth + j * lanes);
        }
        top += slotStride;
    }
}

using TreeTileFunction
    = void (*)(const TreeProgram&, const float*, std::ptrdiff_t, const float*, std::ptrdiff_t, float*);

template<int Vectors>
TreeTileFunction treeTileFor(int rows)
{
    switch (rows) {
#define SGDSCOPE_TREE_CASE(R)                                                                                          \
    case R:                                                                                                            \
        if constexpr (R <= treeRows)                                                                                   \
            return &treeTile<R, Vectors>;                                                                              \
        break;
        SGDSCOPE_TREE_CASE(1)
        SGDSCOPE_TREE_CASE(2)
        SGDSCOPE_TREE_CASE(3)
        SGDSCOPE_TREE_CASE(4)
        SGDSCOPE_TREE_CASE(5)
        SGDSCOPE_TREE_CASE(6)
        SGDSCOPE_TREE_CASE(7)
        SGDSCOPE_TREE_CASE(8)
        SGDSCOPE_TREE_CASE(9)
        SGDSCOPE_TREE_CASE(10)
        SGDSCOPE_TREE_CASE(11)
        SGDSCOPE_TREE_CASE(12)
#undef SGDSCOPE_TREE_CASE
    default:
        break;
    }
    return nullptr;
}

TreeTileFunction treeTileFor(int rows, int vectors)
{
    static_assert(treeRows <= 12 && treeVectors <= 4);
    switch (vectors) {
    case 1:
        return treeTileFor<1>(rows);
    case 2:
        if constexpr (treeVectors >= 2)
            return treeTileFor<2>(rows);
        break;
    case 3:
        if constexpr (treeVectors >= 3)
            return treeTileFor<3>(rows);
        break;
    case 4:
        if constexpr (treeVectors >= 4)
            return treeTileFor<4>(rows);
        break;
    default:
        break;
    }
    return nullptr;
}

std::size_t slotFloats(int depth)
{
    // the stack, and the scratch of a block step above it
    return static_cast<std::size_t>((depth < 1 ? 1 : depth) + maxBlockLeaves / 2) * slotStride;
}

/// Moves one stack entry of a tile between the slots and a gradient (weights row-major out x in, then the
/// bias as column `in`). toSlots: gradient -> slot, else slot -> gradient. The tile's rows are outputs o0..,
/// its columns inputs j0.. (the bias last).
void moveTile(float* slot, float* weights, float* biases, int in, int o0, int rows, int j0, int columns, bool toSlots)
{
    const int weightColumns = minOf(columns, in - j0); // may be <= 0 when the tile holds only the bias column
    const bool hasBias = j0 + columns > in;
    for (int r = 0; r < rows; ++r) {
        float* slotRow = slot + r * treeWidth;
        float* gradientRow = weights + static_cast<std::ptrdiff_t>(o0 + r) * in + j0;
        for (int j = 0; j * lanes < weightColumns; ++j) {
            const int left = weightColumns - j * lanes;
            if (toSlots)
                Vec::loadPartial(gradientRow + j * lanes, left).store(slotRow + j * lanes);
            else
                Vec::load(slotRow + j * lanes).storePartial(gradientRow + j * lanes, left);
        }
        if (hasBias) {
            float& bias = biases[o0 + r];
            float& cell = slotRow[in - j0];
            if (toSlots)
                cell = bias;
            else
                bias = cell;
        }
    }
}

/// The same for a transposed tile: rows are inputs i0.. (the bias last), columns outputs o0...
void moveTransposedTile(
    float* slot, float* weights, float* biases, int in, int i0, int rows, int o0, int columns, bool toSlots)
{
    for (int r = 0; r < rows; ++r) {
        const int i = i0 + r;
        float* slotRow = slot + r * treeWidth;
        for (int c = 0; c < columns; ++c) {
            float& cell = i < in ? weights[static_cast<std::ptrdiff_t>(o0 + c) * in + i] : biases[o0 + c];
            if (toSlots)
                slotRow[c] = cell;
            else
                cell = slotRow[c];
        }
    }
}

/// Lanes a tile's vectors compute for `columns` columns, `rows` rows: the work of one orientation.
long paddedWork(int rows, int columns)
{
    return static_cast<long>(rows) * vectorsFor(columns) * lanes;
}

void weightGradient(const WeightGradientArgs& x)
{
    const TreeProgram& program = *x.program;
    const int columns = x.in + 1; // the bias is column `in`
    if (2 * paddedWork(columns, x.out) < paddedWork(x.out, columns)) {
        // Few inputs, more outputs (the seed example's first layer): vectors run across the outputs. Each
        // entry is the same chain and the same tree, only the tile is transposed.
        for (int o0 = 0; o0 < x.out; o0 += treeWidth) {
            const int width = minOf(treeWidth, x.out - o0);
            const int vectors = vectorsFor(width);
            for (int i0 = 0; i0 < columns; i0 += treeRows) {
                const int rows = minOf(treeRows, columns - i0);
                for (int e = 0; e < program.stackIn; ++e)
                    moveTransposedTile(
                        x.tiles + e * slotStride, x.weights[e], x.biases[e], x.in, i0, rows, o0, width, true);
                treeTileFor(rows, vectors)(program, x.a + i0, x.lda, x.d + o0, x.ldd, x.tiles);
                for (int e = 0; e < program.stackOut; ++e)
                    moveTransposedTile(
                        x.tiles + e * slotStride, x.weights[e], x.biases[e], x.in, i0, rows, o0, width, false);
            }
        }
        return;
    }
    for (int j0 = 0; j0 < columns; j0 += treeWidth) {
        const int width = minOf(treeWidth, columns - j0);
        const int vectors = vectorsFor(width);
        const TreeTileFunction full = treeTileFor(treeRows, vectors);
        for (int o0 = 0; o0 < x.out; o0 += treeRows) {
            const int rows = minOf(treeRows, x.out - o0);
            for (int e = 0; e < program.stackIn; ++e)
                moveTile(x.tiles + e * slotStride, x.weights[e], x.biases[e], x.in, o0, rows, j0, width, true);
            const TreeTileFunction tile = rows == treeRows ? full : treeTileFor(rows, vectors);
            tile(program, x.d + o0, x.ldd, x.a + j0, x.lda, x.tiles);
            for (int e = 0; e < program.stackOut; ++e)
                moveTile(x.tiles + e * slotStride, x.weights[e], x.biases[e], x.in, o0, rows, j0, width, false);
        }
    }
}

#include "core/nn/kernels/ConvKernelsImpl.h"

// --- element-wise ------------------------------------------------------------------------------------------------

/// x[i] = op(x[i]) (or op(x[i], y[i])) vector by vector; the last vector partial (its lanes beyond count are
/// computed from zeros and not stored).
template<typename Op>
void mapInPlace(float* x, std::size_t count, Op op)
{
    std::size_t i = 0;
    for (; i + lanes <= count; i += lanes)
        op(Vec::load(x + i)).store(x + i);
    if (i < count) {
        const int left = static_cast<int>(count - i);
        op(Vec::loadPartial(x + i, left)).storePartial(x + i, left);
    }
}
template<typename Op>
void mapInPlace(float* x, const float* y, std::size_t count, Op op)
{
    std::size_t i = 0;
    for (; i + lanes <= count; i += lanes)
        op(Vec::load(x + i), Vec::load(y + i)).store(x + i);
    if (i < count) {
        const int left = static_cast<int>(count - i);
        op(Vec::loadPartial(x + i, left), Vec::loadPartial(y + i, left)).storePartial(x + i, left);
    }
}

void activate(ElementFunction f, float* x, std::size_t count)
{
    const Vec zero(0.0f);
    switch (f) {
    case ElementFunction::Tanh:
        mapInPlace(x, count, [](Vec v) { return portable::tanhOf(v); });
        break;
    case ElementFunction::Relu:
        mapInPlace(x, count, [zero](Vec v) { return select(v < zero, zero, v); }); // NaN stays NaN
        break;
    case ElementFunction::Sigmoid:
        mapInPlace(x, count, [](Vec v) { return portable::logisticOf(v); });
        break;
    case ElementFunction::Identity:
        break;
    }
}

void multiplyByDerivative(ElementFunction f, float* delta, const float* a, std::size_t count)
{
    const Vec zero(0.0f);
    const Vec one(1.0f);
    switch (f) {
    case ElementFunction::Tanh:
        mapInPlace(delta, a, count, [one](Vec d, Vec v) { return d * (one - v * v); });
        break;
    case ElementFunction::Relu:
        mapInPlace(delta, a, count, [zero](Vec d, Vec v) { return select(v > zero, d, zero); });
        break;
    case ElementFunction::Sigmoid:
        mapInPlace(delta, a, count, [one](Vec d, Vec v) { return d * (v * (one - v)); });
        break;
    case ElementFunction::Identity:
        break;
    }
}

} // namespace

} // namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS

namespace sgdscope::kernels {
extern const KernelTable SGDSCOPE_KERNEL_TABLE;
const KernelTable SGDSCOPE_KERNEL_TABLE {SGDSCOPE_KERNEL_NAME, &SGDSCOPE_KERNEL_NS::packFloats,
    &SGDSCOPE_KERNEL_NS::slotFloats, &SGDSCOPE_KERNEL_NS::linearForward, &SGDSCOPE_KERNEL_NS::inputGradient,
    &SGDSCOPE_KERNEL_NS::weightGradient, &SGDSCOPE_KERNEL_NS::activate, &SGDSCOPE_KERNEL_NS::multiplyByDerivative,
    &SGDSCOPE_KERNEL_NS::convScratchFloats, &SGDSCOPE_KERNEL_NS::convForward, &SGDSCOPE_KERNEL_NS::convInputGradient,
    &SGDSCOPE_KERNEL_NS::convWeightGradient};
} // namespace sgdscope::kernels
