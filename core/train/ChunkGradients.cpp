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

bool SyncReduction::prepare(int batch, int chunkSize, int workers, int accum, std::size_t parameterCount)
{
    const ChunkLayout layout(batch, chunkSize);
    if (layout.batch == chunks.batch && layout.chunkSize == chunks.chunkSize && workers == m_workers
        && accum == m_accum)
        return false;
    chunks = layout;
    m_workers = workers;
    m_accum = accum;
    plan = ReductionPlan::build(chunks.chunkCount, workers, accum);
    if (buffers.size() < static_cast<std::size_t>(plan.bufferCount))
        buffers.resize(static_cast<std::size_t>(plan.bufferCount), ParamVector(parameterCount, 0.0f));
    chunkLoss.assign(static_cast<std::size_t>(chunks.chunkCount), 0.0);
    return true;
}

} // namespace sgdscope
