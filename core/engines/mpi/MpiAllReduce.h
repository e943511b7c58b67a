#pragma once

#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/engines/mpi/RankReport.h"
#include "core/train/ChunkGradients.h"
#include "core/train/UpdateRule.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace sgdscope {

/// Sync's update on the all-reduce across MPI processes (--topology allreduce), the same on every rank, every rank
/// a worker. Rank r owns segment r of the parameters (1/P of them, in whole cache lines):
///  1. reduce-scatter: each rank sends every other rank its chunks' losses and that rank's segment of the roots of
///     its part of the fixed chunk tree (MpiWorkerPart), and takes the others' segments of theirs;
///  2. each rank adds up its own segment in the tree's fixed order (SyncReduction::combineKept on the segment) and
///     applies it, with the batch's loss computed alike on every rank from every chunk's loss (not finite: nothing
///     applied, on every rank);
///  3. all-gather: each rank sends every other rank its segment of the new parameters and takes theirs.
/// Each rank sends (R + 1)(P - 1) / P of a parameter vector per update, R the roots of its part of the tree (1 when its
/// chunks make one subtree). Every element is added and updated in the same order as
/// when one rank combines the whole vector, so the bits are the tree's and the threads engine's for any P.
///
/// Waits are split as elsewhere (RankSpans::addWait): for the sender that started last (WaitBarrier, naming it) until
/// it started, for the network after. Messages to rank 0 carry the sender's spans so far (`onSpans` on rank 0 takes
/// them), so rank 0 hears of every rank twice per update.
class MpiAllReduce
{
public:
    /// Rank 0 takes the spans another rank sent, known until `sentAt` (rank 0's clock).
    using SpansArrived = std::function<void(int rank, const std::vector<Span>& spans, double sentAt)>;

    MpiAllReduce(MpiContext& mpi, std::size_t floats);

    /// Rank r's segment of the parameters: elements [first, last).
    std::size_t first(int rank) const;
    std::size_t last(int rank) const;

    /// Posts the receives of one update (both steps), before this rank sends anything, so that no peer's send waits
    /// for this rank to ask for it. `reduction`: the update's plan (it sizes the messages).
    void post(const SyncReduction& reduction);
    /// Step 1 for this rank: its part computed into `reduction`'s buffers, its chunk losses in place. Afterwards
    /// every chunk's loss, and this rank's segment of every root, are in `reduction`.
    void reduceScatter(SyncReduction& reduction, std::int64_t update, RankSpans& spans, const SpansArrived& onSpans);
    /// Step 2: adds up this rank's segment and applies it to `params` and `velocity` (in place) with `rule` at `lr`.
    /// Returns the batch's mean loss (not finite: nothing applied).
    double applySegment(SyncReduction& reduction, const MomentumSgd& rule, float lr, float* params, float* velocity);
    /// Step 3: sends this rank's segment of `params`, and takes the others' into `params`.
    void allGather(float* params, std::int64_t update, RankSpans& spans, const SpansArrived& onSpans);

private:
    /// Sends `put(out, to)` to every other rank, in steps k = 1 .. P - 1 to rank + k, each after the header (update,
    /// when sent) and, to rank 0, this rank's spans so far.
    template<class Put>
    void sendToAll(int tag, std::int64_t update, RankSpans& spans, Put&& put);
    /// Takes the other ranks' messages of `update` from `in` (its waits into `spans`, their spans to `onSpans` on
    /// rank 0), then waits for this rank's sends; `take(reader, from)` reads what follows the header and spans.
    template<class Take>
    void takeFromAll(MpiContext::PostedReceives& in, std::int64_t update, RankSpans& spans, const SpansArrived& onSpans,
        Take&& take);

    MpiContext& m_mpi;
    std::size_t m_floats;
    std::size_t m_segment; // floats of every segment but the last
    MpiContext::PostedReceives m_scatterIn;
    MpiContext::PostedReceives m_gatherIn;
    std::vector<MpiMessage> m_out; // one per other rank, kept while its send goes on
    std::vector<MpiContext::PendingSend> m_sends;
};

} // namespace sgdscope
