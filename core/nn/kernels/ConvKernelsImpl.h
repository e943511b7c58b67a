// The convolution kernels, part of KernelsImpl.h (included there, inside the path's namespace, after the product
// tiles). The order of operations, the same on every path (KernelTable.h states each chain):
// - convForward: each output one fma chain over the taps (c, ky, kx) in index order, from the bias, the padding's
//   zeros included. Computed one of two ways, whichever fills this path's vectors better (the same chains either
//   way): vectors across an output row's positions and tile rows across output channels (a direct convolution
//   over a zero-padded copy of the sample: each tap is a plain vector load at an offset, no im2col matrix is
//   built), or vectors across output channels and tile rows across positions (the weights' vectors loaded once a
//   tap, each input value broadcast), the outputs then transposed to the channel-major layout.
// - convInputGradient: vectors across an input row's positions, tile rows across input channels, the taps
//   (o, ky, kx) in index order over a zero-padded (and, for strides, zero-stuffed) copy of the sample's output
//   gradient; rows of taps that read only zeros for every vector of a tile are left out, which changes no bit.
// - convWeightGradient: vectors across output channels, rows of a tile across the taps (c, ky, kx) and the bias
//   (a tap whose input is 1); every tree leaf a chain over its samples in order and each sample's output
//   positions in row-major order; the running sums of a step wait in memory (the "entries" of the tree's
//   stack, a whole layer's gradient each) between samples, stored and reloaded exactly.
// Only the register tiles differ between paths (and which forward form fills their vectors better).

/// Floats of a sample's zero-padded image: what the forward pass reads.
constexpr std::size_t roundedFloats(std::size_t n)
{
    return (n + 15) / 16 * 16;
}

/// The walk over a convolution's taps for a direct tile: channel by channel, row by row of the kernel (those in
/// [kyBegin, kyEnd)), column by column; tap (ch, ky, kx) of a vector reads the source at its base + origin +
/// ch * channelStride + ky * rowStep + kx * columnStep, and its weight for tile row r at
/// a[r * lda + (ch * kernelHeight + ky) * kernelWidth + kx].
struct TapWalk
{
    int channels = 0;
    int kernelHeight = 1;
    int kernelWidth = 1;
    int kyBegin = 0;
    int kyEnd = 1;
    std::ptrdiff_t channelStride = 0;
    std::ptrdiff_t rowStep = 0;
    std::ptrdiff_t columnStep = 1;
    std::ptrdiff_t origin = 0;
};

/// C rows [0, Rows) x `Vectors` vectors: C = init + the tap walk's products, each vector j of lanes read at
/// src + base[j] and written (its first valid[j] lanes) at c + r * ldc + dst[j]. init: rowBias[r], or 0.
template<int Rows, int Vectors>
void directTile(const TapWalk& walk, const float* a, std::ptrdiff_t lda, const float* src, const std::ptrdiff_t* base,
    float* c, std::ptrdiff_t ldc, const std::ptrdiff_t* dst, const int* valid, const float* rowBias)
{
    Vec acc[Rows][Vectors];
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) {
        const Vec init = rowBias ? Vec::broadcast(rowBias + r) : Vec::zero();
#pragma GCC unroll 16
        for (int j = 0; j < Vectors; ++j)
            acc[r][j] = init;
    }
    const float* from[Vectors];
