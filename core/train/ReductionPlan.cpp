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

int chunkSizeFor(int given, int batch)
{
    return given > 0 ? std::min(given, batch) : defaultChunkSize(batch);
}

int defaultChunkSize(int batch)
{
    constexpr int fullSpeedSamples = 8;
    constexpr int fewestChunks = 32;
    constexpr int mostChunks = 1024;
    const int forCount = std::min(fullSpeedSamples, batch / fewestChunks);
    const int forMost = batch / mostChunks;
    return std::max(1, std::max(forCount, forMost));
}

int passSamplesFor(const NetworkSpec& spec)
{
    constexpr int mostSamples = 256;
    constexpr double floatsPerPass = 1 << 20; // 4 MB of activations and deltas
    double perSample = 0;
    double widest = 0;
    if (spec.isMlp()) {
        for (const int width : spec.widths()) {
            perSample += width + 17; // the bias column and the padding of a row
            widest = std::max(widest, width + 17.0);
        }
    } else {
        for (const TensorShape& s : spec.shapes()) {
            perSample += static_cast<double>(s.size()) + (s.flat ? 17.0 : 0.0);
            widest = std::max(widest, static_cast<double>(s.size()) + 17.0);
        }
    }
    perSample += 2 * widest;
    return static_cast<int>(std::clamp(std::floor(floatsPerPass / perSample), 1.0, double(mostSamples)));
}

int WorkerReduction::treeAdditions() const
{
    int additions = 0;
    for (const WorkerPass& pass : passes) {
        for (const kernels::TreeStep& step : pass.steps)
            additions += step.merges;
    }
    return additions;
}

namespace {

struct StackEntry
{
    int begin = 0; // chunks [begin, end)
    int end = 0;
    int buffer = -1;
};

/// Whether the top two entries of the stack are siblings of the fixed tree (their sum is a node).
bool topAreSiblings(const std::vector<StackEntry>& stack, int chunkCount)
{
    if (stack.size() < 2)
        return false;
    const StackEntry& right = stack[stack.size() - 1];
    const StackEntry& left = stack[stack.size() - 2];
    const int size = left.end - left.begin;
    const bool leftIsWholeNode = std::has_single_bit(static_cast<unsigned>(size)) && left.begin % (2 * size) == 0;
    return leftIsWholeNode && right.begin == left.end && right.end == std::min(left.begin + 2 * size, chunkCount);
}

/// Pushes `entry` and adds up every pair of siblings now complete on top of the stack; returns the additions
/// (left's buffer += right's).
std::vector<MergeOp> pushAndMerge(std::vector<StackEntry>& stack, StackEntry entry, int chunkCount)
{
    std::vector<MergeOp> ops;
    stack.push_back(entry);
    while (topAreSiblings(stack, chunkCount)) {
        ops.push_back({stack[stack.size() - 2].buffer, stack.back().buffer});
        stack[stack.size() - 2].end = stack.back().end;
        stack.pop_back();
    }
    return ops;
}

/// A worker's passes over its run of chunks, as K micro-batches in a row, each cut into passes of at most
/// passSamples samples; the stack of open tree nodes carries from pass to pass.
void planPasses(WorkerReduction& wr, const ChunkLayout& layout, int passSamples)
{
    std::vector<StackEntry> stack; // the open nodes; a chunk not yet complete is on top, with end = begin
    std::size_t stored = 0; // stack positions that ever had to wait between passes
    for (const IndexRange& micro : wr.microBatches) {
        if (micro.size() == 0)
            continue;
        const int first = layout.samples(micro.begin).begin;
        const int last = layout.samples(micro.end - 1).end;
        for (int p0 = first; p0 < last; p0 += passSamples) {
            WorkerPass pass;
            pass.samples = {p0, std::min(last, p0 + passSamples)};
            pass.stackIn = static_cast<int>(stack.size());
            pass.depth = pass.stackIn;
            const int firstChunk = p0 / layout.chunkSize;
            for (int c = firstChunk; c < micro.end; ++c) {
                const IndexRange chunk = layout.samples(c);
                if (chunk.begin >= pass.samples.end)
                    break;
                kernels::TreeStep step;
                step.begin = std::max(chunk.begin, pass.samples.begin) - p0;
                step.end = std::min(chunk.end, pass.samples.end) - p0;
                step.resume = chunk.begin < pass.samples.begin;
                step.complete = chunk.end <= pass.samples.end;
                if (step.resume)
                    stack.pop_back(); // the partial chunk on top continues
                pass.depth = std::max(pass.depth, static_cast<int>(stack.size()) + 1);
                if (step.complete && !step.resume && layout.chunkSize == 1) {
                    // Chunks of one sample: the largest whole subtree from here inside the pass and the
                    // micro-batch is one block step (at most maxBlockLeaves leaves).
                    const int end = std::min({micro.end, pass.samples.end, layout.chunkCount});
                    int leaves = 1;
                    while (2 * leaves <= kernels::maxBlockLeaves && c % (2 * leaves) == 0 && c + 2 * leaves <= end)
                        leaves *= 2;
                    step.leaves = leaves;
                    step.end = step.begin + leaves;
                    step.merges = static_cast<int>(pushAndMerge(stack, {c, c + leaves}, layout.chunkCount).size());
                    pass.steps.push_back(step);
                    pass.stepChunk.push_back(c);
                    c += leaves - 1;
                    continue;
                }
                if (step.complete) {
                    step.merges = static_cast<int>(pushAndMerge(stack, {c, c + 1}, layout.chunkCount).size());
                } else {
                    stack.push_back({c, c}); // open: resumes in the next pass
                }
                pass.steps.push_back(step);
                pass.stepChunk.push_back(c);
            }
            pass.stackOut = static_cast<int>(stack.size());
            stored
                = std::max({stored, static_cast<std::size_t>(pass.stackIn), static_cast<std::size_t>(pass.stackOut)});
            wr.passes.push_back(std::move(pass));
        }
    }
    wr.roots = static_cast<int>(stack.size());
    wr.stackBuffers.assign(stored, -1);
}

} // namespace

