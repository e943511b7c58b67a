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
    , passSamples(passSamplesFor(problem_.spec))
    , worker(worker_)
    , workspace(problem_.spec, std::min(passSamples, settings.batch))
{
    reduction.prepare(settings.batch, chunkSizeFor(settings.chunk, settings.batch), settings.workers, settings.accum,
        passSamples, problem.layout.paddedSize());
    outgoing = mpiOutgoingBuffers(reduction.plan, worker);
}

int MpiWorkerPart::compute(const float* params, const std::uint32_t* indices)
{
    return computeWorkerPart(workspace, problem.layout, params, view, indices,
        reduction.plan.workers[static_cast<std::size_t>(worker)], static_cast<float>(1.0 / reduction.chunks.batch),
        reduction.buffers, reduction.chunkLoss.data());
}

void MpiWorkerPart::put(MpiMessage& out) const
{
    const IndexRange mine = reduction.plan.workers[static_cast<std::size_t>(worker)].chunks;
    for (int c = mine.begin; c < mine.end; ++c)
        out.put(reduction.chunkLoss[static_cast<std::size_t>(c)]);
    for (const int id : outgoing)
        out.putFloats(reduction.buffers[static_cast<std::size_t>(id)].data(), problem.layout.paddedSize());
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
