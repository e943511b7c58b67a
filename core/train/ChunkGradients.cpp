#include "core/train/ChunkGradients.h"

namespace sgdscope {

void addGradient(float* dst, const float* src, std::size_t first, std::size_t last)
{
    for (std::size_t i = first; i < last; ++i)
        dst[i] += src[i];
}

int computeWorkerPart(MlpWorkspace<float>& workspace, const ParameterLayout& layout, const float* params,
    const SampleView<float>& data, const std::uint32_t* batchIndices, const ChunkLayout& chunks,
    const WorkerReduction& part, float scale, std::vector<ParamVector>& buffers, double* chunkLoss)
{
    int computed = 0;
    const std::size_t size = layout.paddedSize();
    // K micro-batches in a row; each is a run of whole chunks (the unit of the fixed reduction).
    for (const IndexRange& micro : part.microBatches) {
        for (int c = micro.begin; c < micro.end; ++c) {
            const auto local = static_cast<std::size_t>(c - part.chunks.begin);
            const IndexRange samples = chunks.samples(c);
            float* leaf = buffers[static_cast<std::size_t>(part.leafBuffer[local])].data();
            chunkLoss[c]
                = workspace.gradient(layout, params, data, batchIndices + samples.begin, samples.size(), scale, leaf);
            computed += samples.size();
            for (const MergeOp& op : part.mergesAfter[local])
                addGradient(buffers[static_cast<std::size_t>(op.dst)].data(),
                    buffers[static_cast<std::size_t>(op.src)].data(), 0, size);
        }
    }
    return computed;
}

} // namespace sgdscope
