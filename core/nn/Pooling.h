#pragma once

#include <cstddef>

namespace sgdscope {

/// Pooling over windows that lie side by side (stride = window), on one channel of a pass: the samples' images
/// back to back, so the channel is one image of samples x height rows (a window never spans two samples, since
/// the window's height divides the image's). `rows` x `width` values in, (rows / kh) x (width / kw) out, both
/// row-major and contiguous. Comparisons and IEEE operations only: the same bits on every CPU.
struct PoolShape
{
    int rows = 0; // samples x image height
    int width = 0;
    int kernelHeight = 1;
    int kernelWidth = 1;
};

/// out = the largest value of each window, in the window's row-major order a value replacing the largest so far
/// if it is larger or NaN (PyTorch's rule: a NaN propagates, and of equal values the first is kept).
void maxPoolForward(const PoolShape& s, const float* in, float* out);
/// dIn = dOut at the largest value of each window (the one maxPoolForward kept, found again from `in`), 0 elsewhere.
void maxPoolBackward(const PoolShape& s, const float* in, const float* dOut, float* dIn);
/// out = (the window's values added in row-major order) / (kh x kw).
void avgPoolForward(const PoolShape& s, const float* in, float* out);
/// dIn = dOut / (kh x kw) at every value of the window.
void avgPoolBackward(const PoolShape& s, const float* dOut, float* dIn);

} // namespace sgdscope
