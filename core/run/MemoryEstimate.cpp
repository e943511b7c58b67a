#include "core/run/MemoryEstimate.h"

#include "core/train/ReductionPlan.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

double modelMemoryBytes(const MlpSpec& spec, const TrainerSettings& settings, int chunkSize, const MemoryShape& shape)
{
    double params = 0.0;
    double widths = 0.0;
    double widest = 0.0;
    double largestLayer = 0.0;
    for (int l = 0; l < spec.layerCount(); ++l) {
        const double in = spec.layers[static_cast<std::size_t>(l)];
        const double out = spec.layers[static_cast<std::size_t>(l) + 1];
        params += in * out + out + 32; // with alignment padding
        largestLayer = std::max(largestLayer, (in + 64) * (out + 64));
    }
    for (const int w : spec.layers) {
        widths += w;
        widest = std::max(widest, static_cast<double>(w));
    }
    const double p = std::max(1, settings.workers);
    const double chunk = std::max(1, chunkSize);
    const double chunks = std::ceil(std::max(1, settings.batch) / chunk);
    const double treeDepth = std::ceil(std::log2(std::max(2.0, chunks))) + 1;
    const double reductionBuffers = std::min(chunks, p * treeDepth) + 1;
    // A workspace holds a pass (at most passSamplesFor the model) of every layer's values and two layers of
    // deltas, rows padded, and the packed weights of its largest layer; the evaluator's, 256 samples.
    const double pass = std::min<double>(passSamplesFor(spec), std::max(1, settings.batch));
    const double perSample = widths + 3 * widest + 17.0 * static_cast<double>(spec.layers.size());
    const double workspace = perSample * pass + largestLayer + perSample * 256; // training + evaluation
    // Workspaces: one per worker thread here; per machine thread for the simulated cluster (it computes the
    // workers' parts on this machine's cores); one in an MPI process.
    const double computing = shape.engine == EngineKind::Threads ? p
        : shape.engine == EngineKind::Sim ? std::min(p, static_cast<double>(std::max(1, shape.machineThreads)))
                                          : 1.0;
    const double sync = params * (3 + reductionBuffers) + computing * workspace;
    // Async: every worker's snapshot and momentum (held by the server under MPI, with a receive buffer per
    // worker), and the reduction buffers of those computing.
    const double async = params * (1 + 2 * p + computing * treeDepth) + computing * workspace;
    return 4.0 * ((shape.sync ? sync : 0.0) + (shape.async ? async : 0.0) + 2 * params);
}

} // namespace sgdscope
