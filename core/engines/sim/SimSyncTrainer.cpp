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
    preparePlan();
}

SimSyncTrainer::~SimSyncTrainer() = default;

void SimSyncTrainer::settingsChanged()
{
    SimSyncLikeTrainer::settingsChanged();
    if (mode() == Mode::LocalSgd) // every worker goes on from the shared model (settings change between rounds)
        m_models.prepare(m_settings.workers, m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.accum,
            passSamples(), m_params);
}

double SimSyncTrainer::computeRound(int steps, double& spread)
{
    // Each worker's local steps on its own model (independent: on this machine's cores), then the average.
    const int workers = m_settings.workers;
    const auto batch = static_cast<std::size_t>(m_settings.batch);
    m_roundIndices.resize(static_cast<std::size_t>(steps) * batch);
    for (int h = 0; h < steps; ++h) {
        const std::uint32_t* indices = m_cursor.next(m_settings.batch);
        std::copy(indices, indices + batch, m_roundIndices.begin() + static_cast<std::ptrdiff_t>(h * batch));
    }
    std::vector<double> losses(static_cast<std::size_t>(workers), 0.0);
    const int threads = std::min(m_mathThreads, workers);
    const MomentumSgd rule(m_settings.momentum);
    const auto lr = static_cast<float>(m_settings.learningRate);
    std::exception_ptr failure;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(dynamic)
    for (int w = 0; w < workers; ++w) {
        try {
            for (int h = 0; h < steps; ++h) {
                const double loss = m_models.computeGradient(w, workspaceAt(omp_get_thread_num()), m_problem->layout,
                    m_view, m_roundIndices.data() + static_cast<std::size_t>(h) * batch);
                losses[static_cast<std::size_t>(w)] += loss;
                if (!std::isfinite(loss))
                    break;
                m_models.applyStep(w, rule, lr);
            }
        } catch (...) {
#pragma omp critical(sgdscope_sim_failure)
            failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
    double lossSum = 0.0;
    for (const double l : losses)
        lossSum += l;
    const double loss = lossSum / (static_cast<double>(steps) * m_settings.batch);
    if (!std::isfinite(loss))
        return loss; // diverged: no averaging
    std::vector<double> squares(static_cast<std::size_t>(workers), 0.0);
    m_models.average(m_params.data(), 0, m_params.size(), squares.data());
    spread = LocalSgdModels::meanDistance(squares.data(), workers);
    return loss;
}

void SimSyncTrainer::preparePlan()
{
    prepareReduction();
    if (mode() == Mode::LocalSgd && m_models.workers() != m_settings.workers)
        m_models.prepare(m_settings.workers, m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.accum,
            passSamples(), m_params);
}

void SimSyncTrainer::trainSome(const RunLimits& limits, double, TrainingObserver& observer)
{
    preparePlan();
    const int workers = m_settings.workers;
    const int batch = m_settings.batch;
    // How many updates this slice simulates: a deterministic function of the settings and the run's progress.
    const std::int64_t updates = updatesWithinLimits(limits, simSyncUpdatesPerSlice(workers, batch), batch);

    // The math first, in update order (it does not depend on timing): the parameters after each update and
    // each update's batch loss. A non-finite loss ends the slice there (that update is not applied). Local SGD:
    // an update is a round of up to H local steps (whole rounds: the slice's steps, at least one round).
    std::vector<double> losses;
    std::vector<double> spreads;
    Slice slice;
    if (mode() == Mode::LocalSgd) {
        std::int64_t stepsLeft = stepsToReach(m_samples, m_settings.sampleBudget, batch);
        for (std::int64_t done = 0; stepsLeft > 0 && (done == 0 || done + m_settings.localSteps <= updates);) {
            const int steps = static_cast<int>(std::min<std::int64_t>(m_settings.localSteps, stepsLeft));
            double spread = -1.0;
            losses.push_back(computeRound(steps, spread));
            spreads.push_back(spread);
            slice.steps.push_back(steps);
            done += steps;
            stepsLeft -= steps;
            if (!std::isfinite(losses.back()))
                break;
        }
    } else {
        for (std::int64_t u = 0; u < updates; ++u) {
            losses.push_back(computeUpdate(m_cursor.next(batch), {}));
            slice.steps.push_back(1);
            if (!std::isfinite(losses.back()))
                break;
        }
    }

    slice.workers = workers;
    slice.updates = static_cast<int>(losses.size());
    slice.sliceStart = SimWorld::clock();
    workerWork(slice.flops, slice.samples);
    for (int u = 0; u < slice.updates; ++u) {
        std::vector<double> factors;
        const int steps = slice.steps[static_cast<std::size_t>(u)];
        for (int w = 0; w < workers; ++w) {
            double factor = 0.0; // the mean over the update's steps (each drawn for its global step)
            for (int h = 0; h < steps; ++h)
                factor += slice.samples[static_cast<std::size_t>(w)] > 0 ? m_stragglers.slowdown(w, m_step + h) : 1.0;
            factors.push_back(factor / steps);
        }
        m_step += steps;
        slice.factor.push_back(std::move(factors));
    }
    const bool momentum = m_settings.momentum != 0.0;
    slice.addWork = SimWorld::get().memoryWork(m_cost.addFlops, m_cost.addBytes());
    slice.applyWork = SimWorld::get().memoryWork(m_cost.applyFlops(momentum), m_cost.applyBytes(momentum));
    slice.packWork = SimWorld::get().messageCopyWork(m_cost.copyBytes());
    slice.bytes = m_cost.messageBytes;
    for (int w = 0; w < workers; ++w)
        slice.upGradients.push_back(SimWorld::get().mpiProcesses() && mode() == Mode::Sync
                ? m_reduction.plan.workers[static_cast<std::size_t>(w)].roots
                : 1);
    simulate(slice);
    if (slice.failure)
        std::rethrow_exception(slice.failure);

    // Report: one window per update, from the previous update's end to this one's, with each worker's spans
    // cut at the windows' edges; on the mode's clock.
    reportUpdates(
        slice.spans, slice.updates, slice.sliceStart, [&](int u) { return slice.done[static_cast<std::size_t>(u)]; },
        [&](int u, double base) {
            const auto at = static_cast<std::size_t>(u);
            UpdateEvent event = syncUpdateEvent(batch * slice.steps[at], losses[at], slice.applied[at] + base);
            if (mode() == Mode::LocalSgd && event.applied)
                event.modelSpread = spreads[at];
            return event;
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

} // namespace sgdscope
