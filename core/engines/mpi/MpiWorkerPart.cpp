#include "core/engines/mpi/MpiWorkerPart.h"

#include <algorithm>

namespace sgdscope {

std::vector<int> mpiOutgoingBuffers(const ReductionPlan& plan, int worker)
{
    const WorkerReduction& mine = plan.workers[static_cast<std::size_t>(worker)];
    return {mine.stackBuffers.begin(), mine.stackBuffers.begin() + mine.roots};
}

MpiWorkerPart::MpiWorkerPart(const Problem& problem_, const TrainerSettings& settings, int worker_)
    : problem(problem_)
    , order(problem_.train().size(), settings.seed)
    , cursor(order)
    , view(viewOf(problem_.train()))
    , chunks(settings.batch, chunkSizeFor(settings.chunk, settings.batch))
    , passSamples(passSamplesFor(problem_.spec))
    , plan(ReductionPlan::build(chunks, settings.workers, settings.accum, passSamples))
    , worker(worker_)
    , outgoing(mpiOutgoingBuffers(plan, worker_))
    , workspace(problem_.spec, std::min(passSamples, settings.batch))
    , buffers(static_cast<std::size_t>(plan.bufferCount), ParamVector(problem_.layout.paddedSize(), 0.0f))
    , chunkLoss(static_cast<std::size_t>(chunks.chunkCount), 0.0)
{
}

int MpiWorkerPart::compute(const float* params, const std::uint32_t* indices)
{
    return computeWorkerPart(workspace, problem.layout, params, view, indices,
        plan.workers[static_cast<std::size_t>(worker)], static_cast<float>(1.0 / chunks.batch), buffers,
        chunkLoss.data());
}

void MpiWorkerPart::put(MpiMessage& out) const
{
    const IndexRange mine = plan.workers[static_cast<std::size_t>(worker)].chunks;
    for (int c = mine.begin; c < mine.end; ++c)
        out.put(chunkLoss[static_cast<std::size_t>(c)]);
    for (const int id : outgoing)
        out.putFloats(buffers[static_cast<std::size_t>(id)].data(), problem.layout.paddedSize());
}

void takeWorkerPart(MpiMessageReader& in, SyncReduction& reduction, int worker, std::size_t floats)
{
    const IndexRange chunks = reduction.plan.workers[static_cast<std::size_t>(worker)].chunks;
    for (int c = chunks.begin; c < chunks.end; ++c)
        reduction.chunkLoss[static_cast<std::size_t>(c)] = in.get<double>();
    for (const int id : mpiOutgoingBuffers(reduction.plan, worker))
        in.getFloats(reduction.buffers[static_cast<std::size_t>(id)].data(), floats);
}

} // namespace sgdscope