#pragma GCC unroll 8
    for (int j = 0; j < Vectors; ++j)
        from[j] = src + base[j] + walk.origin;
    const float* rows[Rows];
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r)
        rows[r] = a + r * lda;
    for (int ch = 0; ch < walk.channels; ++ch) {
        for (int ky = walk.kyBegin; ky < walk.kyEnd; ++ky) {
            const std::ptrdiff_t offset = ch * walk.channelStride + ky * walk.rowStep;
            const int tap = (ch * walk.kernelHeight + ky) * walk.kernelWidth;
            for (int kx = 0; kx < walk.kernelWidth; ++kx) {
                const std::ptrdiff_t at = offset + kx * walk.columnStep;
                Vec bv[Vectors];
#pragma GCC unroll 8
                for (int j = 0; j < Vectors; ++j)
                    bv[j] = Vec::load(from[j] + at);
#pragma GCC unroll 16
                for (int r = 0; r < Rows; ++r) {
                    const Vec av = Vec::broadcast(rows[r] + tap + kx);
#pragma GCC unroll 8
                    for (int j = 0; j < Vectors; ++j)
                        acc[r][j] = Vec::fma(av, bv[j], acc[r][j]);
                }
            }
        }
    }
#pragma GCC unroll 16
    for (int j = 0; j < Vectors; ++j) {
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r)
            acc[r][j].storePartial(c + r * ldc + dst[j], valid[j]);
    }
}

using DirectTileFunction = void (*)(const TapWalk&, const float*, std::ptrdiff_t, const float*, const std::ptrdiff_t*,
    float*, std::ptrdiff_t, const std::ptrdiff_t*, const int*, const float*);

template<int Vectors>
DirectTileFunction directTileFor(int rows)
{
    switch (rows) {
#define SGDSCOPE_DIRECT_CASE(R)                                                                                        \
    case R:                                                                                                            \
        if constexpr (R <= gemmRows)                                                                                   \
            return &directTile<R, Vectors>;                                                                            \
        break;
        SGDSCOPE_DIRECT_CASE(1)
        SGDSCOPE_DIRECT_CASE(2)
        SGDSCOPE_DIRECT_CASE(3)
        SGDSCOPE_DIRECT_CASE(4)
        SGDSCOPE_DIRECT_CASE(5)
        SGDSCOPE_DIRECT_CASE(6)
        SGDSCOPE_DIRECT_CASE(7)
        SGDSCOPE_DIRECT_CASE(8)
#undef SGDSCOPE_DIRECT_CASE
    default:
        break;
    }
    return nullptr;
}

DirectTileFunction directTileFor(int rows, int vectors)
{
    switch (vectors) {
    case 1:
        return directTileFor<1>(rows);
    case 2:
        if constexpr (gemmVectors >= 2)
            return directTileFor<2>(rows);
        break;
    case 3:
        if constexpr (gemmVectors >= 3)
            return directTileFor<3>(rows);
        break;
    case 4:
        if constexpr (gemmVectors >= 4)
            return directTileFor<4>(rows);
        break;
    default:
        break;
    }
    return nullptr;
}

/// The vectors of one image's rows: `rows` rows of `width` positions, each row cut into vectors of at most `lanes`
/// (the last one partial), walked tile by tile.
struct RowVectors
{
    int rows = 0;
    int width = 0;
    int perRow = 0;
    int count() const { return rows * perRow; }
    int row(int v) const { return v / perRow; }
    int column(int v) const { return v % perRow * lanes; }
    int valid(int v) const { return minOf(lanes, width - column(v)); }
};

