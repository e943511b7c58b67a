#include "core/train/ChunkGradients.h"

#include "core/common/Error.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

void addGradient(float* dst, const float* src, std::size_t first, std::size_t last)
{
    for (std::size_t i = first; i < last; ++i)
        dst[i] += src[i];
}

int computeWorkerPart(NetworkWorkspace& workspace, const ParameterLayout& layout, const float* params,
    const SampleView<float>& data, const std::uint32_t* batchIndices, const WorkerReduction& part, float scale,
    std::vector<ParamVector>& buffers, double* chunkLoss)
{
    constexpr std::size_t mostStored = 40;
    if (part.stackBuffers.size() > mostStored)
        throw SgdError("a reduction tree deeper than " + std::to_string(mostStored) + " levels");
    float* stack[mostStored] = {};
    for (std::size_t e = 0; e < part.stackBuffers.size(); ++e)
        stack[e] = buffers[static_cast<std::size_t>(part.stackBuffers[e])].data();
    int computed = 0;
    for (const WorkerPass& pass : part.passes) {
        workspace.pass(
            layout, params, data, batchIndices + pass.samples.begin, pass.samples.size(), scale, pass.program(), stack);
        const double* loss = workspace.sampleLoss();
        for (std::size_t i = 0; i < pass.steps.size(); ++i) {
            const kernels::TreeStep& step = pass.steps[i];
            if (step.leaves > 1) { // chunks of one sample each
                for (int t = 0; t < step.leaves; ++t)
                    chunkLoss[pass.stepChunk[i] + t] = loss[step.begin + t];
                continue;
            }
            double& sum = chunkLoss[pass.stepChunk[i]];
            if (!step.resume)
                sum = 0.0;
            for (int t = step.begin; t < step.end; ++t)
                sum += loss[t];
        }
        computed += pass.samples.size();
    }
    return computed;
}

bool SyncReduction::prepare(
    int batch, int chunkSize, int workers, int accum, int passSamples, std::size_t parameterCount)
{
    const ChunkLayout layout(batch, chunkSize);
    if (layout.batch == chunks.batch && layout.chunkSize == chunks.chunkSize && workers == m_workers && accum == m_accum
        && passSamples == m_passSamples)
        return false;
    chunks = layout;
    m_workers = workers;
    m_accum = accum;
    m_passSamples = passSamples;
    plan = ReductionPlan::build(chunks, workers, accum, passSamples);
    if (buffers.size() < static_cast<std::size_t>(plan.bufferCount))
        buffers.resize(static_cast<std::size_t>(plan.bufferCount), ParamVector(parameterCount, 0.0f));
    chunkLoss.assign(static_cast<std::size_t>(chunks.chunkCount), 0.0);
    return true;
}

double SyncReduction::keptLossSum(const std::vector<char>& dropped) const
{
    double loss = 0.0;
    for (std::size_t w = 0; w < plan.workers.size(); ++w) {
        if (w < dropped.size() && dropped[w])
            continue;
        for (int c = plan.workers[w].chunks.begin; c < plan.workers[w].chunks.end; ++c)
            loss += chunkLoss[static_cast<std::size_t>(c)];
    }
    return loss;
}

int SyncReduction::workerSamples(int worker) const
{
    const IndexRange c = plan.workers[static_cast<std::size_t>(worker)].chunks;
    return c.size() > 0 ? chunks.samples(c.end - 1).end - chunks.samples(c.begin).begin : 0;
}

int SyncReduction::keptSamples(const std::vector<char>& dropped) const
{
    int samples = 0;
    for (std::size_t w = 0; w < plan.workers.size(); ++w) {
        if (!(w < dropped.size() && dropped[w]))
            samples += workerSamples(static_cast<int>(w));
    }
    return samples;
}

float* SyncReduction::combineKept(const std::vector<char>& dropped, float scale, std::size_t first, std::size_t last)
{
    for (std::size_t w = 0; w < dropped.size() && w < plan.workers.size(); ++w) {
        if (!dropped[w])
            continue;
        const WorkerReduction& part = plan.workers[w];
        for (int r = 0; r < part.roots; ++r) {
            float* root = buffers[static_cast<std::size_t>(part.stackBuffers[static_cast<std::size_t>(r)])].data();
            std::fill(root + first, root + last, 0.0f);
        }
    }
    for (const MergeOp& op : plan.combine)
        addGradient(buffers[static_cast<std::size_t>(op.dst)].data(), buffers[static_cast<std::size_t>(op.src)].data(),
            first, last);
    float* g = buffers[static_cast<std::size_t>(plan.rootBuffer)].data();
    if (scale != 1.0f) {
        for (std::size_t i = first; i < last; ++i)
            g[i] *= scale;
    }
    return g;
}

double SyncReduction::applyKept(const std::vector<char>& dropped, const MomentumSgd& rule, float lr, float* params,
    float* velocity, std::size_t size)
{
    constexpr std::size_t blockFloats = 4096; // a block of every buffer stays in cache from combine to update
    const int kept = keptSamples(dropped);
    const double loss = keptLossSum(dropped) / kept;
    if (!std::isfinite(loss))
        return loss;
    const float scale = keptScale(kept);
    for (std::size_t b0 = 0; b0 < size; b0 += blockFloats) {
        const std::size_t b1 = std::min(size, b0 + blockFloats);
        rule.update(params, velocity, combineKept(dropped, scale, b0, b1), lr, b0, b1);
    }
    return loss;
}

bool SliceReduction::prepare(int samples, int chunkSize, int accum, int passSamples)
{
    const ChunkLayout layout(samples, std::min(chunkSize, samples));
    if (!plan.workers.empty() && layout.batch == chunks.batch && layout.chunkSize == chunks.chunkSize
        && accum == m_accum && passSamples == m_passSamples)
        return false;
    chunks = layout;
    m_accum = accum;
    m_passSamples = passSamples;
    plan = ReductionPlan::build(chunks, 1, accum, passSamples);
    chunkLoss.assign(static_cast<std::size_t>(chunks.chunkCount), 0.0);
    return true;
}

void SliceReduction::ensureBuffers(std::size_t parameterCount)
{
    while (buffers.size() < static_cast<std::size_t>(plan.bufferCount))
        buffers.emplace_back(parameterCount, 0.0f);
}

double SliceReduction::compute(NetworkWorkspace& workspace, const ParameterLayout& layout, const float* params,
    const SampleView<float>& data, const std::uint32_t* indices, std::vector<ParamVector>& into)
{
    computeWorkerPart(workspace, layout, params, data, indices, plan.workers.front(),
        static_cast<float>(1.0 / chunks.batch), into, chunkLoss.data());
    double loss = 0.0;
    for (const double l : chunkLoss)
        loss += l;
    return loss;
}

} // namespace sgdscope