ReductionPlan ReductionPlan::build(const ChunkLayout& chunks, int workers, int microBatches, int passSamples)
{
    ReductionPlan plan;
    plan.chunkCount = chunks.chunkCount;
    std::vector<StackEntry> combined; // every worker's subtrees, in chunk order
    for (int w = 0; w < workers; ++w) {
        WorkerReduction wr;
        wr.chunks = balancedPart(chunks.chunkCount, workers, w);
        for (int k = 0; k < microBatches; ++k) {
            const IndexRange part = balancedPart(wr.chunks.size(), microBatches, k);
            wr.microBatches.push_back({wr.chunks.begin + part.begin, wr.chunks.begin + part.end});
        }
        planPasses(wr, chunks, std::max(1, passSamples));
        for (int& id : wr.stackBuffers)
            id = plan.bufferCount++;
        // The subtrees the run leaves, in order: rebuild their chunk ranges by replaying the run's tree.
        std::vector<StackEntry> stack;
        for (int c = wr.chunks.begin; c < wr.chunks.end; ++c)
            pushAndMerge(stack, {c, c + 1}, chunks.chunkCount);
        for (std::size_t i = 0; i < stack.size(); ++i)
            combined.push_back({stack[i].begin, stack[i].end, wr.stackBuffers[i]});
        plan.workers.push_back(std::move(wr));
    }
    std::vector<StackEntry> stack;
    for (const StackEntry& entry : combined) {
        const auto ops = pushAndMerge(stack, entry, chunks.chunkCount);
        plan.combine.insert(plan.combine.end(), ops.begin(), ops.end());
    }
    plan.rootBuffer = stack.empty() ? -1 : stack.front().buffer;
    return plan;
}

} // namespace sgdscope
