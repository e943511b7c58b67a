#pragma once

#include "core/data/DataOrder.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/train/ChunkGradients.h"
#include "core/train/DatasetView.h"
#include "core/train/Problem.h"
#include "core/train/ReductionPlan.h"
#include "core/train/TrainerSettings.h"

#include <cstdint>
#include <vector>

namespace sgdscope {

/// The buffers worker w sends the rank that combines: the roots of its part of the fixed tree (which the combine
/// adds up, or the batch gradient itself), in stack order.
std::vector<int> mpiOutgoingBuffers(const ReductionPlan& plan, int worker);

/// A worker rank's part of the fixed chunk tree of a sync-like update (sync, backup): its own copy of the data
/// order, its chunks of each batch, and the update's reduction (the plan every rank builds alike; its buffers hold
/// this rank's subtrees, and on the all-reduce the others' segments of theirs).
struct MpiWorkerPart
{
    MpiWorkerPart(const Problem& problem, const TrainerSettings& settings, int worker);
    /// Its chunks' gradients of the batch `indices` at `params`; returns its samples.
    int compute(const float* params, const std::uint32_t* indices);
    /// Its chunks' losses and the roots of its subtrees, as the combining rank reads them.
    void put(MpiMessage& out) const;

    const Problem& problem;
    DataOrder order;
    BatchCursor cursor;
    SampleView<float> view;
    int passSamples;
    SyncReduction reduction;
    int worker;
    std::vector<int> outgoing;
    NetworkWorkspace workspace;
};

/// The combining rank's side of MpiWorkerPart::put: worker w's chunk losses and subtree roots, read into
/// `reduction` (their places in the fixed tree), each root of `floats` floats.
void takeWorkerPart(MpiMessageReader& in, SyncReduction& reduction, int worker, std::size_t floats);

} // namespace sgdscope
