// The convolution kernels, part of KernelsImpl.h (included there, inside the path's namespace, after the product
// tiles it builds on). The order of operations, the same on every path (KernelTable.h states each chain):
// - convForward: each output one fma chain over the taps (c, ky, kx) in index order, from the bias, the padding's
//   zeros included; vectors run across output positions (of the whole pass, sample after sample), rows of a
//   tile across output channels: the im2col product of Caffe and oneDNN, with im2col done strip by strip into
//   the packed panel that the dense layers' tile (gemmTile) reads, so no whole im2col matrix is ever built.
// - convInputGradient: the same tile over the input's positions, the taps (o, ky, kx) in index order, the
//   weights transposed to [channels][o, ky, kx] and the output gradient gathered into the panel (zeros where a
//   tap has no output).
// - convWeightGradient: vectors across output channels, rows of a tile across the taps (c, ky, kx) and the bias
//   (a tap whose input is 1); every tree leaf a chain over its samples in order and each sample's output
//   positions in row-major order; the running sums of a step wait in memory (the "entries" of the tree's
//   stack, a whole layer's gradient each) between samples, stored and reloaded exactly.
// Only the register tiles and the strip width differ between paths.

/// A strip of the pass's positions (sample, y, x flattened) as runs within one image row each.
struct PositionRun
{
    int column = 0; // first column of the run in the strip
    int sample = 0;
    int y = 0;
    int x = 0;
    int length = 0;
};

constexpr int mostRuns = gemmWidth + 2;

/// Cuts positions [first, first + count) of images height x width, back to back, into runs of one row each.
int positionRuns(std::int64_t first, int count, int height, int width, PositionRun* runs)
{
    const std::int64_t area = static_cast<std::int64_t>(height) * width;
    int n = 0;
    for (int column = 0; column < count;) {
        const std::int64_t p = first + column;
        const int sample = static_cast<int>(p / area);
        const int inImage = static_cast<int>(p % area);
        const int y = inImage / width;
        const int x = inImage % width;
        const int length = minOf(width - x, count - column);
        runs[n++] = {column, sample, y, x, length};
        column += length;
    }
    return n;
}

