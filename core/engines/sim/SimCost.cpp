#include "core/engines/sim/SimCost.h"

#include "core/data/SampleView.h"
#include "core/nn/MlpWorkspace.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

namespace sgdscope {

SimCost::SimCost(const MlpSpec& spec, const ParameterLayout& layout)
    : m_parameters(static_cast<double>(layout.parameterCount()))
{
    double macs = 0.0;
    double inputGradientMacs = 0.0;
    for (int l = 0; l < spec.layerCount(); ++l) {
        const double m = static_cast<double>(spec.layers[static_cast<std::size_t>(l)])
            * spec.layers[static_cast<std::size_t>(l) + 1];
        macs += m;
        if (l > 0)
            inputGradientMacs += m;
    }
    flopsPerSample = 2.0 * macs + 2.0 * macs + 2.0 * inputGradientMacs;
    addFlops = m_parameters;
    messageBytes = static_cast<std::uint64_t>(m_parameters) * sizeof(float);
}

double measureHostFlops(const Problem& problem, int chunk)
{
    // Every core computing at once, as P workers on P cores would (they share caches and memory bandwidth):
    // each times the real gradient of a chunk for a fifth of a second; a core's speed is its median time.
    const int n = static_cast<int>(std::min<std::int64_t>(chunk, problem.train().size()));
    const int cores = std::max(1, omp_get_max_threads());
    const SimCost cost(problem.spec, problem.layout);
    const SampleView<float> view = viewOf(problem.train());
    std::vector<double> speeds(static_cast<std::size_t>(cores), 0.0);
#pragma omp parallel num_threads(cores)
    {
        const int t = omp_get_thread_num();
        MlpWorkspace<float> workspace(problem.spec, n);
        ParamVector gradient(problem.layout.paddedSize(), 0.0f);
        std::vector<std::uint32_t> indices(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i)
            indices[static_cast<std::size_t>(i)]
                = static_cast<std::uint32_t>((i * 7919 + t * 104729) % problem.train().size());
        using Clock = std::chrono::steady_clock;
        std::vector<double> times;
        const auto start = Clock::now();
        while (times.size() < 5 || (Clock::now() - start < std::chrono::milliseconds(200) && times.size() < 100000)) {
            const auto t0 = Clock::now();
            workspace.gradient(problem.layout, problem.initialParameters.data(), view, indices.data(), n,
                1.0f / static_cast<float>(n), gradient.data());
            times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        }
        std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
        speeds[static_cast<std::size_t>(t)] = cost.flopsPerSample * n / std::max(times[times.size() / 2], 1e-12);
    }
    return std::accumulate(speeds.begin(), speeds.end(), 0.0) / static_cast<double>(speeds.size());
}

} // namespace sgdscope
