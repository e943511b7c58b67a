#include "core/nn/Pooling.h"

#include <cstdint>

namespace sgdscope {

namespace {
/// Where in `in` the kept value of the window at (Y, X) of the output is (PyTorch's max_pool2d rule).
std::ptrdiff_t maxIndex(const PoolShape& s, const float* in, int y, int x)
{
    std::ptrdiff_t best
        = static_cast<std::ptrdiff_t>(y) * s.kernelHeight * s.width + static_cast<std::ptrdiff_t>(x) * s.kernelWidth;
    float largest = in[best];
    for (int ky = 0; ky < s.kernelHeight; ++ky) {
        const std::ptrdiff_t row = (static_cast<std::ptrdiff_t>(y) * s.kernelHeight + ky) * s.width
            + static_cast<std::ptrdiff_t>(x) * s.kernelWidth;
        for (int kx = 0; kx < s.kernelWidth; ++kx) {
            const float v = in[row + kx];
            if (v > largest || v != v) {
                largest = v;
                best = row + kx;
            }
        }
    }
    return best;
}
} // namespace

void maxPoolForward(const PoolShape& s, const float* in, float* out)
{
    const int outRows = s.rows / s.kernelHeight;
    const int outWidth = s.width / s.kernelWidth;
    if (s.kernelHeight == 2 && s.kernelWidth == 2) {
        // The common 2 x 2 window, written out: the same comparisons in the same order.
        for (int y = 0; y < outRows; ++y) {
            const float* top = in + static_cast<std::ptrdiff_t>(2 * y) * s.width;
            const float* bottom = top + s.width;
            float* o = out + static_cast<std::ptrdiff_t>(y) * outWidth;
            for (int x = 0; x < outWidth; ++x) {
                float m = top[2 * x];
                const float b = top[2 * x + 1];
                const float c = bottom[2 * x];
                const float d = bottom[2 * x + 1];
                m = b > m || b != b ? b : m;
                m = c > m || c != c ? c : m;
                m = d > m || d != d ? d : m;
                o[x] = m;
            }
        }
        return;
    }
    for (int y = 0; y < outRows; ++y)
        for (int x = 0; x < outWidth; ++x)
            out[static_cast<std::ptrdiff_t>(y) * outWidth + x] = in[maxIndex(s, in, y, x)];
}

void maxPoolBackward(const PoolShape& s, const float* in, const float* dOut, float* dIn)
{
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(s.rows) * s.width;
    for (std::ptrdiff_t i = 0; i < count; ++i)
        dIn[i] = 0.0f;
    const int outRows = s.rows / s.kernelHeight;
    const int outWidth = s.width / s.kernelWidth;
    for (int y = 0; y < outRows; ++y)
        for (int x = 0; x < outWidth; ++x)
            dIn[maxIndex(s, in, y, x)] = dOut[static_cast<std::ptrdiff_t>(y) * outWidth + x];
}

void avgPoolForward(const PoolShape& s, const float* in, float* out)
{
    const int outRows = s.rows / s.kernelHeight;
    const int outWidth = s.width / s.kernelWidth;
    const auto count = static_cast<float>(s.kernelHeight * s.kernelWidth);
    for (int y = 0; y < outRows; ++y) {
        for (int x = 0; x < outWidth; ++x) {
            const float* corner = in + static_cast<std::ptrdiff_t>(y) * s.kernelHeight * s.width
                + static_cast<std::ptrdiff_t>(x) * s.kernelWidth;
            float sum = corner[0];
            for (int ky = 0; ky < s.kernelHeight; ++ky)
                for (int kx = ky == 0 ? 1 : 0; kx < s.kernelWidth; ++kx)
                    sum = sum + corner[static_cast<std::ptrdiff_t>(ky) * s.width + kx];
            out[static_cast<std::ptrdiff_t>(y) * outWidth + x] = sum / count;
        }
    }
}

void avgPoolBackward(const PoolShape& s, const float* dOut, float* dIn)
{
    const int outRows = s.rows / s.kernelHeight;
    const int outWidth = s.width / s.kernelWidth;
    const auto count = static_cast<float>(s.kernelHeight * s.kernelWidth);
    for (int y = 0; y < outRows; ++y) {
        for (int x = 0; x < outWidth; ++x) {
            const float g = dOut[static_cast<std::ptrdiff_t>(y) * outWidth + x] / count;
            float* corner = dIn + static_cast<std::ptrdiff_t>(y) * s.kernelHeight * s.width
                + static_cast<std::ptrdiff_t>(x) * s.kernelWidth;
            for (int ky = 0; ky < s.kernelHeight; ++ky)
                for (int kx = 0; kx < s.kernelWidth; ++kx)
                    corner[static_cast<std::ptrdiff_t>(ky) * s.width + kx] = g;
        }
    }
}

} // namespace sgdscope
