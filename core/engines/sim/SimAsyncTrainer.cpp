#include "core/engines/sim/SimAsyncTrainer.h"

#include "core/common/Error.h"
#include "core/train/ChunkGradients.h"
#include "core/train/SspGate.h"
#include "core/train/UpdateRule.h"

#include <simgrid/s4u.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <exception>
#include <map>
#include <thread>

namespace sgdscope {

namespace sg4 = simgrid::s4u;

namespace {
// A slice drains every worker (they all restart together, which is not how a running cluster behaves), so
// slices are long: evaluations happen inside the simulation, without stopping anybody.
constexpr std::int64_t maxPushesPerSlice = simAsyncPushesPerSlice;
// Below a million flops of math (a fraction of a millisecond on one core), the gradients in flight are computed on
// one thread.
constexpr double minParallelFlops = 1e6;
} // namespace

/// A worker's state across slices, and its one push in flight.
struct SimAsyncTrainer::WorkerState
{
    explicit WorkerState(const DataOrder& order)
        : cursor(order)
    {
    }
    BatchCursor cursor;
    IndexRange slice; // its slice of every batch
    ParamVector velocity;
    std::int64_t pushes = 0;
    // The push in flight.
    bool assigned = false;
    bool computed = false;
    int count = 0;
    std::int64_t versionRead = 0;
    std::vector<std::uint32_t> indices;
    ParamVector snapshot;
    SliceReduction reduction; // of the push in flight (its buffers: a thread's scratch)
    double treeAdditions = 0.0; // of its plan: additions of one gradient into another
    ParamVector gradient; // of the push in flight, once computed
    double loss = 0.0;
    std::int64_t clockLead = -1; // ssp: of the push in flight
    double boundWait = -1.0; // ssp: how long the bound held it before the push in flight (virtual seconds)
};

struct SimAsyncTrainer::Slice
{
    int workers = 0;
    std::int64_t pushesLeft = 0;
    double deadline = 0.0; // virtual clock after which no push starts (a time-limited slice, the window's)
    bool stopped = false; // diverged, target reached or asked to stop: no new pushes
    std::int64_t samplesApplied = 0; // by the run, after the latest applied push
    double modeBase = 0.0; // the mode's clock = virtual clock + modeBase
    std::vector<std::pair<std::size_t, EvaluationRecord>> evaluations; // after push i (index into pushes)
    double sliceStart = 0.0;
    std::deque<std::pair<int, double>> ready; // gradients at the server: (worker, when its upload ended)
    sg4::SemaphorePtr readySignal;
    std::vector<sg4::SemaphorePtr> wake; // per worker: the server has answered
    std::vector<double> answered; // per worker: when the server started sending the parameters
    // ssp: the workers' clocks and those the bound holds back; per worker since when it is held and who released it.
    SspGate ssp;
    std::vector<double> heldFrom;
    std::vector<int> releasedBy;
    int active = 0; // workers with a push in flight
    std::int64_t version = 0; // updates applied so far (the run's), the server's version counter
    std::vector<UpdateEvent> pushes; // in apply order, each at the virtual time it was applied
    std::vector<std::vector<Span>> spans; // per worker
    std::vector<double> exitAt; // per worker: when it left the slice
    double end = 0.0;
    std::exception_ptr failure;
};

SimAsyncTrainer::SimAsyncTrainer(
    std::shared_ptr<const Problem> problem, TrainerSettings settings, SimPlatformChoice platform, int hosts, Mode mode)
    : Trainer(std::move(problem), std::move(settings), mode)
    , m_platform(std::move(platform))
    , m_compensation(mode == Mode::DcAsgd ? m_settings.dcLambda : 0.0, m_settings.dcAdaptive, m_params.size())
    , m_cost(m_problem->spec, m_problem->layout)
{
    if (mode != Mode::Async && mode != Mode::DcAsgd && mode != Mode::Ssp)
        throw SgdError(std::string("the simulated cluster's async trainer cannot run mode ") + modeName(mode));
    SimWorld::get().ensurePlatform(m_platform, std::max(hosts, m_settings.workers + 1));
    SimWorld::get().place(m_settings.workers, true); // throws if they do not fit
    m_mathThreads = std::max(1, omp_get_max_threads()); // this machine's cores for the math (OMP_NUM_THREADS)
    prepareWorkers();
}

SimAsyncTrainer::~SimAsyncTrainer() = default;

void SimAsyncTrainer::settingsChanged()
{
    SimWorld::get().place(m_settings.workers, true); // throws if they do not fit
    if (mode() == Mode::DcAsgd)
        m_compensation.setLambda(m_settings.dcLambda); // the server's, from the next slice
    prepareWorkers();
}

void SimAsyncTrainer::prepareWorkers()
{
    const int team = m_settings.workers;
    // Workers that exist carry on from the furthest batch any of them reached; new ones join there.
    const WorkerState* leader = nullptr;
    for (const auto& w : m_workers) {
        if (!leader || w->pushes > leader->pushes)
            leader = w.get();
    }
    const BatchCursor leaderCursor = leader ? leader->cursor : BatchCursor(m_order);
    const std::int64_t furthest = leader ? leader->pushes : 0;
    const bool resync = !m_workers.empty();
    if (m_workers.size() > static_cast<std::size_t>(team))
        m_workers.resize(static_cast<std::size_t>(team));
    while (m_workers.size() < static_cast<std::size_t>(team))
        m_workers.push_back(std::make_unique<WorkerState>(m_order));
    for (int w = 0; w < team; ++w) {
        WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
        s.slice = balancedPart(m_settings.batch, team, w);
        if (resync) {
            s.cursor = leaderCursor;
            s.pushes = furthest;
        }
        if (s.velocity.size() != m_params.size()) {
            s.velocity.assign(m_params.size(), 0.0f);
            s.snapshot.assign(m_params.size(), 0.0f);
        }
    }
    for (int t = 0; t < m_mathThreads; ++t)
        workspace(t);
    m_scratch.resize(static_cast<std::size_t>(m_mathThreads));
}

bool SimAsyncTrainer::pushAvailable(const Slice& slice, int w) const
{
    const WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
    const std::int64_t budgetLeft = m_settings.sampleBudget - m_claimedSamples;
    return !(slice.stopped || slice.pushesLeft <= 0 || s.slice.size() == 0 || budgetLeft <= 0 || stopRequestedNow()
        || SimWorld::clock() >= slice.deadline || (target().reached && m_settings.stopAtTarget));
}

bool SimAsyncTrainer::assignPush(Slice& slice, int w)
{
    WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
    s.assigned = false;
    if (!pushAvailable(slice, w))
        return false;
    const std::int64_t budgetLeft = m_settings.sampleBudget - m_claimedSamples;
    // Worker w's n-th push uses slice w of global batch n (the last push of the run takes what is left).
    const int count = static_cast<int>(std::min<std::int64_t>(s.slice.size(), budgetLeft));
    const std::uint32_t* batch = s.cursor.next(m_settings.batch);
    s.indices.assign(batch + s.slice.begin, batch + s.slice.begin + count);
    s.count = count;
    m_claimedSamples += count;
    --slice.pushesLeft;
    s.versionRead = slice.version;
    std::copy(m_params.begin(), m_params.end(), s.snapshot.begin());
    if (s.reduction.prepare(count, chunkSizeFor(m_settings.batch), m_settings.accum, passSamples()))
        s.treeAdditions = s.reduction.plan.workers.front().treeAdditions();
    s.assigned = true;
    s.computed = false;
    s.clockLead = slice.ssp.lead(w);
    return true;
}

bool SimAsyncTrainer::answer(Slice& slice, int w, int releasedBy)
{
    const auto me = static_cast<std::size_t>(w);
    const bool bounded = mode() == Mode::Ssp;
    if (bounded && pushAvailable(slice, w) && !slice.ssp.mayStart(w)) {
        // Too far ahead of the slowest: it may start this push when the slowest has caught up.
        slice.ssp.hold(w);
        slice.heldFrom[me] = SimWorld::clock();
        return false;
    }
    const bool assigned = assignPush(slice, w);
    if (assigned && bounded)
        m_workers[me]->boundWait = slice.heldFrom[me] >= 0 ? SimWorld::clock() - slice.heldFrom[me] : 0.0;
    slice.releasedBy[me] = releasedBy;
    slice.answered[me] = SimWorld::clock();
    slice.wake[me]->release();
    if (!assigned && bounded && slice.ssp.takingPart(w)) {
        // It leaves the slice: the others no longer wait for it.
        slice.ssp.leave(w);
        releaseHeld(slice, w);
    }
    return assigned;
}

void SimAsyncTrainer::releaseHeld(Slice& slice, int by)
{
    for (int w = slice.ssp.nextReleased(); w >= 0; w = slice.ssp.nextReleased()) {
        if (answer(slice, w, by))
            ++slice.active;
    }
}

void SimAsyncTrainer::computePending(Slice& slice)
{
    std::vector<WorkerState*> pending;
    for (int w = 0; w < slice.workers; ++w) {
        WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
        if (s.assigned && !s.computed)
            pending.push_back(&s);
    }
    const int jobs = static_cast<int>(pending.size());
    // This machine's threads for the real math, where there is enough of it to pay for waking them (the parabola's
    // gradients are a few hundred flops: a parallel loop over them costs more than it saves).
    double work = 0.0;
    for (const WorkerState* s : pending)
        work += s->count * m_cost.flopsPerSample;
    const int threads = work >= minParallelFlops ? std::min(m_mathThreads, jobs) : 1;
    // Every thread's scratch holds the most buffers a pending gradient needs, allocated outside the parallel loop.
    std::size_t mostBuffers = 0;
    for (const WorkerState* s : pending)
        mostBuffers = std::max(mostBuffers, static_cast<std::size_t>(s->reduction.plan.bufferCount));
    for (int t = 0; t < threads; ++t) {
        std::vector<ParamVector>& scratch = m_scratch[static_cast<std::size_t>(t)];
        if (scratch.size() < mostBuffers)
            scratch.resize(mostBuffers);
        for (ParamVector& b : scratch)
            b.resize(m_params.size(), 0.0f); // the one a gradient was swapped out of comes back empty
    }
    std::exception_ptr failure;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(dynamic)
    for (int j = 0; j < jobs; ++j) {
        try {
            WorkerState& s = *pending[static_cast<std::size_t>(j)];
            std::vector<ParamVector>& scratch = m_scratch[static_cast<std::size_t>(omp_get_thread_num())];
            ParamVector& root = scratch[static_cast<std::size_t>(s.reduction.plan.rootBuffer)];
            if (root.size() != m_params.size())
                root.assign(m_params.size(), 0.0f);
            const double loss = s.reduction.compute(workspaceAt(omp_get_thread_num()), m_problem->layout,
                s.snapshot.data(), m_view, s.indices.data(), scratch);
            s.gradient.swap(root);
            s.loss = loss / s.count;
            s.computed = true;
        } catch (...) {
#pragma omp critical(sgdscope_sim_failure)
            failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
}

void SimAsyncTrainer::trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer)
{
    const int workers = m_settings.workers;
    std::int64_t pushes = maxPushesPerSlice;
    if (limits.maxUpdates != std::numeric_limits<std::int64_t>::max())
        pushes = std::min(pushes, std::max<std::int64_t>(1, limits.maxUpdates - (m_updates - m_runStartUpdates)));

    Slice slice;
    if (m_kept) { // the last slice's vectors, with their room: allocating them anew each slice fragmented the heap
        slice.pushes.swap(m_kept->pushes);
        slice.spans.swap(m_kept->spans);
        slice.pushes.clear();
    }
    slice.workers = workers;
    slice.pushesLeft = pushes;
    slice.version = m_updates;
    slice.samplesApplied = m_samples;
    slice.sliceStart = SimWorld::clock();
    slice.modeBase = m_seconds - slice.sliceStart;
    slice.deadline = std::isfinite(limits.maxSeconds)
        ? slice.sliceStart + std::max(0.0, limits.maxSeconds - (m_seconds - sliceStartSeconds))
        : std::numeric_limits<double>::infinity();
    simulate(slice);
    if (slice.failure)
        std::rethrow_exception(slice.failure);

    const double base = m_seconds - slice.sliceStart;
    std::vector<Span>& spans = m_reported;
    spans.clear();
    std::size_t spanCount = 0;
    for (const auto& w : slice.spans)
        spanCount += w.size() + 1;
    spans.reserve(spanCount);
    for (int w = 0; w < workers; ++w) {
        for (Span s : slice.spans[static_cast<std::size_t>(w)]) {
            s.start += base;
            s.end += base;
            spans.push_back(s);
        }
        spans.push_back(
            {w, SpanKind::WaitSlice, slice.exitAt[static_cast<std::size_t>(w)] + base, slice.end + base, 0});
    }
    reportWorkerTime(WorkWindow {slice.sliceStart + base, slice.end + base, workers}, spans, observer);
    m_seconds = slice.end + base;
    std::size_t nextEvaluation = 0;
    for (std::size_t i = 0; i < slice.pushes.size(); ++i) {
        UpdateEvent event = slice.pushes[i];
        event.seconds += base;
        countPush(event);
        reportUpdate(event, observer);
        // (Evaluations follow applied pushes only.)
        for (; nextEvaluation < slice.evaluations.size() && slice.evaluations[nextEvaluation].first == i;
             ++nextEvaluation)
            reportEvaluation(slice.evaluations[nextEvaluation].second, observer);
    }
    if (!m_kept)
        m_kept = std::make_unique<Slice>();
    m_kept->pushes.swap(slice.pushes);
    m_kept->spans.swap(slice.spans);
}

void SimAsyncTrainer::simulate(Slice& slice)
{
    const int workers = slice.workers;
    const std::vector<sg4::Host*> hosts = SimWorld::get().place(workers, true);
    sg4::Host* serverHost = hosts[static_cast<std::size_t>(workers)];
    slice.readySignal = sg4::Semaphore::create(0);
    for (int w = 0; w < workers; ++w)
        slice.wake.push_back(sg4::Semaphore::create(0));
    slice.answered.assign(static_cast<std::size_t>(workers), slice.sliceStart);
    slice.spans.resize(static_cast<std::size_t>(workers));
    for (auto& w : slice.spans)
        w.clear();
    // Room for what the slice records when the run's sample budget bounds it (the window's time-limited slices
    // make far fewer pushes than their cap): growing these vectors copied them over and over at thousands of
    // workers.
    if (m_settings.sampleBudget != std::numeric_limits<std::int64_t>::max()) {
        const std::int64_t perPush = std::max(1, m_settings.batch / workers);
        const std::int64_t budgetPushes = (m_settings.sampleBudget - m_claimedSamples) / perPush + workers;
        const auto expected
            = static_cast<std::size_t>(std::max<std::int64_t>(0, std::min(slice.pushesLeft, budgetPushes)));
        slice.pushes.reserve(expected);
        for (auto& spans : slice.spans) // read, network, compute, delay, upload
            spans.reserve(5 * (expected / static_cast<std::size_t>(workers) + 1));
    }
    slice.exitAt.assign(static_cast<std::size_t>(workers), slice.sliceStart);
    const bool momentum = m_settings.momentum != 0.0;
    // dc-asgd: the compensation, about 5 flops per parameter over the gradient, the parameters and the snapshot.
    const double parameters = static_cast<double>(m_params.size());
    const double compensationFlops = m_compensation.active() ? 5.0 * parameters : 0.0;
    const double compensationBytes = m_compensation.active() ? 16.0 * parameters : 0.0;
    // local-mpi: the server also copies the gradient out of its message and the parameters into its answer.
    const double applyFlops = SimWorld::get().memoryWork(m_cost.applyFlops(momentum) + compensationFlops,
                                  m_cost.applyBytes(momentum) + compensationBytes)
        + 2.0 * SimWorld::get().messageCopyWork(m_cost.copyBytes());
    const double packWork = SimWorld::get().messageCopyWork(m_cost.copyBytes()); // local-mpi: the push's message
    // local: a worker copies the parameters in memory (as the threads engine's do) instead of receiving them.
    const double copyWork = SimWorld::get().stepsMeasured() ? SimWorld::get().memoryWork(0.0, m_cost.copyBytes()) : 0.0;
    const double flopsPerSample = m_cost.flopsPerSample;
    const double addFlops = SimWorld::get().stepsMeasured() ? 0.0 : m_cost.addFlops; // local: in the measured step
    const std::uint64_t bytes = m_cost.messageBytes;

    // The server hands out everybody's first push of the slice at its start (ssp: to those the bound lets start).
    slice.ssp.reset(m_settings.sspBound, workers);
    slice.heldFrom.assign(static_cast<std::size_t>(workers), -1.0);
    slice.releasedBy.assign(static_cast<std::size_t>(workers), -1);
    if (mode() == Mode::Ssp) {
        for (int w = 0; w < workers; ++w) {
            const WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
            if (s.slice.size() > 0) {
                slice.ssp.join(w, s.pushes);
            }
        }
    }
    for (int w = 0; w < workers; ++w) {
        if (answer(slice, w, -1))
            ++slice.active;
    }

    sg4::Actor::create("parameter-server", serverHost, [this, &slice, applyFlops] {
        SimWorld::guarded(slice.failure, [this, &slice, applyFlops] {
            const MomentumSgd rule(m_settings.momentum);
            const LearningRateRule rate(m_settings.learningRate, m_settings.asyncLearningRate);
            const std::size_t size = m_params.size();
            while (slice.active > 0) {
                slice.readySignal->acquire();
                const int w = slice.ready.front().first;
                slice.ready.pop_front();
                WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
                if (!s.computed)
                    computePending(slice); // the math, for real, for every gradient in flight
                UpdateEvent push;
                push.worker = w;
                push.versionRead = s.versionRead;
                push.versionApplied = slice.version;
                push.samples = s.count;
                push.batchLoss = s.loss;
                push.applied = std::isfinite(s.loss);
                push.clockLead = s.clockLead;
                push.boundWait = s.boundWait;
                if (push.applied) {
                    SimWorld::compute(applyFlops);
                    if (m_compensation.active())
                        push.compensation
                            = m_compensation.compensate(s.gradient.data(), m_params.data(), s.snapshot.data(), size);
                    const float* step = rule.direction(s.gradient.data(), s.velocity.data(), 0, size);
                    const float lr = rate.at(slice.version - s.versionRead);
                    push.learningRate = lr;
                    MomentumSgd::apply(m_params.data(), step, lr, 0, size);
                    ++slice.version;
                    slice.samplesApplied += s.count;
                } else {
                    slice.stopped = true; // diverged: nobody gets another push
                }
                push.seconds = SimWorld::clock();
                slice.pushes.push_back(push);
                // A whole-set evaluation due now is made now, in zero virtual time, on the server's parameters:
                // the workers carry on.
                if (push.applied && evaluationDue(slice.samplesApplied))
                    slice.evaluations.emplace_back(slice.pushes.size() - 1,
                        evaluateAt(slice.version, slice.samplesApplied, SimWorld::clock() + slice.modeBase));
                slice.ssp.advance(w); // ssp: its clock moves on, the slowest may have caught up
                ++s.pushes;
                --slice.active;
                if (answer(slice, w, -1))
                    ++slice.active;
                if (mode() == Mode::Ssp)
                    releaseHeld(slice, w);
            }
        });
    });
    for (int w = 0; w < workers; ++w) {
        sg4::Host* host = hosts[static_cast<std::size_t>(w)];
        sg4::Actor::create("async-worker-" + std::to_string(w), host,
            [this, &slice, host, serverHost, w, flopsPerSample, addFlops, copyWork, packWork, bytes] {
                SimWorld::guarded(slice.failure, [&] {
                    const auto me = static_cast<std::size_t>(w);
                    auto span = [&](SpanKind kind, double start, double end, int samples = 0) {
                        if (end > start)
                            slice.spans[me].push_back({w, kind, start, end, samples});
                    };
                    WorkerState& s = *m_workers[me];
                    double waitFrom = SimWorld::clock();
                    while (true) {
                        slice.wake[me]->acquire();
                        // Waiting for the server (its queue and applies), for the slowest worker (ssp: from the
                        // moment the bound held it back to the push that released it), then for the parameters on
                        // the wire.
                        const double answered = std::clamp(slice.answered[me], waitFrom, SimWorld::clock());
                        if (slice.heldFrom[me] >= 0) {
                            const double held = std::clamp(slice.heldFrom[me], waitFrom, answered);
                            span(SpanKind::WaitRead, waitFrom, held);
                            const int by = slice.releasedBy[me];
                            if (answered > held)
                                slice.spans[me].push_back(
                                    {w, SpanKind::WaitBarrier, held, answered, 0, by == w ? -1 : by});
                            slice.heldFrom[me] = -1.0;
                        } else {
                            span(SpanKind::WaitRead, waitFrom, answered);
                        }
                        if (!s.assigned || slice.failure)
                            break;
                        const double downloadStart = SimWorld::clock();
                        SimWorld::get().send(serverHost, host, bytes);
                        span(SpanKind::WaitNetwork, downloadStart, SimWorld::clock());
                        const double copyStart = SimWorld::clock();
                        SimWorld::compute(copyWork);
                        span(SpanKind::Communicate, copyStart, SimWorld::clock());
                        // The work at the host's speed; a straggler's factor is that much more work of the same kind.
                        const double flops = s.count * flopsPerSample + s.treeAdditions * addFlops;
                        const double start = SimWorld::clock();
                        const double computed = SimWorld::computeDelayed(flops, m_stragglers.slowdown(w, s.pushes));
                        span(SpanKind::Compute, start, computed, s.count);
                        span(SpanKind::Delay, computed, SimWorld::clock());
                        const double packStart = SimWorld::clock();
                        SimWorld::compute(packWork);
                        span(SpanKind::Communicate, packStart, SimWorld::clock());
                        const double uploadStart = SimWorld::clock();
                        SimWorld::get().send(host, serverHost, bytes);
                        span(SimWorld::get().uploadSpanKind(), uploadStart, SimWorld::clock());
                        slice.ready.emplace_back(w, SimWorld::clock());
                        slice.readySignal->release();
                        waitFrom = SimWorld::clock();
                    }
                    slice.exitAt[me] = SimWorld::clock();
                    slice.end = std::max(slice.end, SimWorld::clock());
                });
            });
    }
    SimWorld::get().run();
    slice.end = std::max(slice.end, SimWorld::clock());
}

} // namespace sgdscope