/// Runs a direct convolution over one image: output channels (tile rows) [0, outRows) and the image's row vectors,
/// in tiles of gemmRows x gemmVectors. base/dst of vector v: its row and column through srcPitch and dstPitch;
/// `kyRange(firstRow, lastRow)` may narrow the walk's kernel rows for a tile (those outside read only zeros).
template<typename KyRange>
void directImage(const TapWalk& walk, const float* a, std::ptrdiff_t lda, int outRows, const float* src,
    std::ptrdiff_t srcPitch, const RowVectors& vectors, float* c, std::ptrdiff_t ldc, std::ptrdiff_t dstPitch,
    const float* rowBias, KyRange kyRange)
{
    std::ptrdiff_t base[gemmVectors];
    std::ptrdiff_t dst[gemmVectors];
    int valid[gemmVectors];
    for (int v0 = 0; v0 < vectors.count(); v0 += gemmVectors) {
        const int count = minOf(gemmVectors, vectors.count() - v0);
        for (int j = 0; j < count; ++j) {
            const int v = v0 + j;
            base[j] = vectors.row(v) * srcPitch + vectors.column(v);
            dst[j] = vectors.row(v) * dstPitch + vectors.column(v);
            valid[j] = vectors.valid(v);
        }
        TapWalk tile = walk;
        kyRange(vectors.row(v0), vectors.row(v0 + count - 1), tile);
        if (tile.kyBegin >= tile.kyEnd) {
            // every tap reads zeros: the chains are their start
            for (int r = 0; r < outRows; ++r)
                for (int j = 0; j < count; ++j)
                    (rowBias ? Vec::broadcast(rowBias + r) : Vec::zero()).storePartial(c + r * ldc + dst[j], valid[j]);
            continue;
        }
        const DirectTileFunction full = directTileFor(gemmRows, count);
        for (int r0 = 0; r0 < outRows; r0 += gemmRows) {
            const int rows = minOf(gemmRows, outRows - r0);
            (rows == gemmRows ? full : directTileFor(rows, count))(
                tile, a + r0 * lda, lda, src, base, c + r0 * ldc, ldc, dst, valid, rowBias ? rowBias + r0 : nullptr);
        }
    }
}

/// Whether the forward pass fills this path's vectors better across output channels than across an output row.
bool forwardAcrossChannels(const ConvGeometry& g)
{
    if (g.stride != 1)
        return true; // a row's positions are not contiguous in the input
    const double rows = static_cast<double>(g.outWidth) / (vectorsFor(g.outWidth) * lanes);
    const double channels = static_cast<double>(g.outChannels) / (vectorsFor(g.outChannels) * lanes);
    return channels > rows;
}

/// The forward pass's working memory: a sample's zero-padded image, and for the form across channels the weights
/// as [tap][channel] (whole vectors), the bias so padded, and one sample's outputs position by position.
struct ConvForwardScratch
{
    int paddedHeight = 0;
    int paddedWidth = 0;
    int ldW = 0; // floats of a tap's (or a position's) output channels
    std::size_t imageFloats = 0;
    std::size_t weightFloats = 0;
    std::size_t outputFloats = 0;

    explicit ConvForwardScratch(const ConvGeometry& g)
        : paddedHeight(g.height + 2 * g.padding)
        , paddedWidth(g.width + 2 * g.padding)
        , ldW(vectorsFor(g.outChannels) * lanes)
    {
        // (a vector may read past a row's end: a row of slack)
        imageFloats
            = roundedFloats(static_cast<std::size_t>(g.channels) * paddedHeight * paddedWidth + paddedWidth + lanes);
        if (forwardAcrossChannels(g)) {
            weightFloats
                = roundedFloats(static_cast<std::size_t>(g.channels * g.kernelHeight * g.kernelWidth + 1) * ldW);
            outputFloats = roundedFloats(static_cast<std::size_t>(g.outHeight) * g.outWidth * ldW);
        }
    }
    std::size_t floats() const { return imageFloats + weightFloats + outputFloats; }
};

/// The input gradient's working memory: a sample's output gradient, zero-padded by kernel - 1 - padding on every
/// side and zero-stuffed between a stride's positions, and the weights as [channel][o, ky, kx].
struct ConvInputGradientScratch
{
    int height = 0; // input height + kernel height - 1
    int width = 0;
    std::size_t imageFloats = 0;
    std::size_t weightFloats = 0;

    explicit ConvInputGradientScratch(const ConvGeometry& g)
        : height(g.height + g.kernelHeight - 1)
        , width(g.width + g.kernelWidth - 1)
    {
        imageFloats = roundedFloats(static_cast<std::size_t>(g.outChannels) * height * width + width + lanes);
        weightFloats
            = roundedFloats(static_cast<std::size_t>(g.channels) * g.outChannels * g.kernelHeight * g.kernelWidth);
    }
    std::size_t floats() const { return imageFloats + weightFloats; }
};

