#include "core/train/ReductionPlan.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace sgdscope {

IndexRange balancedPart(int count, int parts, int index)
{
    const int base = count / parts;
    const int extra = count % parts;
    const int begin = index * base + std::min(index, extra);
    return {begin, begin + base + (index < extra ? 1 : 0)};
}

ChunkLayout::ChunkLayout(int batchSize, int chunk)
    : batch(batchSize)
    , chunkSize(std::min(chunk, batchSize))
    , chunkCount((batchSize + chunkSize - 1) / chunkSize)
{
}

int chunkSizeFor(int given, int batch, const MlpSpec& spec)
{
    return given > 0 ? std::min(given, batch) : defaultChunkSize(batch, spec);
}

int defaultChunkSize(int batch, const MlpSpec& spec)
{
    constexpr int minSamples = 64;
    constexpr double minMacs = 65536.0;
    constexpr int maxChunks = 32;
    const int forWork = static_cast<int>(std::min(1e9, std::ceil(minMacs / std::max(1.0, spec.macsPerSample()))));
    const int lower = std::max(minSamples, forWork);
    const int forCount = (batch + maxChunks - 1) / maxChunks;
    return std::max(1, std::min(batch, std::max(lower, forCount)));
}

namespace {

struct StackEntry
{
    int begin = 0;
    int end = 0;
    int buffer = 0;
};

/// Pushes `entry` and adds up, as the fixed tree says, every pair of siblings now complete on top of
/// the stack. Returns the additions made; freed buffers go to `freed`.
std::vector<MergeOp> pushAndMerge(
    std::vector<StackEntry>& stack, StackEntry entry, int chunkCount, std::vector<int>* freed)
{
    std::vector<MergeOp> ops;
    stack.push_back(entry);
    while (stack.size() >= 2) {
        const StackEntry right = stack[stack.size() - 1];
        StackEntry& left = stack[stack.size() - 2];
        const int size = left.end - left.begin;
        const bool leftIsWholeNode = std::has_single_bit(static_cast<unsigned>(size)) && left.begin % (2 * size) == 0;
        if (!leftIsWholeNode || right.begin != left.end || right.end != std::min(left.begin + 2 * size, chunkCount))
            break;
        ops.push_back({left.buffer, right.buffer});
        left.end = right.end;
        if (freed)
            freed->push_back(right.buffer);
        stack.pop_back();
    }
    return ops;
}

} // namespace

ReductionPlan ReductionPlan::build(int chunkCount, int workers, int microBatches)
{
    ReductionPlan plan;
    plan.chunkCount = chunkCount;
    std::vector<StackEntry> combined;
    for (int w = 0; w < workers; ++w) {
        WorkerReduction wr;
        wr.chunks = balancedPart(chunkCount, workers, w);
        for (int k = 0; k < microBatches; ++k) {
            const IndexRange part = balancedPart(wr.chunks.size(), microBatches, k);
            wr.microBatches.push_back({wr.chunks.begin + part.begin, wr.chunks.begin + part.end});
        }
        std::vector<StackEntry> stack;
        std::vector<int> freeBuffers;
        for (int c = wr.chunks.begin; c < wr.chunks.end; ++c) {
            int buffer = 0;
            if (!freeBuffers.empty()) {
                buffer = freeBuffers.back();
                freeBuffers.pop_back();
            } else {
                buffer = plan.bufferCount++;
                wr.buffers.push_back(buffer);
            }
            wr.leafBuffer.push_back(buffer);
            wr.mergesAfter.push_back(pushAndMerge(stack, {c, c + 1, buffer}, chunkCount, &freeBuffers));
        }
        combined.insert(combined.end(), stack.begin(), stack.end());
        plan.workers.push_back(std::move(wr));
    }
    std::vector<StackEntry> stack;
    for (const StackEntry& entry : combined) {
        const auto ops = pushAndMerge(stack, entry, chunkCount, nullptr);
        plan.combine.insert(plan.combine.end(), ops.begin(), ops.end());
    }
    plan.rootBuffer = stack.empty() ? -1 : stack.front().buffer;
    return plan;
}

} // namespace sgdscope
