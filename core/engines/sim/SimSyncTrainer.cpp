#include "core/engines/sim/SimSyncTrainer.h"

#include "core/common/Error.h"
#include "core/engines/sim/SpanWindows.h"
#include "core/train/BinomialTree.h"
#include "core/train/ChunkGradients.h"
#include "core/train/LocalSgd.h"
#include "core/train/UpdateRule.h"

#include <simgrid/s4u.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <exception>
#include <thread>

namespace sgdscope {

namespace sg4 = simgrid::s4u;

struct SimSyncTrainer::Slice
{
    int workers = 0;
    int updates = 0;
    double sliceStart = 0.0; // virtual clock at the start
    std::vector<double> flops; // per worker: its part of the batch and its tree additions, in flops
    std::vector<std::vector<double>> factor; // [update][worker] straggler factor (local-sgd: the mean of its steps')
    std::vector<int> steps; // [update]: local-sgd: the round's local steps (each is flops[w] of work); else 1
    std::vector<int> samples; // per worker, per update
    double addWork = 0.0; // flops at the host's speed (SimWorld::memoryWork)
    double applyWork = 0.0;
    double packWork = 0.0; // local-mpi: a message copied into its buffer, or out of it
    std::uint64_t bytes = 0;
    /// Per worker: the gradients its message up carries. 1, but on local-mpi in sync, where it is what the MPI
    /// engine's rank sends: the roots of its part of the fixed chunk tree (none for a worker without chunks: its
    /// message is a header, which takes the latency).
    std::vector<int> upGradients;
    // Simulation state.
    std::vector<std::deque<std::pair<int, double>>> arrivals; // per worker: gradients arrived (child, send start)
    std::vector<sg4::SemaphorePtr> gradientArrived;
    std::vector<sg4::SemaphorePtr> parametersArrived;
    std::vector<double> parametersSent; // per worker: when its parent started sending it the parameters
    // All-reduce: per worker, the segments that arrived (sender, send start): its shares of the gradient, then of
    // the parameters.
    std::vector<std::deque<std::pair<int, double>>> sharesIn;
    std::vector<std::deque<std::pair<int, double>>> segmentsIn;
    std::vector<sg4::SemaphorePtr> shareArrived;
    std::vector<sg4::SemaphorePtr> segmentArrived;
    std::vector<std::vector<double>> readyAt; // [update][worker]: when it finished its compute and delay
    std::vector<int> lastOfAll; // [update]: the worker that finished its compute and delay last, -1 until asked
    // Results, in virtual seconds.
    std::vector<std::vector<Span>> spans; // per worker
    std::vector<double> done; // per update: the parameters reached the last worker
    std::vector<double> applied; // per update: the root applied it
    std::exception_ptr failure;
};

SimSyncTrainer::SimSyncTrainer(
    std::shared_ptr<const Problem> problem, TrainerSettings settings, SimPlatformChoice platform, int hosts, Mode mode)
    : SimSyncLikeTrainer(std::move(problem), std::move(settings), mode, std::move(platform), hosts, false)
{
    if (mode != Mode::Sync && mode != Mode::LocalSgd)
        throw SgdError(std::string("the simulated cluster's sync trainer cannot run mode ") + modeName(mode));
    if (m_settings.topology == Topology::ParameterServer)
        throw SgdError("the simulated cluster's tree and all-reduce trainer does not run on a parameter server");
}

SimSyncTrainer::~SimSyncTrainer() = default;

void SimSyncTrainer::trainSome(const RunLimits& limits, double, TrainingObserver& observer)
{
    prepareReduction();
    const int workers = m_settings.workers;
    const int batch = m_settings.batch;
    // How many updates this slice simulates: a deterministic function of the settings and the run's progress.
    const std::int64_t updates = updatesWithinLimits(limits, simSyncUpdatesPerSlice(workers, batch), batch);

    // The math first, in update order (it does not depend on timing): the parameters after each update and
    // each update's batch loss. A non-finite loss ends the slice there (that update is not applied). Local SGD:
    // an update is a round of up to H local steps (whole rounds: the slice's steps, at least one round).
    std::vector<double> losses;
    std::vector<RoundLoss> rounds; // local-sgd
    std::vector<double> spreads;
    Slice slice;
    std::int64_t samplesDone = m_samples; // before each update (the learning rate's schedule)
    for (const int steps : sliceSteps(updates)) {
        double spread = -1.0;
        if (mode() == Mode::LocalSgd) {
            rounds.push_back(computeRound(steps, spread, samplesDone));
            losses.push_back(rounds.back().mean());
        } else {
            losses.push_back(computeUpdate(m_cursor.next(batch), {}, samplesDone));
        }
        samplesDone += static_cast<std::int64_t>(steps) * batch;
        spreads.push_back(spread);
        slice.steps.push_back(steps);
        if (!std::isfinite(losses.back()))
            break;
    }

    slice.workers = workers;
    slice.updates = static_cast<int>(losses.size());
    slice.sliceStart = SimWorld::clock();
    workerWork(slice.flops, slice.samples);
    slice.factor = drawFactors(slice.steps, slice.samples);
    const bool momentum = m_settings.momentum != 0.0;
    slice.addWork = SimWorld::get().memoryWork(m_cost.addFlops, m_cost.addBytes());
    slice.applyWork = SimWorld::get().memoryWork(m_cost.applyFlops(momentum), m_cost.applyBytes(momentum));
    slice.packWork = SimWorld::get().messageCopyWork(m_cost.copyBytes());
    slice.bytes = m_cost.messageBytes;
    for (int w = 0; w < workers; ++w)
        slice.upGradients.push_back(SimWorld::get().mpiProcesses() && mode() == Mode::Sync
                ? m_reduction.plan.workers[static_cast<std::size_t>(w)].roots
                : 1);
    if (m_settings.topology == Topology::AllReduce)
        simulateAllReduce(slice);
    else
        simulate(slice);
    if (slice.failure)
        std::rethrow_exception(slice.failure);

    // Report: one window per update, from the previous update's end to this one's, with each worker's spans
    // cut at the windows' edges; on the mode's clock.
    reportUpdates(
        slice.spans, slice.updates, slice.sliceStart, [&](int u) { return slice.done[static_cast<std::size_t>(u)]; },
        [&](int u, double base) {
            const auto at = static_cast<std::size_t>(u);
            if (mode() == Mode::LocalSgd)
                return localRoundEvent(slice.steps[at], rounds[at], spreads[at], slice.applied[at] + base);
            return syncUpdateEvent(batch, losses[at], slice.applied[at] + base);
        },
        observer);
}

void SimSyncTrainer::simulate(Slice& slice)
{
    const int workers = slice.workers;
    const std::vector<sg4::Host*> hosts = SimWorld::get().place(workers, false);
    slice.arrivals.assign(static_cast<std::size_t>(workers), {});
    slice.parametersSent.assign(static_cast<std::size_t>(workers), 0.0);
    slice.spans.assign(static_cast<std::size_t>(workers), {});
    slice.done.assign(static_cast<std::size_t>(slice.updates), 0.0);
    slice.applied.assign(static_cast<std::size_t>(slice.updates), 0.0);
    slice.readyAt.assign(
        static_cast<std::size_t>(slice.updates), std::vector<double>(static_cast<std::size_t>(workers), 0.0));
    slice.lastOfAll.assign(static_cast<std::size_t>(slice.updates), -1); // parameters come after every gradient
    for (int w = 0; w < workers; ++w) {
        slice.gradientArrived.push_back(sg4::Semaphore::create(0));
        slice.parametersArrived.push_back(sg4::Semaphore::create(0));
    }
    for (int w = 0; w < workers; ++w) {
        sg4::Actor::create("sync-worker-" + std::to_string(w), hosts[static_cast<std::size_t>(w)], [&slice, &hosts, w] {
            SimWorld::guarded(slice.failure, [&slice, &hosts, w] {
                const auto me = static_cast<std::size_t>(w);
                auto span = [&](SpanKind kind, double start, double end, int samples = 0) {
                    if (end > start)
                        slice.spans[me].push_back({w, kind, start, end, samples});
                };
                // Waiting for something a peer sends: before it started sending it is waiting for the peer (named:
                // the worker that finished its compute last among those it waited for), after that for the network.
                auto waitFor = [&](const sg4::SemaphorePtr& semaphore, auto sentAt, auto culprit) {
                    const double from = SimWorld::clock();
                    semaphore->acquire();
                    const double sent = std::clamp(sentAt(), from, SimWorld::clock());
                    if (sent > from) {
                        const int whom = culprit();
                        slice.spans[me].push_back({w, SpanKind::WaitBarrier, from, sent, 0, whom == w ? -1 : whom});
                    }
                    span(SpanKind::WaitNetwork, sent, SimWorld::clock());
                };
                // The last of workers [first, last) to finish its compute and delay in update u.
                auto lastReady = [&slice](int u, int first, int last) {
                    const std::vector<double>& ready = slice.readyAt[static_cast<std::size_t>(u)];
                    int whom = first;
                    for (int x = first + 1; x < last; ++x) {
                        if (ready[static_cast<std::size_t>(x)] > ready[static_cast<std::size_t>(whom)])
                            whom = x;
                    }
                    return whom;
                };
                const std::vector<int> children = binomialChildren(w, slice.workers);
                for (int u = 0; u < slice.updates; ++u) {
                    // The work at the host's speed; a straggler's factor is that much more work of the same kind.
                    const double start = SimWorld::clock();
                    const double computed
                        = SimWorld::computeDelayed(slice.flops[me] * slice.steps[static_cast<std::size_t>(u)],
                            slice.factor[static_cast<std::size_t>(u)][me]);
                    span(SpanKind::Compute, start, computed, slice.samples[me]);
                    span(SpanKind::Delay, computed, SimWorld::clock());
                    slice.readyAt[static_cast<std::size_t>(u)][me] = SimWorld::clock();
                    for (std::size_t c = 0; c < children.size(); ++c) {
                        std::pair<int, double> arrival;
                        waitFor(
                            slice.gradientArrived[me],
                            [&] {
                                arrival = slice.arrivals[me].front();
                                slice.arrivals[me].pop_front();
                                return arrival.second;
                            },
                            [&] { // the child's subtree: workers child .. child + its lowest set bit - 1
                                const int child = arrival.first;
                                return lastReady(u, child, std::min(slice.workers, child + (child & -child)));
                            });
                        const double addStart = SimWorld::clock();
                        // local-mpi: out of the message (0 elsewhere)
                        SimWorld::compute(slice.packWork * slice.upGradients[static_cast<std::size_t>(arrival.first)]);
                        SimWorld::compute(slice.addWork);
                        span(SpanKind::Apply, addStart, SimWorld::clock());
                    }
                    if (w != 0) {
                        const int parent = binomialParent(w);
                        const double packStart = SimWorld::clock();
                        SimWorld::compute(slice.packWork * slice.upGradients[me]); // local-mpi: into the message
                        span(SpanKind::Communicate, packStart, SimWorld::clock());
                        const double sendStart = SimWorld::clock();
                        SimWorld::get().send(hosts[me], hosts[static_cast<std::size_t>(parent)],
                            slice.bytes * static_cast<std::uint64_t>(slice.upGradients[me]));
                        span(SimWorld::get().uploadSpanKind(), sendStart, SimWorld::clock());
                        slice.arrivals[static_cast<std::size_t>(parent)].emplace_back(w, sendStart);
                        slice.gradientArrived[static_cast<std::size_t>(parent)]->release();
                        waitFor(
                            slice.parametersArrived[me], [&] { return slice.parametersSent[me]; },
                            [&] { // every worker waits for the same one: found once per update, not O(P) each
                                int& last = slice.lastOfAll[static_cast<std::size_t>(u)];
                                if (last < 0)
                                    last = lastReady(u, 0, slice.workers);
                                return last;
                            });
                        const double unpackStart = SimWorld::clock();
                        SimWorld::compute(slice.packWork); // local-mpi: the parameters out of the message
                        span(SpanKind::Communicate, unpackStart, SimWorld::clock());
                    } else {
                        const double applyStart = SimWorld::clock();
                        SimWorld::compute(slice.applyWork);
                        span(SpanKind::Apply, applyStart, SimWorld::clock());
                        slice.applied[static_cast<std::size_t>(u)] = SimWorld::clock();
                    }
                    if (!children.empty()) {
                        const double packStart = SimWorld::clock();
                        SimWorld::compute(slice.packWork); // local-mpi: the parameters into the message, once
                        span(SpanKind::Communicate, packStart, SimWorld::clock());
                    }
                    for (auto it = children.rbegin(); it != children.rend(); ++it) {
                        const auto child = static_cast<std::size_t>(*it);
                        const double sendStart = SimWorld::clock();
                        slice.parametersSent[child] = sendStart;
                        SimWorld::get().send(hosts[me], hosts[child], slice.bytes);
                        span(SpanKind::Communicate, sendStart, SimWorld::clock());
                        slice.parametersArrived[child]->release();
                    }
                    auto& done = slice.done[static_cast<std::size_t>(u)];
                    done = std::max(done, SimWorld::clock());
                }
            });
        });
    }
    SimWorld::get().run();
    // A worker that got the last parameters early waited for the slowest to get them: that is its wait at the
    // end of the slice (the next slice starts when everybody has them).
    // (For the tree's last messages.)
    waitForTheEnd(slice.spans, slice.sliceStart, slice.done.empty() ? slice.sliceStart : slice.done.back());
}

void SimSyncTrainer::simulateAllReduce(Slice& slice)
{
    const int workers = slice.workers;
    const auto count = static_cast<std::size_t>(workers);
    const std::vector<sg4::Host*> hosts = SimWorld::get().place(workers, false);
    slice.spans.assign(count, {});
    slice.done.assign(static_cast<std::size_t>(slice.updates), 0.0);
    slice.applied.assign(static_cast<std::size_t>(slice.updates), 0.0);
    slice.readyAt.assign(static_cast<std::size_t>(slice.updates), std::vector<double>(count, 0.0));
    slice.sharesIn.assign(count, {});
    slice.segmentsIn.assign(count, {});
    for (int w = 0; w < workers; ++w) {
        slice.shareArrived.push_back(sg4::Semaphore::create(0));
        slice.segmentArrived.push_back(sg4::Semaphore::create(0));
    }
    // A segment is 1/P of the parameters: its message, its additions, its apply and (local-mpi) its packing.
    const double part = 1.0 / workers;
    const auto segmentBytes = static_cast<std::uint64_t>(std::ceil(static_cast<double>(slice.bytes) * part));
    for (int w = 0; w < workers; ++w) {
        sg4::Actor::create("allreduce-worker-" + std::to_string(w), hosts[static_cast<std::size_t>(w)],
            [&slice, &hosts, w, workers, part, segmentBytes] {
                SimWorld::guarded(slice.failure, [&] {
                    const auto me = static_cast<std::size_t>(w);
                    auto span = [&](SpanKind kind, double start, double end, int samples = 0, int culprit = -1) {
                        if (end > start)
                            slice.spans[me].push_back({w, kind, start, end, samples, culprit == w ? -1 : culprit});
                    };
                    // Sends one segment to each other worker, in steps k = 1 .. P - 1 (to w + k), one at a time.
                    auto sendToAll = [&](std::vector<std::deque<std::pair<int, double>>>& in,
                                         std::vector<sg4::SemaphorePtr>& arrived, SpanKind kind) {
                        for (int k = 1; k < workers; ++k) {
                            const auto to = static_cast<std::size_t>((w + k) % workers);
                            const double packStart = SimWorld::clock();
                            SimWorld::compute(slice.packWork * part); // local-mpi: into the message
                            span(SpanKind::Communicate, packStart, SimWorld::clock());
                            const double sendStart = SimWorld::clock();
                            SimWorld::get().send(hosts[me], hosts[to], segmentBytes);
                            span(kind, sendStart, SimWorld::clock());
                            in[to].emplace_back(w, sendStart);
                            arrived[to]->release();
                        }
                    };
                    // Takes the P - 1 segments the others send: waiting before a sender started is waiting for that
                    // peer (named), after it for the network; `each` runs after each one arrived.
                    auto takeFromAll = [&](std::deque<std::pair<int, double>>& in, const sg4::SemaphorePtr& arrived,
                                           const auto& each) {
                        for (int k = 1; k < workers; ++k) {
                            const double from = SimWorld::clock();
                            arrived->acquire();
                            const auto [sender, sentAt] = in.front();
                            in.pop_front();
                            const double sent = std::clamp(sentAt, from, SimWorld::clock());
                            span(SpanKind::WaitBarrier, from, sent, 0, sender);
                            span(SpanKind::WaitNetwork, sent, SimWorld::clock());
                            each();
                        }
                    };
                    for (int u = 0; u < slice.updates; ++u) {
                        const auto at = static_cast<std::size_t>(u);
                        const double start = SimWorld::clock();
                        const double computed
                            = SimWorld::computeDelayed(slice.flops[me] * slice.steps[at], slice.factor[at][me]);
                        span(SpanKind::Compute, start, computed, slice.samples[me]);
                        span(SpanKind::Delay, computed, SimWorld::clock());
                        slice.readyAt[at][me] = SimWorld::clock();
                        // Reduce-scatter: its shares of the others' segments out, the shares of its own in, each
                        // added (the fixed tree's additions of one segment: 1/P of an addition of the whole).
                        sendToAll(slice.sharesIn, slice.shareArrived, SimWorld::get().uploadSpanKind());
                        takeFromAll(slice.sharesIn[me], slice.shareArrived[me], [&] {
                            const double addStart = SimWorld::clock();
                            SimWorld::compute(slice.packWork * part); // local-mpi: out of the message
                            SimWorld::compute(slice.addWork * part);
                            span(SpanKind::Apply, addStart, SimWorld::clock());
                        });
                        const double applyStart = SimWorld::clock();
                        SimWorld::compute(slice.applyWork * part); // its segment of the update
                        span(SpanKind::Apply, applyStart, SimWorld::clock());
                        slice.applied[at] = std::max(slice.applied[at], SimWorld::clock());
                        // All-gather: its segment of the parameters out, the others' in.
                        sendToAll(slice.segmentsIn, slice.segmentArrived, SpanKind::Communicate);
                        takeFromAll(slice.segmentsIn[me], slice.segmentArrived[me], [&] {
                            const double unpackStart = SimWorld::clock();
                            SimWorld::compute(slice.packWork * part); // local-mpi: out of the message
                            span(SpanKind::Communicate, unpackStart, SimWorld::clock());
                        });
                        slice.done[at] = std::max(slice.done[at], SimWorld::clock());
                    }
                });
            });
    }
    SimWorld::get().run();
    // A worker that had every segment early waited for the others to have theirs.
    waitForTheEnd(slice.spans, slice.sliceStart, slice.done.empty() ? slice.sliceStart : slice.done.back());
}

} // namespace sgdscope
