#include "core/engines/sim/SimServerTrainer.h"

#include "core/common/Error.h"
#include "core/engines/sim/SpanWindows.h"
#include "core/train/BackupRule.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <deque>
#include <exception>

namespace sgdscope {

namespace sg4 = simgrid::s4u;

struct SimServerTrainer::Slice
{
    int workers = 0;
    int updates = 0;
    int keep = 0; // gradients applied per update
    double sliceStart = 0.0;
    std::vector<double> flops; // per worker: its part of the batch and its tree additions (per step)
    std::vector<int> steps; // [update]: local-sgd: the round's local steps; else 1
    std::vector<int> samples; // per worker
    std::vector<std::vector<double>> factor; // [update][worker] straggler factor
    double applyWork = 0.0;
    std::uint64_t bytes = 0;
    // Simulation state.
    int current = 0; // updates applied in this slice: the parameters of update `current` are the server's
    struct Arrival
    {
        int worker, update;
    };
    std::deque<Arrival> arrivals; // gradients at the server, in the order they arrived
    sg4::SemaphorePtr arrived;
    std::vector<sg4::SemaphorePtr> wake; // per worker: an update was applied
    std::vector<std::shared_ptr<void>> running; // per worker: its computation in progress (to cancel)
    std::vector<int> computing; // per worker: the update it computes for, -1 if none
    // Results, in virtual seconds.
    std::vector<std::vector<char>> dropped; // [update][worker]
    std::vector<int> completedBy; // [update]: the worker whose gradient completed it
    std::vector<double> completedAt; // [update]: when that gradient arrived
    std::vector<double> applied; // [update]: the server applied it
    std::vector<std::vector<Span>> spans; // per worker
    double end = 0.0; // every worker has the last parameters
    std::exception_ptr failure;
};

SimServerTrainer::SimServerTrainer(
    std::shared_ptr<const Problem> problem, TrainerSettings settings, SimPlatformChoice platform, int hosts, Mode mode)
    : SimSyncLikeTrainer(std::move(problem), std::move(settings), mode, std::move(platform), hosts, true)
{
    if (!isSyncLike(mode))
        throw SgdError(std::string("the simulated cluster's parameter server for team-wide modes cannot run mode ")
            + modeName(mode));
}

SimServerTrainer::~SimServerTrainer() = default;

void SimServerTrainer::trainSome(const RunLimits& limits, double, TrainingObserver& observer)
{
    prepareReduction();
    const int workers = m_settings.workers;
    const int batch = m_settings.batch;
    const std::int64_t updates = updatesWithinLimits(limits, simSyncUpdatesPerSlice(workers, batch), batch);

    Slice slice;
    slice.workers = workers;
    slice.steps = sliceSteps(updates);
    slice.updates = static_cast<int>(slice.steps.size());
    slice.sliceStart = SimWorld::clock();
    workerWork(slice.flops, slice.samples);
    // Backup keeps the first P - B gradients; sync and local SGD every worker's (that has samples).
    slice.keep = backupGradientsKept(m_reduction, mode() == Mode::Backup ? m_settings.backupWorkers : 0);
    slice.factor = drawFactors(slice.steps, slice.samples);
    const bool momentum = m_settings.momentum != 0.0;
    slice.applyWork = SimWorld::get().memoryWork(
        m_cost.applyFlops(momentum) + m_cost.addFlops * static_cast<double>(slice.keep - 1),
        m_cost.applyBytes(momentum) + m_cost.addBytes() * static_cast<double>(slice.keep - 1));
    slice.bytes = m_cost.messageBytes;
    simulate(slice);
    if (slice.failure)
        std::rethrow_exception(slice.failure);

    // The math, in update order, with each update's gradients as the timing kept them; and the report: one window
    // per update, from the server's previous apply to this one (the last to the slice's end).
    reportUpdates(
        slice.spans, slice.updates, slice.sliceStart,
        [&](int u) { return u + 1 == slice.updates ? slice.end : slice.applied[static_cast<std::size_t>(u)]; },
        [&](int u, double base) {
            const auto at = static_cast<std::size_t>(u);
            if (mode() == Mode::LocalSgd) {
                double spread = -1.0;
                const RoundLoss loss = computeRound(slice.steps[at], spread, m_samples);
                return localRoundEvent(slice.steps[at], loss, spread, slice.applied[at] + base);
            }
            const std::vector<char>& dropped = slice.dropped[at];
            const double loss = computeUpdate(m_cursor.next(batch), dropped, m_samples);
            UpdateEvent event = syncUpdateEvent(batch, loss, slice.applied[at] + base);
            if (mode() == Mode::Backup) {
                const DroppedGradients left = droppedGradients(m_reduction, dropped);
                event.droppedGradients = left.gradients;
                event.droppedSamples = left.samples;
            }
            return event;
        },
        observer);
}

void SimServerTrainer::simulate(Slice& slice)
{
    const int workers = slice.workers;
    const std::vector<sg4::Host*> hosts = SimWorld::get().place(workers, true);
    sg4::Host* serverHost = hosts[static_cast<std::size_t>(workers)];
    const auto count = static_cast<std::size_t>(workers);
    const auto updates = static_cast<std::size_t>(slice.updates);
    slice.arrived = sg4::Semaphore::create(0);
    for (int w = 0; w < workers; ++w)
        slice.wake.push_back(sg4::Semaphore::create(0));
    slice.running.assign(count, nullptr);
    slice.computing.assign(count, -1);
    slice.dropped.assign(updates, std::vector<char>(count, 0));
    slice.completedBy.assign(updates, -1);
    slice.completedAt.assign(updates, slice.sliceStart);
    slice.applied.assign(updates, slice.sliceStart);
    slice.spans.assign(count, {});

    sg4::Actor::create("parameter-server", serverHost, [&slice] {
        SimWorld::guarded(slice.failure, [&slice] {
            for (int u = 0; u < slice.updates; ++u) {
                std::vector<char> kept(static_cast<std::size_t>(slice.workers), 0);
                for (int got = 0; got < slice.keep;) {
                    slice.arrived->acquire();
                    const Slice::Arrival a = slice.arrivals.front();
                    slice.arrivals.pop_front();
                    if (a.update != u)
                        continue; // a gradient of an update already applied: dropped
                    kept[static_cast<std::size_t>(a.worker)] = 1;
                    if (++got == slice.keep) {
                        slice.completedBy[static_cast<std::size_t>(u)] = a.worker;
                        slice.completedAt[static_cast<std::size_t>(u)] = SimWorld::clock();
                    }
                }
                // The update no longer waits for the others: their work on it stops here.
                for (int w = 0; w < slice.workers; ++w) {
                    const auto me = static_cast<std::size_t>(w);
                    slice.dropped[static_cast<std::size_t>(u)][me] = !kept[me] && slice.samples[me] > 0;
                    if (slice.computing[me] == u)
                        SimWorld::cancel(slice.running[me]);
                }
                SimWorld::compute(slice.applyWork); // adding the kept gradients and applying the update
                slice.applied[static_cast<std::size_t>(u)] = SimWorld::clock();
                slice.current = u + 1;
                for (const auto& wake : slice.wake)
                    wake->release();
            }
        });
    });
    for (int w = 0; w < workers; ++w) {
        sg4::Host* host = hosts[static_cast<std::size_t>(w)];
        sg4::Actor::create("server-worker-" + std::to_string(w), host, [&slice, host, serverHost, w] {
            SimWorld::guarded(slice.failure, [&] {
                const auto me = static_cast<std::size_t>(w);
                auto span = [&](SpanKind kind, double start, double end, int samples = 0, int culprit = -1) {
                    if (end > start)
                        slice.spans[me].push_back({w, kind, start, end, samples, culprit == w ? -1 : culprit});
                };
                int have = 0; // every worker starts the slice with the parameters of its first update
                while (have < slice.updates) {
                    const int u = have;
                    const double flops = slice.flops[me] * slice.steps[static_cast<std::size_t>(u)];
                    if (slice.samples[me] > 0) {
                        // Compute, then the straggler's delay (the same work again factor - 1 times), each cut
                        // short if the update gets its gradients meanwhile.
                        slice.computing[me] = u;
                        const double start = SimWorld::clock();
                        const bool computed = SimWorld::computeCancellable(flops, slice.running[me]);
                        span(SpanKind::Compute, start, SimWorld::clock(), computed ? slice.samples[me] : 0);
                        const double delayStart = SimWorld::clock();
                        const double factor = slice.factor[static_cast<std::size_t>(u)][me];
                        const bool ready = computed
                            && (factor <= 1.0
                                || SimWorld::computeCancellable(flops * (factor - 1.0), slice.running[me]));
                        span(SpanKind::Delay, delayStart, SimWorld::clock());
                        slice.computing[me] = -1;
                        if (ready) {
                            const double uploadStart = SimWorld::clock();
                            SimWorld::get().send(host, serverHost, slice.bytes);
                            span(SpanKind::Communicate, uploadStart, SimWorld::clock());
                            slice.arrivals.push_back({w, u});
                            slice.arrived->release();
                        }
                    }
                    // Wait for the update to be applied (a worker that is behind takes the newest parameters).
                    const double waitFrom = SimWorld::clock();
                    while (slice.current <= u)
                        slice.wake[me]->acquire();
                    have = slice.current;
                    const auto done = static_cast<std::size_t>(have - 1);
                    const double completed = std::clamp(slice.completedAt[done], waitFrom, SimWorld::clock());
                    span(SpanKind::WaitBarrier, waitFrom, completed, 0, slice.completedBy[done]);
                    span(SpanKind::WaitBarrier, completed, SimWorld::clock()); // the server's apply
                    // Download the newest parameters (again, if another update was applied meanwhile: a gradient of
                    // those it has would be dropped anyway).
                    const double downloadStart = SimWorld::clock();
                    SimWorld::get().send(serverHost, host, slice.bytes);
                    while (slice.current > have) {
                        have = slice.current;
                        SimWorld::get().send(serverHost, host, slice.bytes);
                    }
                    span(SpanKind::WaitNetwork, downloadStart, SimWorld::clock());
                }
                slice.end = std::max(slice.end, SimWorld::clock());
            });
        });
    }
    SimWorld::get().run();
    slice.end = std::max(slice.end, slice.applied.empty() ? slice.sliceStart : slice.applied.back());
    // A worker that got the last parameters early waited for the others to get theirs.
    waitForTheEnd(slice.spans, slice.sliceStart, slice.end);
}

} // namespace sgdscope
