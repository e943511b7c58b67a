#pragma once

#include "core/nn/ParameterLayout.h"

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

/// The chunk size used when none is given: at least 64 samples, so that every chunk's products run at
/// full GEMM speed, and more for tiny models, so that a chunk is at least ~64k multiply-adds of work;
/// at most 32 chunks per batch, and never more than the batch. It depends on the batch and the model
/// only, never on the worker count or micro-batches (that is what makes sync runs bitwise identical
/// across them).
int defaultChunkSize(int batch, const MlpSpec& spec);
/// The chunk size in use: `given` (--chunk; 0 for automatic) cut to the batch, else defaultChunkSize().
int chunkSizeFor(int given, int batch, const MlpSpec& spec);

/// The fixed reduction of chunk gradients, and who does which part of it.
///
/// The batch gradient is defined as a fixed binary tree over the chunk gradients: node [k*2^m, (k+1)*2^m)
/// (cut at the chunk count) is the sum of its two halves, left + right; a node with an empty right half is
/// its left half. P and K only decide who computes which chunk and when: worker w takes a contiguous run
/// of chunks, as micro-batches in a row, and adds up every tree node that lies entirely inside its run
/// right after computing its last chunk (while it is hot in cache); the nodes that straddle workers are
/// added in the combine step, split by element ranges over all workers. Every node is the same sum of the
/// same two values whoever computes it, so the result is bitwise the same for every P and K.
struct MergeOp
{
    int dst = 0; // gradient buffer ids: dst += src
    int src = 0;
};

struct WorkerReduction
{
    IndexRange chunks; // contiguous run of chunks
    std::vector<IndexRange> microBatches; // the run cut into K micro-batches (chunk ranges; some may be empty)
    std::vector<int> leafBuffer; // per chunk of the run: the buffer its gradient is written to
    std::vector<std::vector<MergeOp>> mergesAfter; // per chunk of the run: local additions right after it
    std::vector<int> buffers; // the buffer ids this worker owns
};

struct ReductionPlan
{
    int chunkCount = 0;
    std::vector<WorkerReduction> workers;
    std::vector<MergeOp> combine; // cross-worker additions, in order
    int rootBuffer = -1; // holds the batch gradient after the combine step
    int bufferCount = 0;

    static ReductionPlan build(int chunkCount, int workers, int microBatches);
};

} // namespace sgdscope
