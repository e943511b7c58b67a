#include "core/train/Evaluator.h"
#include "core/train/DatasetView.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace sgdscope {

namespace {
constexpr int evalBlock = 1024; // samples per evaluation block (fixed: the loss sum must not depend on P)
constexpr int evalCapacity = 256;
} // namespace

EvalSums Evaluator::evaluate(
    const float* params, const Dataset& data, int threadsWanted, const std::function<bool()>& cancelled)
{
    const SampleView<float> view = viewOf(data);
    const std::int64_t n = data.size();
    const std::int64_t blocks = (n + evalBlock - 1) / evalBlock;
    const int threads = static_cast<int>(std::min<std::int64_t>(threadsWanted, std::max<std::int64_t>(1, blocks)));
    while (m_workspaces.size() < static_cast<std::size_t>(threads))
        m_workspaces.push_back(std::make_unique<NetworkWorkspace>(m_problem->spec, evalCapacity));
    std::vector<EvalSums> perBlock(static_cast<std::size_t>(blocks));
    std::exception_ptr failure;
    std::atomic<bool> skipped {false};
    const ParameterLayout& layout = m_problem->layout;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
        // Exceptions must not leave an OpenMP region: record, rethrow outside.
        try {
            if (skipped.load(std::memory_order_relaxed) || (cancelled && cancelled())) {
                skipped.store(true, std::memory_order_relaxed);
                continue;
            }
            const std::int64_t first = b * evalBlock;
            perBlock[static_cast<std::size_t>(b)]
                = m_workspaces[static_cast<std::size_t>(omp_get_thread_num())]->evaluate(
                    layout, params, view, first, std::min<std::int64_t>(evalBlock, n - first));
        } catch (...) {
#pragma omp critical(sgdscope_eval_failure)
            failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
    if (skipped.load())
        throw EvaluationCancelled();
    EvalSums total;
    for (const auto& s : perBlock) {
        total.lossSum += s.lossSum;
        total.correct += s.correct;
        total.samples += s.samples;
    }
    return total;
}

} // namespace sgdscope
