#pragma once

// The training kernels' interface: one table of functions per instruction-set path (Isa.h), all computing the
// same values with the same operations in the same order (KernelsImpl.h says which). Plain structs only:
// this header is included by the per-path translation units, which must not share inline code with the rest.

#include <cstddef>
#include <cstdint>

namespace sgdscope::kernels {

/// One piece of the fixed reduction tree inside a pass over samples [begin, end) of the pass: a chunk's
/// products summed in sample order, then `merges` additions of the entries below it on the stack (each
/// left + right, as ReductionPlan's tree says). `resume`: the chunk began in an earlier pass; its partial sum
/// is on top of the stack and the chain goes on from it. `complete`: the chunk ends in this pass (else the
/// partial sum goes back on the stack for the next pass, and `merges` is 0).
///
/// A block step (leaves > 1) is a whole subtree of `leaves` chunks of one sample each, leaves a power of two at
/// most maxBlockLeaves: its value is their products added pairwise, level by level (the subtree's own order),
/// then its merges. The seed example's batch of 50 is 50 such chunks; as blocks its tree takes 3 steps, not 50.
struct TreeStep
{
    std::int32_t begin = 0;
    std::int32_t end = 0;
    std::int32_t merges = 0;
    std::int32_t leaves = 1;
    bool resume = false;
    bool complete = true;
};

inline constexpr int maxBlockLeaves = 64;

/// The steps of one pass and the stack around them: `stackIn` entries are open when the pass starts (read from
/// stack positions 0..stackIn-1), `stackOut` when it ends (written back to positions 0..stackOut-1); `depth`
/// is the most entries open at once.
struct TreeProgram
{
    const TreeStep* steps = nullptr;
    int stepCount = 0;
    int stackIn = 0;
    int stackOut = 0;
    int depth = 0;
};

/// z (m x n, row stride ldz) = bias + a (m x k, row stride lda) * w^T, w row-major n x k (PyTorch's [out, in]).
/// Every z[i][j] = fma chain over k in index order starting from bias[j].
struct LinearForwardArgs
{
    int m = 0;
    int n = 0;
    int k = 0;
    const float* a = nullptr;
    std::ptrdiff_t lda = 0;
    const float* w = nullptr;
    const float* bias = nullptr;
    float* z = nullptr;
    std::ptrdiff_t ldz = 0;
    float* pack = nullptr; // packFloats(k, n) floats (best on a 64-byte boundary)
};

/// p (m x n, row stride ldp) = d (m x k, row stride ldd) * w, w row-major k x n. Every p[i][j] = fma chain over
/// k in index order starting from 0.
struct InputGradientArgs
{
    int m = 0;
    int n = 0;
    int k = 0;
    const float* d = nullptr;
    std::ptrdiff_t ldd = 0;
    const float* w = nullptr;
    float* p = nullptr;
    std::ptrdiff_t ldp = 0;
    float* pack = nullptr; // packFloats(k, n) floats (best on a 64-byte boundary)
};

/// A layer's weight and bias gradients over the samples of a pass, reduced by the tree program:
///   gw[o][i] (row-major out x in) and gb[o], for every tree leaf the fma chain over its samples s in order,
///   starting from 0, of d[s][o] * a[s][i] (gw) and d[s][o] * 1 (gb: a's column `in` holds 1 for every sample).
/// Stack position j lives in weights[j] (out x in) and biases[j] (out).
struct WeightGradientArgs
{
    int out = 0;
    int in = 0;
    int samples = 0;
    // The kernels read whole vectors (16 floats) past a row's last column: rows or buffers must have the room.
    const float* d = nullptr; // samples x out, row stride ldd
    std::ptrdiff_t ldd = 0;
    const float* a = nullptr; // samples x (in + 1), row stride lda; column `in` is 1
    std::ptrdiff_t lda = 0;
    const TreeProgram* program = nullptr;
    float* const* weights = nullptr;
    float* const* biases = nullptr;
    float* tiles = nullptr; // slotFloats(program->depth) floats: the stack entries of one tile, and scratch
};

/// The shape of a 2-D convolution (cross-correlation, as nn.Conv2d) over the samples of a pass. Images are stored
/// channel-major over the pass: value (c, s, y, x) of the input at x[c * inStride + (s * height + y) * width + x],
/// and the output likewise with its own sizes and outStride. A channel's samples lie back to back, so one
/// channel of the whole pass is a single run of positions.
struct ConvGeometry
{
    int samples = 0;
    int channels = 0; // input
    int height = 0;
    int width = 0;
    int outChannels = 0;
    int outHeight = 0;
    int outWidth = 0;
    int kernelHeight = 1;
    int kernelWidth = 1;
    int stride = 1;
    int padding = 0; // zeros on every side, less than the kernel's sides
    std::ptrdiff_t inStride = 0;
    std::ptrdiff_t outStride = 0;
};

/// z[o][s][oy][ox] = bias[o], then fma(w[o][c][ky][kx], x[c][s][iy][ix], z) for the taps (c, ky, kx) in index
/// order, iy = oy * stride - padding + ky and ix likewise, x = 0 outside the image (the padding's zeros are
/// terms of the chain). w is PyTorch's [outChannels, channels, kh, kw], row-major.
struct ConvForwardArgs
{
    ConvGeometry g;
    const float* x = nullptr;
    const float* w = nullptr;
    const float* bias = nullptr;
    float* z = nullptr;
    float* scratch = nullptr; // convScratchFloats(g, 0) floats
};

/// The gradient with respect to the input: dx[c][s][iy][ix] = 0, then fma(w[o][c][ky][kx], dz[o][s][oy][ox], dx)
/// for the taps (o, ky, kx) in index order whose output oy = (iy + padding - ky) / stride and ox likewise exists
/// (a whole number, inside the output). Taps without an output may enter the chain as products with zero: from
/// a start at +0, an fma adds an exact zero to a value that is never -0, so they change no bit (for finite w).
struct ConvInputGradientArgs
{
    ConvGeometry g;
    const float* dz = nullptr;
    const float* w = nullptr;
    float* dx = nullptr;
    float* scratch = nullptr; // convScratchFloats(g, 0) floats
};

/// A convolution's weight and bias gradients over the samples of a pass, reduced by the tree program: for every
/// tree leaf the fma chain over its samples s in order, and over each sample's output positions (oy, ox) in
/// row-major order, starting from 0, of dz[o][s][oy][ox] * x[c][s][iy][ix] (gw[o][c][ky][kx], x = 0 outside the
/// image) and of dz[o][s][oy][ox] * 1 (gb[o]). Stack position j lives in weights[j] (w's layout) and biases[j].
struct ConvWeightGradientArgs
{
    ConvGeometry g;
    const float* dz = nullptr;
    const float* x = nullptr;
    const TreeProgram* program = nullptr;
    float* const* weights = nullptr;
    float* const* biases = nullptr;
    float* scratch = nullptr; // convScratchFloats(g, program->depth) floats
};

enum class ElementFunction
{
    Tanh,
    Relu,
    Sigmoid,
    Identity
};

struct KernelTable
{
    const char* name = nullptr;
    std::size_t (*packFloats)(int k, int n) = nullptr;
    std::size_t (*slotFloats)(int depth) = nullptr;
    void (*linearForward)(const LinearForwardArgs&) = nullptr;
    void (*inputGradient)(const InputGradientArgs&) = nullptr;
    void (*weightGradient)(const WeightGradientArgs&) = nullptr;
    /// x[i] = f(x[i]) for i < count.
    void (*activate)(ElementFunction f, float* x, std::size_t count) = nullptr;
    /// delta[i] *= f'(z[i]), written in terms of the activation a[i] = f(z[i]), for i < count.
    void (*multiplyByDerivative)(ElementFunction f, float* delta, const float* a, std::size_t count) = nullptr;
    /// The working memory of the three convolution kernels (the weight gradient's for trees of `depth` levels).
    std::size_t (*convScratchFloats)(const ConvGeometry& g, int depth) = nullptr;
    void (*convForward)(const ConvForwardArgs&) = nullptr;
    void (*convInputGradient)(const ConvInputGradientArgs&) = nullptr;
    void (*convWeightGradient)(const ConvWeightGradientArgs&) = nullptr;
};

extern const KernelTable scalarKernels; // built without instruction-set flags: std::fma is a library call
extern const KernelTable scalarFmaKernels; // the same source with FMA instructions (CPUs that have FMA)
extern const KernelTable avx2Kernels;
extern const KernelTable avx512Kernels;

/// The table of the active path (activeIsa()).
const KernelTable& activeKernels();

} // namespace sgdscope::kernels
