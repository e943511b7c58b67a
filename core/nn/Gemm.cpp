#include "core/nn/Gemm.h"

#include <Eigen/Core>

#include <omp.h>

#include <atomic>

#ifdef SGDSCOPE_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

namespace sgdscope {

namespace {
GemmBackend initialBackend()
{
#ifdef SGDSCOPE_HAVE_OPENBLAS
    // Our workers are the parallelism: OpenBLAS itself must stay on the calling thread.
    openblas_set_num_threads(1);
    return GemmBackend::OpenBlas;
#else
    return GemmBackend::Eigen;
#endif
}

std::atomic<GemmBackend>& backendSetting()
{
    static std::atomic<GemmBackend> backend {initialBackend()};
    return backend;
}

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;
using Map = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
using ConstMap = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
} // namespace

bool openBlasAvailable()
{
#ifdef SGDSCOPE_HAVE_OPENBLAS
    return true;
#else
    return false;
#endif
}

void setGemmBackend(GemmBackend backend)
{
    backendSetting().store(openBlasAvailable() ? backend : GemmBackend::Eigen);
}

GemmBackend gemmBackend()
{
    return backendSetting().load(std::memory_order_relaxed);
}

std::string toString(GemmBackend backend)
{
    return backend == GemmBackend::OpenBlas ? "openblas" : "eigen";
}

void gemmColumnMajor(bool transposeA, bool transposeB, int m, int n, int k, const float* a, int lda, const float* b,
    int ldb, float* c, int ldc)
{
#ifdef SGDSCOPE_HAVE_OPENBLAS
    if (gemmBackend() == GemmBackend::OpenBlas) {
        // OpenBLAS's OpenMP build runs a product called outside a parallel region (a single worker runs on
        // the driving thread) on omp_get_max_threads() threads of the calling thread, whatever
        // openblas_set_num_threads said on another thread; that splits the work differently (other bits)
        // and takes cores the worker count did not ask for. Every thread that multiplies keeps it at one.
        // (Our own parallel regions always name their team size.)
        if (!omp_in_parallel() && omp_get_max_threads() != 1)
            omp_set_num_threads(1);
        cblas_sgemm(CblasColMajor, transposeA ? CblasTrans : CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans, m, n,
            k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
        return;
    }
#endif
    const ConstMap A(a, transposeA ? k : m, transposeA ? m : k, Eigen::OuterStride<>(lda));
    const ConstMap B(b, transposeB ? n : k, transposeB ? k : n, Eigen::OuterStride<>(ldb));
    Map C(c, m, n, Eigen::OuterStride<>(ldc));
    if (transposeA && transposeB)
        C.noalias() = A.transpose() * B.transpose();
    else if (transposeA)
        C.noalias() = A.transpose() * B;
    else if (transposeB)
        C.noalias() = A * B.transpose();
    else
        C.noalias() = A * B;
}

} // namespace sgdscope
