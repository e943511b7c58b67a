#include "core/engines/sim/SimAsyncTrainer.h"

#include "core/common/Error.h"
#include "core/engines/sim/SimAsyncState.h"
#include "core/train/UpdateRule.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sgdscope {

namespace {
// A slice drains every worker (they all restart together, which is not how a running cluster behaves), so
// slices are long: evaluations happen inside the simulation, without stopping anybody.
constexpr std::int64_t maxPushesPerSlice = simAsyncPushesPerSlice;
// Below a million flops of math (a fraction of a millisecond on one core), the gradients in flight are computed on
// one thread.
constexpr double minParallelFlops = 1e6;
} // namespace

SimAsyncTrainer::SimAsyncTrainer(
    std::shared_ptr<const Problem> problem, TrainerSettings settings, SimPlatformChoice platform, int hosts, Mode mode)
    : Trainer(std::move(problem), std::move(settings), mode)
    , m_platform(std::move(platform))
    , m_compensation(compensationLambda(), m_settings.dcAdaptive, m_params.size())
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
    m_compensation.setLambda(compensationLambda()); // the server's, from the next slice
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
    const std::int64_t pushes = pushesWithinLimits(limits, maxPushesPerSlice);

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

} // namespace sgdscope