/// Floor and ceiling of a / b for b > 0, negative a included.
constexpr int floorDiv(int a, int b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
constexpr int ceilDiv(int a, int b)
{
    return -floorDiv(-a, b);
}

/// out[q] = source[(x0 + q) * step + shift] for q in [0, length) where that index is in [0, size), else 0.
inline void gatherRow(float* out, const float* source, int size, int x0, int step, int shift, int length)
{
    // q with 0 <= (x0 + q) * step + shift < size
    const int lo = std::max(0, ceilDiv(-shift, step) - x0);
    const int hi = std::min(length, floorDiv(size - 1 - shift, step) - x0 + 1);
    int q = 0;
    for (; q < lo && q < length; ++q)
        out[q] = 0.0f;
    if (step == 1) {
        const float* s = source + x0 + shift;
        for (; q < hi; ++q)
            out[q] = s[q];
    } else {
        for (; q < hi; ++q)
            out[q] = source[(x0 + q) * step + shift];
    }
    for (; q < length; ++q)
        out[q] = 0.0f;
}

std::size_t convPackFloats(const ConvGeometry& g)
{
    const int forwardTaps = g.channels * g.kernelHeight * g.kernelWidth;
    const int backwardTaps = g.outChannels * g.kernelHeight * g.kernelWidth;
    const std::size_t panel = static_cast<std::size_t>(minOf(std::max(forwardTaps, backwardTaps), kBlock)) * gemmWidth;
    // and the input gradient's transposed weights
    return panel + static_cast<std::size_t>(g.channels) * static_cast<std::size_t>(backwardTaps) + 16;
}

void convForward(const ConvForwardArgs& x)
{
    const ConvGeometry& g = x.g;
    const int area = g.kernelHeight * g.kernelWidth;
    const int taps = g.channels * area;
    const std::int64_t positions = static_cast<std::int64_t>(g.samples) * g.outHeight * g.outWidth;
    const std::int64_t inArea = static_cast<std::int64_t>(g.height) * g.width;
    PositionRun runs[mostRuns];
    for (std::int64_t j0 = 0; j0 < positions; j0 += gemmWidth) {
        const int valid = static_cast<int>(std::min<std::int64_t>(gemmWidth, positions - j0));
        const int runCount = positionRuns(j0, valid, g.outHeight, g.outWidth, runs);
        const int vectors = vectorsFor(valid);
        const GemmTileFunction full = gemmTileFor(gemmRows, vectors);
        for (int k0 = 0; k0 < taps; k0 += kBlock) {
            const int kLength = minOf(kBlock, taps - k0);
            for (int kk = 0; kk < kLength; ++kk) {
                const int t = k0 + kk;
                const int c = t / area;
                const int ky = t % area / g.kernelWidth;
                const int kx = t % g.kernelWidth;
                float* row = x.pack + kk * gemmWidth;
                const float* channel = x.x + c * g.inStride;
                for (int r = 0; r < runCount; ++r) {
                    const PositionRun& run = runs[r];
                    const int iy = run.y * g.stride - g.padding + ky;
                    float* out = row + run.column;
                    if (iy < 0 || iy >= g.height) {
                        for (int q = 0; q < run.length; ++q)
                            out[q] = 0.0f;
                        continue;
                    }
                    gatherRow(out, channel + run.sample * inArea + static_cast<std::int64_t>(iy) * g.width, g.width,
                        run.x, g.stride, kx - g.padding, run.length);
                }
            }
            for (int o0 = 0; o0 < g.outChannels; o0 += gemmRows) {
                const int rows = minOf(gemmRows, g.outChannels - o0);
                const GemmTileFunction tile = rows == gemmRows ? full : gemmTileFor(rows, vectors);
                tile(kLength, x.w + static_cast<std::ptrdiff_t>(o0) * taps + k0, taps, x.pack,
                    x.z + o0 * g.outStride + j0, g.outStride, valid, nullptr, k0 > 0 ? nullptr : x.bias + o0, k0 > 0);
            }
        }
    }
}

void convInputGradient(const ConvInputGradientArgs& x)
{
    const ConvGeometry& g = x.g;
    const int area = g.kernelHeight * g.kernelWidth;
    const int taps = g.outChannels * area; // (o, ky, kx)
    const int forwardTaps = g.channels * area;
    // The weights as [channel][o, ky, kx]: the tile's rows.
    float* weights = x.pack + static_cast<std::size_t>(minOf(std::max(forwardTaps, taps), kBlock)) * gemmWidth;
    for (int c = 0; c < g.channels; ++c)
        for (int o = 0; o < g.outChannels; ++o)
            for (int k = 0; k < area; ++k)
                weights[c * taps + o * area + k] = x.w[(o * g.channels + c) * area + k];
    const std::int64_t positions = static_cast<std::int64_t>(g.samples) * g.height * g.width;
    const std::int64_t outArea = static_cast<std::int64_t>(g.outHeight) * g.outWidth;
    PositionRun runs[mostRuns];
    for (std::int64_t j0 = 0; j0 < positions; j0 += gemmWidth) {
        const int valid = static_cast<int>(std::min<std::int64_t>(gemmWidth, positions - j0));
        const int runCount = positionRuns(j0, valid, g.height, g.width, runs);
        const int vectors = vectorsFor(valid);
        const GemmTileFunction full = gemmTileFor(gemmRows, vectors);
        for (int k0 = 0; k0 < taps; k0 += kBlock) {
            const int kLength = minOf(kBlock, taps - k0);
            for (int kk = 0; kk < kLength; ++kk) {
                const int t = k0 + kk;
                const int o = t / area;
                const int ky = t % area / g.kernelWidth;
                const int kx = t % g.kernelWidth;
                float* row = x.pack + kk * gemmWidth;
                const float* channel = x.dz + o * g.outStride;
                for (int r = 0; r < runCount; ++r) {
                    const PositionRun& run = runs[r];
                    float* out = row + run.column;
                    const int oy = run.y + g.padding - ky; // times the stride
                    if (oy < 0 || oy % g.stride != 0 || oy / g.stride >= g.outHeight) {
                        for (int q = 0; q < run.length; ++q)
                            out[q] = 0.0f;
                        continue;
                    }
                    const float* source
                        = channel + run.sample * outArea + static_cast<std::int64_t>(oy / g.stride) * g.outWidth;
                    if (g.stride == 1) {
                        gatherRow(out, source, g.outWidth, run.x, 1, g.padding - kx, run.length);
                    } else {
                        for (int q = 0; q < run.length; ++q) {
                            const int ox = run.x + q + g.padding - kx;
                            out[q] = ox >= 0 && ox % g.stride == 0 && ox / g.stride < g.outWidth ? source[ox / g.stride]
                                                                                                 : 0.0f;
                        }
                    }
                }
            }
            for (int c0 = 0; c0 < g.channels; c0 += gemmRows) {
                const int rows = minOf(gemmRows, g.channels - c0);
                const GemmTileFunction tile = rows == gemmRows ? full : gemmTileFor(rows, vectors);
                tile(kLength, weights + static_cast<std::ptrdiff_t>(c0) * taps + k0, taps, x.pack,
                    x.dx + c0 * g.inStride + j0, g.inStride, valid, nullptr, nullptr, k0 > 0);
            }
        }
    }
}

// --- the weight gradient --------------------------------------------------------------------------------------------

/// Rows [0, Rows) of one tile of a sample's weight gradient: row r is tap offsets[r] of the image (its value at
/// the position's corner plus the offset), the last row the bias if Bias (its input is 1); columns are output
/// channels, Vectors vectors of the transposed output gradient dzT (a position's channels at p * ldT). The
/// running sums are read from and written back to `entry` (row r at entry + r * ldE).
template<int Rows, int Vectors, bool Bias>
void convGradientTile(const ConvGeometry& g, const float* image, int pitch, const std::ptrdiff_t* offsets,
    const float* dzT, int ldT, float* entry, int ldE)
{
    constexpr int tapRows = Bias ? Rows - 1 : Rows;
    Vec acc[Rows][Vectors];
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
        for (int j = 0; j < Vectors; ++j)
            acc[r][j] = Vec::load(entry + r * ldE + j * lanes);
    }
    std::ptrdiff_t off[tapRows > 0 ? tapRows : 1];
#pragma GCC unroll 16
    for (int r = 0; r < tapRows; ++r)
        off[r] = offsets[r];
    const Vec one(1.0f);
    const float* d = dzT;
    for (int oy = 0; oy < g.outHeight; ++oy) {
        const float* corner = image + static_cast<std::ptrdiff_t>(oy) * g.stride * pitch;
        for (int ox = 0; ox < g.outWidth; ++ox, corner += g.stride, d += ldT) {
            Vec dv[Vectors];
#pragma GCC unroll 8
            for (int j = 0; j < Vectors; ++j)
                dv[j] = Vec::load(d + j * lanes);
#pragma GCC unroll 16
            for (int r = 0; r < tapRows; ++r) {
                const Vec xv = Vec::broadcast(corner + off[r]);
#pragma GCC unroll 8
                for (int j = 0; j < Vectors; ++j)
                    acc[r][j] = Vec::fma(xv, dv[j], acc[r][j]);
            }
            if constexpr (Bias) {
#pragma GCC unroll 8
                for (int j = 0; j < Vectors; ++j)
                    acc[Rows - 1][j] = Vec::fma(one, dv[j], acc[Rows - 1][j]);
            }
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 16
        for (int j = 0; j < Vectors; ++j)
            acc[r][j].store(entry + r * ldE + j * lanes);
    }
}

using ConvGradientTileFunction
    = void (*)(const ConvGeometry&, const float*, int, const std::ptrdiff_t*, const float*, int, float*, int);

template<int Vectors, bool Bias>
ConvGradientTileFunction convGradientTileFor(int rows)
{
    switch (rows) {
#define SGDSCOPE_CONV_TILE_CASE(R)                                                                                     \
    case R:                                                                                                            \
        if constexpr (R <= treeRows)                                                                                   \
            return &convGradientTile<R, Vectors, Bias>;                                                                \
        break;
        SGDSCOPE_CONV_TILE_CASE(1)
        SGDSCOPE_CONV_TILE_CASE(2)
        SGDSCOPE_CONV_TILE_CASE(3)
        SGDSCOPE_CONV_TILE_CASE(4)
        SGDSCOPE_CONV_TILE_CASE(5)
        SGDSCOPE_CONV_TILE_CASE(6)
        SGDSCOPE_CONV_TILE_CASE(7)
        SGDSCOPE_CONV_TILE_CASE(8)
        SGDSCOPE_CONV_TILE_CASE(9)
        SGDSCOPE_CONV_TILE_CASE(10)
        SGDSCOPE_CONV_TILE_CASE(11)
        SGDSCOPE_CONV_TILE_CASE(12)
#undef SGDSCOPE_CONV_TILE_CASE
    default:
        break;
    }
    return nullptr;
}

ConvGradientTileFunction convGradientTileFor(int rows, int vectors, bool bias)
{
    switch (vectors) {
    case 1:
        return bias ? convGradientTileFor<1, true>(rows) : convGradientTileFor<1, false>(rows);
    case 2:
        if constexpr (treeVectors >= 2)
            return bias ? convGradientTileFor<2, true>(rows) : convGradientTileFor<2, false>(rows);
        break;
    case 3:
        if constexpr (treeVectors >= 3)
            return bias ? convGradientTileFor<3, true>(rows) : convGradientTileFor<3, false>(rows);
        break;
    case 4:
        if constexpr (treeVectors >= 4)
            return bias ? convGradientTileFor<4, true>(rows) : convGradientTileFor<4, false>(rows);
        break;
    default:
        break;
    }
    return nullptr;
}

/// The weight gradient's working memory: one sample's padded image and transposed output gradient, and the
/// tree's entries (a layer's gradient each: a row per tap and one for the bias, output channels across).
struct ConvGradientScratch
{
    int taps = 0;
    int ldE = 0; // floats of an entry's row: the output channels, whole vectors
    int ldT = 0; // floats of a position of the transposed output gradient
    int paddedHeight = 0;
    int paddedWidth = 0;
    std::size_t imageFloats = 0;
    std::size_t gradientFloats = 0;
    std::size_t entryFloats = 0;

    explicit ConvGradientScratch(const ConvGeometry& g)
        : taps(g.channels * g.kernelHeight * g.kernelWidth)
        , ldE(vectorsFor(g.outChannels) * lanes)
        , ldT(ldE)
        , paddedHeight(g.height + 2 * g.padding)
        , paddedWidth(g.width + 2 * g.padding)
    {
        const auto round = [](std::size_t n) { return (n + 15) / 16 * 16; };
        imageFloats = g.padding > 0 ? round(static_cast<std::size_t>(g.channels) * paddedHeight * paddedWidth) : 0;
        gradientFloats = round(static_cast<std::size_t>(g.outHeight) * g.outWidth * ldT);
        entryFloats = round(static_cast<std::size_t>(taps + 1) * ldE);
    }
    /// The stack's, a leaf's and a subtree's nodes.
    static int entriesFor(int depth) { return std::max(depth, 1) + 1 + maxBlockLeaves / 2; }
    std::size_t floats(int depth) const
    {
        return imageFloats + gradientFloats + static_cast<std::size_t>(entriesFor(depth)) * entryFloats;
    }
};

std::size_t convScratchFloats(const ConvGeometry& g, int depth)
{
    return ConvGradientScratch(g).floats(depth);
}

void convWeightGradient(const ConvWeightGradientArgs& x)
{
    const ConvGeometry& g = x.g;
    const TreeProgram& program = *x.program;
    const ConvGradientScratch layout(g);
    const int taps = layout.taps;
    const int ldE = layout.ldE;
    const int ldT = layout.ldT;
    float* paddedImage = x.scratch;
    float* dzT = paddedImage + layout.imageFloats;
    float* entries = dzT + layout.gradientFloats;
    auto entry = [&](int e) { return entries + static_cast<std::size_t>(e) * layout.entryFloats; };
    const int positions = g.outHeight * g.outWidth;
    const std::int64_t inArea = static_cast<std::int64_t>(g.height) * g.width;
    const int pitch = g.padding > 0 ? layout.paddedWidth : g.width;
    const std::ptrdiff_t channelStride
        = g.padding > 0 ? static_cast<std::ptrdiff_t>(layout.paddedHeight) * layout.paddedWidth : g.inStride;
    if (g.padding > 0)
        std::fill(paddedImage, paddedImage + layout.imageFloats, 0.0f);
    std::fill(dzT, dzT + layout.gradientFloats, 0.0f); // lanes beyond the channels stay 0

    // The tiles: rows of taps (and the bias, last) split evenly into tiles of at most treeRows, vector groups of
    // at most treeVectors.
    const int rowsTotal = taps + 1;
    const int rowTiles = (rowsTotal + treeRows - 1) / treeRows;
    const int vectorsTotal = ldE / lanes;
    std::ptrdiff_t tapOffsets[treeRows];

    // Adds sample s's products to the running sums in entry e (its chain goes on from what e holds).
    auto accumulate = [&](int s, float* e) {
        const float* image = x.x + s * inArea;
        if (g.padding > 0) {
            for (int c = 0; c < g.channels; ++c)
                for (int y = 0; y < g.height; ++y) {
                    const float* from = x.x + c * g.inStride + s * inArea + static_cast<std::int64_t>(y) * g.width;
                    float* to = paddedImage + c * channelStride + (y + g.padding) * pitch + g.padding;
                    for (int q = 0; q < g.width; ++q)
                        to[q] = from[q];
                }
            image = paddedImage;
        }
        for (int o = 0; o < g.outChannels; ++o) {
            const float* from = x.dz + o * g.outStride + static_cast<std::int64_t>(s) * positions;
            for (int p = 0; p < positions; ++p)
                dzT[static_cast<std::ptrdiff_t>(p) * ldT + o] = from[p];
        }
        for (int t = 0, row0 = 0; t < rowTiles; ++t) {
            const int rows = rowsTotal / rowTiles + (t < rowsTotal % rowTiles ? 1 : 0);
            const bool bias = row0 + rows == rowsTotal;
            for (int r = 0; r < rows - (bias ? 1 : 0); ++r) {
                const int tap = row0 + r;
                const int c = tap / (g.kernelHeight * g.kernelWidth);
                const int ky = tap % (g.kernelHeight * g.kernelWidth) / g.kernelWidth;
                const int kx = tap % g.kernelWidth;
                tapOffsets[r] = c * channelStride + static_cast<std::ptrdiff_t>(ky) * pitch + kx;
            }
            for (int j0 = 0; j0 < vectorsTotal; j0 += treeVectors) {
                const int vectors = minOf(treeVectors, vectorsTotal - j0);
                convGradientTileFor(rows, vectors, bias)(
                    g, image, pitch, tapOffsets, dzT + j0 * lanes, ldT, e + row0 * ldE + j0 * lanes, ldE);
            }
            row0 += rows;
        }
    };
    auto zero = [&](float* e) { std::fill(e, e + layout.entryFloats, 0.0f); };
    auto add = [&](float* left, const float* right) { // left = left + right
        for (std::size_t i = 0; i < layout.entryFloats; i += lanes)
            Vec::add(Vec::load(left + i), Vec::load(right + i)).store(left + i);
    };
    // stack position j <-> entry j: the gradient's layout [o][tap] and bias[o] against the entry's [tap][o]
    auto move = [&](int j, bool toEntry) {
        float* e = entry(j);
        for (int o = 0; o < g.outChannels; ++o) {
            float* w = x.weights[j] + static_cast<std::ptrdiff_t>(o) * taps;
            for (int t = 0; t < taps; ++t) {
                if (toEntry)
                    e[t * ldE + o] = w[t];
                else
                    w[t] = e[t * ldE + o];
            }
            if (toEntry)
                e[taps * ldE + o] = x.biases[j][o];
            else
                x.biases[j][o] = e[taps * ldE + o];
        }
    };

    for (int j = 0; j < program.stackIn; ++j)
        move(j, true);
    const int blockBase = std::max(program.depth, 1);
    int top = program.stackIn;
    for (int t = 0; t < program.stepCount; ++t) {
        const TreeStep& step = program.steps[t];
        float* current = nullptr;
        if (step.resume) {
            current = entry(--top);
        } else {
            current = entry(top);
            zero(current);
        }
        if (step.leaves > 1) {
            // A whole subtree of single-sample chunks: each pair of leaves added, then the levels above.
            float* leaf = entry(blockBase);
            auto node = [&](int i) { return entry(blockBase + 1 + i); };
            for (int pair = 0; pair < step.leaves / 2; ++pair) {
                zero(node(pair));
                accumulate(step.begin + 2 * pair, node(pair));
                zero(leaf);
                accumulate(step.begin + 2 * pair + 1, leaf);
                add(node(pair), leaf);
            }
            for (int width = step.leaves / 2; width > 1; width /= 2) {
                for (int i = 0; i < width / 2; ++i) {
                    if (i > 0)
                        std::copy(node(2 * i), node(2 * i) + layout.entryFloats, node(i));
                    add(node(i), node(2 * i + 1));
                }
            }
            std::copy(node(0), node(0) + layout.entryFloats, current);
        } else {
            for (int s = step.begin; s < step.end; ++s)
                accumulate(s, current);
        }
        for (int m = 0; m < step.merges; ++m) {
            float* left = entry(--top); // the left sibling: left + right
            add(left, current);
            current = left;
        }
        ++top;
    }
    for (int j = 0; j < program.stackOut; ++j)
        move(j, false);
}