/// One sample's outputs across channels: rows of a tile are Rows positions (corner[r] in the padded image),
/// vectors the output channels; out[p * ldW + o] for the tile's positions.
template<int Rows, int Vectors>
void channelTile(const ConvGeometry& g, const float* image, std::ptrdiff_t channelStride, std::ptrdiff_t pitch,
    const std::ptrdiff_t* corner, const float* weights, int ldW, const float* bias, float* out)
{
    Vec acc[Rows][Vectors];
#pragma GCC unroll 8
    for (int j = 0; j < Vectors; ++j) {
        const Vec b = Vec::load(bias + j * lanes);
#pragma GCC unroll 16
        for (int r = 0; r < Rows; ++r)
            acc[r][j] = b;
    }
    const float* w = weights;
    for (int ch = 0; ch < g.channels; ++ch) {
        for (int ky = 0; ky < g.kernelHeight; ++ky) {
            const float* row = image + ch * channelStride + ky * pitch;
            for (int kx = 0; kx < g.kernelWidth; ++kx, w += ldW) {
                Vec wv[Vectors];
#pragma GCC unroll 8
                for (int j = 0; j < Vectors; ++j)
                    wv[j] = Vec::load(w + j * lanes);
#pragma GCC unroll 16
                for (int r = 0; r < Rows; ++r) {
                    const Vec xv = Vec::broadcast(row + corner[r] + kx);
#pragma GCC unroll 8
                    for (int j = 0; j < Vectors; ++j)
                        acc[r][j] = Vec::fma(xv, wv[j], acc[r][j]);
                }
            }
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 8
        for (int j = 0; j < Vectors; ++j)
            acc[r][j].store(out + r * ldW + j * lanes);
    }
}

using ChannelTileFunction = void (*)(const ConvGeometry&, const float*, std::ptrdiff_t, std::ptrdiff_t,
    const std::ptrdiff_t*, const float*, int, const float*, float*);

template<int Vectors>
ChannelTileFunction channelTileFor(int rows)
{
    switch (rows) {
#define SGDSCOPE_CHANNEL_CASE(R)                                                                                       \
    case R:                                                                                                            \
        if constexpr (R <= treeRows)                                                                                   \
            return &channelTile<R, Vectors>;                                                                           \
        break;
        SGDSCOPE_CHANNEL_CASE(1)
        SGDSCOPE_CHANNEL_CASE(2)
        SGDSCOPE_CHANNEL_CASE(3)
        SGDSCOPE_CHANNEL_CASE(4)
        SGDSCOPE_CHANNEL_CASE(5)
        SGDSCOPE_CHANNEL_CASE(6)
        SGDSCOPE_CHANNEL_CASE(7)
        SGDSCOPE_CHANNEL_CASE(8)
        SGDSCOPE_CHANNEL_CASE(9)
        SGDSCOPE_CHANNEL_CASE(10)
        SGDSCOPE_CHANNEL_CASE(11)
        SGDSCOPE_CHANNEL_CASE(12)
#undef SGDSCOPE_CHANNEL_CASE
    default:
        break;
    }
    return nullptr;
}

ChannelTileFunction channelTileFor(int rows, int vectors)
{
    switch (vectors) {
    case 1:
        return channelTileFor<1>(rows);
    case 2:
        if constexpr (treeVectors >= 2)
            return channelTileFor<2>(rows);
        break;
    case 3:
        if constexpr (treeVectors >= 3)
            return channelTileFor<3>(rows);
        break;
    case 4:
        if constexpr (treeVectors >= 4)
            return channelTileFor<4>(rows);
        break;
    default:
        break;
    }
    return nullptr;
}

/// Copies channel-major image values of sample s (channels x height x width, channel c at source + c * stride)
/// into a zero-bordered image (channel c at to + c * toStride, rows of `pitch`, the first value at `origin`).
/// Only the interior is written: the border's zeros stay from one sample to the next.
void copyInterior(const float* source, std::ptrdiff_t stride, int channels, int height, int width, float* to,
    std::ptrdiff_t toStride, std::ptrdiff_t pitch, std::ptrdiff_t origin, int rowStep, int columnStep)
{
    for (int c = 0; c < channels; ++c) {
        const float* from = source + c * stride;
        float* image = to + c * toStride + origin;
        for (int y = 0; y < height; ++y, from += width) {
            float* row = image + static_cast<std::ptrdiff_t>(y) * rowStep * pitch;
            if (columnStep == 1) {
                int x = 0;
                for (; x + lanes <= width; x += lanes)
                    Vec::load(from + x).store(row + x);
                if (x < width)
                    Vec::loadPartial(from + x, width - x).storePartial(row + x, width - x);
            } else {
                for (int x = 0; x < width; ++x)
                    row[x * columnStep] = from[x];
            }
        }
    }
}

std::size_t convForwardFloats(const ConvGeometry& g)
{
    return ConvForwardScratch(g).floats();
}

void convForward(const ConvForwardArgs& x)
{
    const ConvGeometry& g = x.g;
    const ConvForwardScratch layout(g);
    float* image = x.scratch;
    const std::ptrdiff_t pitch = layout.paddedWidth;
    const std::ptrdiff_t channelStride = static_cast<std::ptrdiff_t>(layout.paddedHeight) * layout.paddedWidth;
    std::fill(image, image + layout.imageFloats, 0.0f);
    const std::int64_t inArea = static_cast<std::int64_t>(g.height) * g.width;
    const int positions = g.outHeight * g.outWidth;
    const int area = g.kernelHeight * g.kernelWidth;
    const int taps = g.channels * area;
    if (!forwardAcrossChannels(g)) {
        // vectors across each output row (stride 1), tile rows across output channels
        TapWalk walk;
        walk.channels = g.channels;
        walk.kernelHeight = g.kernelHeight;
        walk.kernelWidth = g.kernelWidth;
        walk.kyEnd = g.kernelHeight;
        walk.channelStride = channelStride;
        walk.rowStep = pitch;
        const RowVectors vectors {g.outHeight, g.outWidth, vectorsFor(g.outWidth)};
        for (int s = 0; s < g.samples; ++s) {
            copyInterior(x.x + s * inArea, g.inStride, g.channels, g.height, g.width, image, channelStride, pitch,
                g.padding * pitch + g.padding, 1, 1);
            directImage(walk, x.w, taps, g.outChannels, image, pitch, vectors,
                x.z + static_cast<std::ptrdiff_t>(s) * positions, g.outStride, g.outWidth, x.bias,
                [](int, int, TapWalk&) {});
        }
        return;
    }
    // vectors across output channels, tile rows across positions
    const int ldW = layout.ldW;
    float* weights = image + layout.imageFloats; // [tap][o], then the bias
    float* out = weights + layout.weightFloats;
    std::fill(weights, weights + layout.weightFloats, 0.0f);
    for (int o = 0; o < g.outChannels; ++o) {
        for (int t = 0; t < taps; ++t)
            weights[t * ldW + o] = x.w[o * taps + t];
        weights[taps * ldW + o] = x.bias[o];
    }
    const float* bias = weights + static_cast<std::ptrdiff_t>(taps) * ldW;
    const int vectorsTotal = ldW / lanes;
    std::ptrdiff_t corner[treeRows];
    for (int s = 0; s < g.samples; ++s) {
        copyInterior(x.x + s * inArea, g.inStride, g.channels, g.height, g.width, image, channelStride, pitch,
            g.padding * pitch + g.padding, 1, 1);
        for (int p0 = 0; p0 < positions; p0 += treeRows) {
            const int rows = minOf(treeRows, positions - p0);
            for (int r = 0; r < rows; ++r) {
                const int oy = (p0 + r) / g.outWidth;
                const int ox = (p0 + r) % g.outWidth;
                corner[r]
                    = static_cast<std::ptrdiff_t>(oy) * g.stride * pitch + static_cast<std::ptrdiff_t>(ox) * g.stride;
            }
            for (int j0 = 0; j0 < vectorsTotal; j0 += treeVectors) {
                const int vectors = minOf(treeVectors, vectorsTotal - j0);
                channelTileFor(rows, vectors)(g, image, channelStride, pitch, corner, weights + j0 * lanes, ldW,
                    bias + j0 * lanes, out + static_cast<std::ptrdiff_t>(p0) * ldW + j0 * lanes);
            }
        }
        for (int o = 0; o < g.outChannels; ++o) {
            float* z = x.z + o * g.outStride + static_cast<std::ptrdiff_t>(s) * positions;
            for (int p = 0; p < positions; ++p)
                z[p] = out[static_cast<std::ptrdiff_t>(p) * ldW + o];
        }
    }
}

std::size_t convInputGradientFloats(const ConvGeometry& g)
{
    return ConvInputGradientScratch(g).floats();
}

void convInputGradient(const ConvInputGradientArgs& x)
{
    const ConvGeometry& g = x.g;
    const ConvInputGradientScratch layout(g);
    float* image = x.scratch; // one sample's output gradient, padded and stuffed
    float* weights = image + layout.imageFloats; // [channel][o, ky, kx]
    const int area = g.kernelHeight * g.kernelWidth;
    const int taps = g.outChannels * area;
    for (int c = 0; c < g.channels; ++c)
        for (int o = 0; o < g.outChannels; ++o)
            for (int k = 0; k < area; ++k)
                weights[c * taps + o * area + k] = x.w[(o * g.channels + c) * area + k];
    std::fill(image, image + layout.imageFloats, 0.0f);
    const std::ptrdiff_t pitch = layout.width;
    const std::ptrdiff_t channelStride = static_cast<std::ptrdiff_t>(layout.height) * layout.width;
    // Output (oy, ox) sits at row oy * stride + kernel - 1 - padding, column likewise: dx[c][iy][ix] then reads
    // it for tap (o, ky, kx) at row iy + kernel - 1 - ky.
    const int top = g.kernelHeight - 1 - g.padding;
    const int left = g.kernelWidth - 1 - g.padding;
    TapWalk walk;
    walk.channels = g.outChannels;
    walk.kernelHeight = g.kernelHeight;
    walk.kernelWidth = g.kernelWidth;
    walk.channelStride = channelStride;
    walk.rowStep = -pitch;
    walk.columnStep = -1;
    walk.origin = (g.kernelHeight - 1) * pitch + (g.kernelWidth - 1);
    const RowVectors vectors {g.height, g.width, vectorsFor(g.width)};
    const std::int64_t outArea = static_cast<std::int64_t>(g.outHeight) * g.outWidth;
    const int lastRow = top + (g.outHeight - 1) * g.stride; // the last row of the image that holds an output
    // Kernel rows whose source rows, for input rows [first, last], miss [top, lastRow] read only zeros.
    auto kyRange = [&](int first, int last, TapWalk& w) {
        w.kyBegin = std::max(0, first + g.kernelHeight - 1 - lastRow);
        w.kyEnd = std::min(g.kernelHeight, last + g.kernelHeight - top);
    };
    for (int s = 0; s < g.samples; ++s) {
        copyInterior(x.dz + s * outArea, g.outStride, g.outChannels, g.outHeight, g.outWidth, image, channelStride,
            pitch, top * pitch + left, g.stride, g.stride);
        directImage(walk, weights, taps, g.channels, image, pitch, vectors,
            x.dx + static_cast<std::ptrdiff_t>(s) * g.height * g.width, g.inStride, g.width, nullptr, kyRange);
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
    return std::max({ConvGradientScratch(g).floats(depth), convForwardFloats(g), convInputGradientFloats(g)});
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
