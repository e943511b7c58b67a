#pragma once

#include "core/nn/ParameterLayout.h"
#include "core/nn/kernels/KernelTable.h"

#include <vector>

namespace sgdscope {

struct IndexRange
{
    int begin = 0;
    int end = 0;
    int size() const { return end - begin; }
};

/// Part `index` of `count` items split into `parts` contiguous parts as equal as possible (the first
/// count % parts parts get one more).
IndexRange balancedPart(int count, int parts, int index);

/// How a batch of B samples is cut into fixed chunks: chunk c holds samples [c*C, min((c+1)*C, B)).
struct ChunkLayout
{
    int batch = 0;
    int chunkSize = 0;
    int chunkCount = 0;

    ChunkLayout() = default;
    ChunkLayout(int batchSize, int chunk);
    IndexRange samples(int chunk) const { return {chunk * chunkSize, std::min(batch, (chunk + 1) * chunkSize)}; }
};

/// The chunk size used when none is given, for a batch of B samples: as many chunks as possible while every
/// chunk keeps at least 8 samples (the kernels then sum a chunk at full speed), up to about 1,024 (B / 1,024
/// rounded down samples a chunk: 1,024 to 1,152 chunks once B reaches 8,192), and never fewer than 32 chunks
/// (chunks below 8 samples only when the batch is under 256; single samples under 64). Every P x K up to 32
/// then gives every worker's micro-batch a chunk, and so does every P up to 1,024 once B >= 8,192. It
/// depends on the batch only, never on the worker count, the micro-batches or the model: that is what makes
/// sync runs bitwise identical across P and K, and a window's run equal to its headless twin.
int defaultChunkSize(int batch);
/// The chunk size in use: `given` (--chunk; 0 for automatic) cut to the batch, else defaultChunkSize().
int chunkSizeFor(int given, int batch);

/// Samples a worker computes at once (one forward and backward pass): at most 256, fewer for wide models
/// (about 4 MB of values); any pass size gives the same bits (a chunk cut by a pass resumes in the next).
int passSamplesFor(const NetworkSpec& spec);

/// The fixed reduction of chunk gradients, and who does which part of it.
///
/// The batch gradient is defined as a fixed binary tree over the chunk gradients: node [k*2^m, (k+1)*2^m)
/// (cut at the chunk count) is the sum of its two halves, left + right; a node with an empty right half is
/// its left half; a chunk's gradient is the chain of its samples' products in sample order. P and K only
/// decide who computes which chunk and when: worker w takes a contiguous run of chunks, cut into K
/// micro-batches computed in a row, each in passes of at most passSamples samples. Inside a pass the kernels
/// sum every chunk and add up every tree node that is complete (tile by tile, in cache: kernels::TreeProgram);
/// the nodes still open between passes wait in the worker's stack buffers, and the nodes that straddle workers
/// are added in the combine step, split by element ranges over all workers. Every node is the same sum of the
/// same two values whoever computes it, so the result is bitwise the same for every P, K and pass size.
struct MergeOp
{
    int dst = 0; // gradient buffer ids: dst += src
    int src = 0;
};

/// One pass of a worker: samples [samples.begin, samples.end) of the batch, and what the kernels do with them.
struct WorkerPass
{
    IndexRange samples;
    std::vector<kernels::TreeStep> steps; // sample ranges relative to the pass
    std::vector<int> stepChunk; // the chunk of each step (of a block step: its first)
    int stackIn = 0;
    int stackOut = 0;
    int depth = 0;

    kernels::TreeProgram program() const
    {
        return {steps.data(), static_cast<int>(steps.size()), stackIn, stackOut, depth};
    }
};

struct WorkerReduction
{
    IndexRange chunks; // contiguous run of chunks
    std::vector<IndexRange> microBatches; // the run cut into K micro-batches (chunk ranges; some may be empty)
    std::vector<WorkerPass> passes; // in order
    std::vector<int> stackBuffers; // buffer id of each stack position kept between passes
    int roots = 0; // entries left when the run is done (its subtrees): stack positions 0..roots-1

    /// The tree's additions inside the run (each one gradient-sized left + right).
    int treeAdditions() const;
};

struct ReductionPlan
{
    int chunkCount = 0;
    std::vector<WorkerReduction> workers;
    std::vector<MergeOp> combine; // cross-worker additions, in order
    int rootBuffer = -1; // holds the batch gradient after the combine step
    int bufferCount = 0;

    static ReductionPlan build(const ChunkLayout& chunks, int workers, int microBatches, int passSamples);
};

} // namespace sgdscope
