#pragma once

#include <string>

namespace sgdscope {

/// Which library multiplies the large float matrices (the three products per layer that dominate a
/// training step). OpenBLAS (when built with it, the default on Debian) is what PyTorch uses in the peer
/// comparison; Eigen's own GEMM is the portable fallback. Either is single-threaded inside our workers and
/// gives the same bits for the same shapes, which the sync trainer's exactness needs. Small products and
/// everything in double always use Eigen.
enum class GemmBackend
{
    Eigen,
    OpenBlas
};

bool openBlasAvailable();
/// Process-wide; set it before training starts (not while a trainer runs).
void setGemmBackend(GemmBackend backend);
GemmBackend gemmBackend();
std::string toString(GemmBackend backend);

/// C (M x N, column-major, ldc) = op(A) * op(B), op(X) = X or X^T; A and B column-major with leading
/// dimensions lda and ldb. Float only.
void gemmColumnMajor(bool transposeA, bool transposeB, int m, int n, int k, const float* a, int lda, const float* b,
    int ldb, float* c, int ldc);

} // namespace sgdscope
