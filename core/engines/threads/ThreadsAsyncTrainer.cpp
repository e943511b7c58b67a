#include "core/engines/threads/ThreadsAsyncTrainer.h"

#include "core/common/Error.h"
#include "core/engines/threads/StragglerSleep.h"
#include "core/engines/threads/WorkerTeam.h"
#include "core/train/ChunkGradients.h"
#include "core/train/UpdateRule.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace sgdscope {

/// One worker's own state, on its own cache lines (each is a separate, 64-byte aligned allocation).
struct alignas(64) ThreadsAsyncTrainer::WorkerState
{
    explicit WorkerState(const DataOrder& order)
        : cursor(order)
    {
    }

    struct TimedSpan
    {
        SpanKind kind;
        Clock::time_point start, end;
        int samples = 0;
        int culprit = -1;
    };

    BatchCursor cursor;
    std::int64_t nextBatch = 0; // global batch of its next push
    IndexRange slice; // its slice of every batch
    SliceReduction reduction; // of its push
    ParamVector snapshot;
    ParamVector velocity;
    std::vector<PushRecord> records; // this slice's pushes
    std::vector<TimedSpan> spans; // this slice's spans
    Clock::time_point loopStart, loopEnd;
    std::exception_ptr failure;
    std::int64_t pushes = 0; // all pushes so far
    std::int64_t clock = 0; // ssp: its pushes applied (it joins each slice's gate with it)
    std::int64_t clockLead = -1; // ssp: of the push it is making
    double boundWait = -1.0; // ssp: how long the bound held it before the push it is making
};

ThreadsAsyncTrainer::ThreadsAsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode)
    : Trainer(std::move(problem), std::move(settings), mode)
    , m_compensation(compensationLambda(), m_settings.dcAdaptive, m_params.size())
{
    if (mode != Mode::Async && mode != Mode::DcAsgd && mode != Mode::Ssp)
        throw SgdError(std::string("the threads engine's async trainer cannot run mode ") + modeName(mode));
    if (mode == Mode::DcAsgd && m_settings.asyncApply == AsyncApply::LockFree)
        throw SgdError("dc-asgd compensates a push against the parameters it is applied to, under the lock; "
                       "--async-apply lockfree is for async only");
    prepareWorkers();
}

ThreadsAsyncTrainer::~ThreadsAsyncTrainer() = default;

void ThreadsAsyncTrainer::settingsChanged()
{
    m_compensation.setLambda(compensationLambda()); // (between runs: no push is being applied)
    prepareWorkers();
}

void ThreadsAsyncTrainer::prepareWorkers()
{
    const int team = m_settings.workers;
    const int batch = m_settings.batch;
    // Workers that already exist carry on from the furthest batch any of them reached; new ones join there.
    std::int64_t furthest = 0;
    const WorkerState* leader = nullptr;
    for (const auto& w : m_workers) {
        if (w->nextBatch >= furthest) {
            furthest = w->nextBatch;
            leader = w.get();
        }
    }
    const BatchCursor leaderCursor = leader ? leader->cursor : BatchCursor(m_order);
    const bool resync = !m_workers.empty();
    if (m_workers.size() > static_cast<std::size_t>(team))
        m_workers.resize(static_cast<std::size_t>(team));
    while (m_workers.size() < static_cast<std::size_t>(team))
        m_workers.push_back(std::make_unique<WorkerState>(m_order));
    const int chunk = chunkSizeFor(batch);
    for (int w = 0; w < team; ++w) {
        WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
        s.slice = balancedPart(batch, team, w);
        if (resync) {
            s.cursor = leaderCursor;
            s.nextBatch = furthest;
            s.clock = furthest;
        }
        if (s.snapshot.size() != m_params.size()) {
            s.snapshot.assign(m_params.size(), 0.0f);
            s.velocity.assign(m_params.size(), 0.0f);
        }
        if (s.slice.size() > 0) {
            s.reduction.prepare(s.slice.size(), chunk, m_settings.accum, passSamples());
            s.reduction.ensureBuffers(m_params.size());
        }
        s.records.reserve(64);
        s.spans.reserve(64 * 8);
        workspace(w);
    }
}

void ThreadsAsyncTrainer::push(WorkerState& s, int worker, int count)
{
    PushRecord r;
    UpdateEvent& e = r.event;
    e.worker = worker;
    e.samples = count;
    e.clockLead = s.clockLead;
    e.boundWait = s.boundWait;
    // The batch's indices are part of the read (a new epoch's order is made once, under the data order's
    // lock, which another worker may wait for).
    const Clock::time_point fetchStart = Clock::now();
    const std::uint32_t* batchIndices = s.cursor.next(m_settings.batch);
    const std::uint32_t* indices = batchIndices + s.slice.begin;
    const std::size_t size = m_params.size();
    const bool lockFree = m_settings.asyncApply == AsyncApply::LockFree;
    auto span = [&](SpanKind kind, Clock::time_point a, Clock::time_point b, int samples = 0, int culprit = -1) {
        s.spans.push_back({kind, a, b, samples, culprit == worker ? -1 : culprit});
    };

    // Read a snapshot of the parameters with its version.
    const Clock::time_point readStart = Clock::now();
    if (lockFree) {
        e.versionRead = m_version.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < size; ++i)
            s.snapshot[i] = std::atomic_ref<float>(m_params[i]).load(std::memory_order_relaxed);
        span(SpanKind::Communicate, fetchStart, Clock::now());
    } else {
        std::unique_lock guard(m_lock, std::try_to_lock);
        Clock::time_point locked = fetchStart; // an uncontended lock is no wait
        if (!guard.owns_lock()) {
            span(SpanKind::Communicate, fetchStart, readStart);
            const int holder = m_lockHolder.load(std::memory_order_relaxed); // whom it waits for (as it starts to)
            guard.lock();
            locked = Clock::now();
            span(SpanKind::WaitLock, readStart, locked, 0, holder);
        }
        m_lockHolder.store(worker, std::memory_order_relaxed);
        e.versionRead = m_version.load(std::memory_order_relaxed);
        std::copy(m_params.begin(), m_params.end(), s.snapshot.begin());
        guard.unlock();
        span(SpanKind::Communicate, locked, Clock::now());
    }

    // The slice's gradient: chunks and K micro-batches as in sync, weighted by samples (mean over the slice).
    const Clock::time_point computeStart = Clock::now();
    if (count != s.reduction.samples()) {
        // The run's last push, cut to the samples left in the budget: chunks and tree for that size.
        s.reduction.prepare(count, chunkSizeFor(m_settings.batch), m_settings.accum, passSamples());
        s.reduction.ensureBuffers(m_params.size());
    }
    const double lossSum
        = s.reduction.compute(workspaceAt(worker), m_problem->layout, s.snapshot.data(), m_view, indices);
    e.batchLoss = lossSum / e.samples;
    const Clock::time_point computeEnd = Clock::now();
    span(SpanKind::Compute, computeStart, computeEnd, count);
    const double delay = m_stragglers.delaySeconds(worker, s.pushes, secondsBetween(computeStart, computeEnd));
    if (delay > 0) {
        // Each span is timed by its own pair of clock readings, so time that no span covers is reported
        // as unaccounted instead of being absorbed by a neighbour.
        const Clock::time_point delayStart = Clock::now();
        sleepForStraggler(delay, m_stopFlag);
        span(SpanKind::Delay, delayStart, Clock::now());
    }
    ++s.pushes;
    ++s.nextBatch;

    if (!std::isfinite(e.batchLoss)) {
        // Diverged: this push is not applied; everybody stops at the next push boundary.
        e.applied = false;
        e.versionApplied = m_version.load(std::memory_order_relaxed);
        r.applied = Clock::now();
        m_divergedFlag.store(true, std::memory_order_relaxed);
        s.records.push_back(r);
        return;
    }

    // Momentum on the worker's own buffer, outside any lock (after the compensation, under it, for dc-asgd):
    // apply time.
    const Clock::time_point stepStart = Clock::now();
    const PushRule push(m_settings, m_compensation);
    float* gradient = s.reduction.gradient();
    const float* step = push.compensates() ? nullptr : push.step(gradient, s.velocity.data(), size);
    if (lockFree) {
        const std::int64_t done = m_appliedSamples.fetch_add(e.samples, std::memory_order_relaxed);
        const float lr = push.learningRate(m_version.load(std::memory_order_acquire) - e.versionRead, e.samples, done);
        e.learningRate = lr;
        MomentumSgd::applyRelaxed(m_params.data(), step, lr, 0, size);
        e.versionApplied = m_version.fetch_add(1, std::memory_order_acq_rel); // our write has completed
        r.applied = Clock::now();
        span(SpanKind::Apply, stepStart, r.applied);
    } else {
        // A lock wait is timed only when the lock is taken (an uncontended lock costs no clock readings, which
        // would otherwise show up as a wait of their own).
        std::unique_lock guard(m_lock, std::try_to_lock);
        Clock::time_point lockWanted {};
        Clock::time_point locked {};
        int holder = -1;
        if (!guard.owns_lock()) {
            lockWanted = Clock::now();
            holder = m_lockHolder.load(std::memory_order_relaxed);
            guard.lock();
            locked = Clock::now();
        }
        m_lockHolder.store(worker, std::memory_order_relaxed);
        e.versionApplied = m_version.load(std::memory_order_relaxed);
        const std::int64_t done = m_appliedSamples.load(std::memory_order_relaxed);
        m_appliedSamples.store(done + e.samples, std::memory_order_relaxed);
        const AppliedPush applied = push.apply(m_params.data(), gradient, s.velocity.data(), s.snapshot.data(), size,
            e.versionApplied - e.versionRead, e.samples, done, step);
        e.compensation = applied.compensation;
        e.learningRate = applied.learningRate;
        m_version.store(e.versionApplied + 1, std::memory_order_relaxed);
        guard.unlock();
        r.applied = Clock::now();
        if (locked == Clock::time_point {}) {
            span(SpanKind::Apply, stepStart, r.applied);
        } else {
            span(SpanKind::Apply, stepStart, lockWanted);
            span(SpanKind::WaitLock, lockWanted, locked, 0, holder);
            span(SpanKind::Apply, locked, r.applied);
        }
    }
    s.records.push_back(r);
}

void ThreadsAsyncTrainer::workerLoop(int worker, Clock::time_point deadline)
{
    WorkerState& s = *m_workers[static_cast<std::size_t>(worker)];
    s.loopStart = Clock::now();
    s.records.clear();
    s.spans.clear();
    const std::int64_t slice = s.slice.size();
    const bool bounded = mode() == Mode::Ssp;
    try {
        while (slice > 0 && !m_divergedFlag.load(std::memory_order_relaxed) && !stopRequestedNow()) {
            // ssp: no further ahead of the slowest worker than the bound.
            if (bounded && !waitWithinBound(worker, s, deadline))
                break;
            const bool beforeDeadline = Clock::now() < deadline;
            // After the deadline, keep working only while a push begun before it is still running.
            if (!beforeDeadline && m_preDeadlineActive.load(std::memory_order_acquire) == 0)
                break;
            // Claim the push's samples from the run's budget (the last push takes only what is left, so async
            // uses exactly the budget), and a place in this call's push limit.
            std::int64_t claimed = m_claimedSamples.load(std::memory_order_relaxed);
            std::int64_t count = 0;
            do {
                count = std::min(slice, m_settings.sampleBudget - claimed);
            } while (count > 0
                && !m_claimedSamples.compare_exchange_weak(claimed, claimed + count, std::memory_order_acq_rel));
            if (count <= 0)
                break;
            if (m_pushesLeft.fetch_sub(1, std::memory_order_acq_rel) <= 0) {
                m_pushesLeft.fetch_add(1, std::memory_order_acq_rel);
                m_claimedSamples.fetch_sub(count, std::memory_order_acq_rel);
                break;
            }
            if (beforeDeadline)
                m_preDeadlineActive.fetch_add(1, std::memory_order_acq_rel);
            push(s, worker, static_cast<int>(count));
            if (beforeDeadline)
                m_preDeadlineActive.fetch_sub(1, std::memory_order_acq_rel);
            if (bounded) {
                ++s.clock;
                clockMoved(worker, true);
            }
        }
    } catch (...) {
        s.failure = std::current_exception();
        m_divergedFlag.store(true, std::memory_order_relaxed); // stops the others; cleared below
    }
    if (bounded)
        clockMoved(worker, false); // who waits for it no longer does
    s.loopEnd = Clock::now();
}

void ThreadsAsyncTrainer::clockMoved(int worker, bool advance)
{
    {
        const std::lock_guard guard(m_sspLock);
        if (advance)
            m_ssp.advance(worker);
        else
            m_ssp.leave(worker);
    }
    m_clockEvents.fetch_add(1, std::memory_order_acq_rel);
    m_clockEvents.notify_all();
}

bool ThreadsAsyncTrainer::waitWithinBound(int worker, WorkerState& s, Clock::time_point deadline)
{
    Clock::time_point waitStart {};
    int waitedFor = -1;
    while (true) {
        const std::int64_t events = m_clockEvents.load(std::memory_order_acquire);
        int slowest = -1;
        {
            const std::lock_guard guard(m_sspLock);
            if (m_ssp.mayStart(worker)) {
                s.clockLead = m_ssp.lead(worker);
                break;
            }
            slowest = m_ssp.slowestWorker();
        }
        // Whatever would end the loop ends the wait (nobody pushes again in this slice).
        if (m_divergedFlag.load(std::memory_order_relaxed) || stopRequestedNow()
            || m_claimedSamples.load(std::memory_order_acquire) >= m_settings.sampleBudget
            || m_pushesLeft.load(std::memory_order_acquire) <= 0
            || (Clock::now() >= deadline && m_preDeadlineActive.load(std::memory_order_acquire) == 0))
            return false;
        if (waitedFor < 0) {
            waitStart = Clock::now();
            waitedFor = slowest;
        }
        m_clockEvents.wait(events, std::memory_order_acquire);
    }
    s.boundWait = 0.0;
    if (waitedFor >= 0) {
        const Clock::time_point released = Clock::now();
        s.spans.push_back({SpanKind::WaitBarrier, waitStart, released, 0, waitedFor == worker ? -1 : waitedFor});
        s.boundWait = std::chrono::duration<double>(released - waitStart).count();
    }
    return true;
}

void ThreadsAsyncTrainer::trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer)
{
    const int team = m_settings.workers;
    std::int64_t pushes = pushesWithinLimits(limits, std::numeric_limits<std::int64_t>::max());
    // End the slice near the next whole-training-set evaluation, so async's loss curve has the same
    // resolution as sync's (evaluating needs the workers stopped).
    if (m_nextEvalSamples != std::numeric_limits<std::int64_t>::max()) {
        const std::int64_t perPush = std::max(1, m_settings.batch / team);
        pushes = std::min(pushes, stepsToReach(m_samples, m_nextEvalSamples, perPush));
    }
    m_pushesLeft.store(pushes);
    m_appliedSamples.store(m_samples, std::memory_order_relaxed); // before the team starts
    const double remaining = limits.maxSeconds - (m_seconds - sliceStartSeconds);
    const double sliceSeconds = std::max(0.0, std::min(m_sliceSeconds, remaining));
    const Clock::time_point t0 = Clock::now();
    const Clock::time_point deadline
        = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(sliceSeconds));
    m_preDeadlineActive.store(0);
    if (mode() == Mode::Ssp) {
        // The workers taking part in the slice, at their clocks (one without samples holds nobody back).
        m_ssp.reset(m_settings.sspBound, team);
        for (int w = 0; w < team; ++w) {
            const WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
            if (s.slice.size() > 0)
                m_ssp.join(w, s.clock);
        }
    }
    std::exception_ptr teamFailure;
    if (team == 1) {
        workerLoop(0, deadline);
    } else {
#pragma omp parallel num_threads(team)
        {
            if (omp_get_num_threads() != team) {
#pragma omp single
                teamFailure = teamSizeFailure(team, omp_get_num_threads());
            } else {
                // The whole team starts together (a thread that woke first would otherwise take a short
                // slice's every push); the wait for the others is WaitSlice.
#pragma omp barrier
                workerLoop(omp_get_thread_num(), deadline);
            }
        }
    }
    const Clock::time_point t1 = Clock::now();
    if (teamFailure)
        std::rethrow_exception(teamFailure);
    if (const std::exception_ptr failure = takeFirstFailure(
            m_workers, [](std::unique_ptr<WorkerState>& w) -> std::exception_ptr& { return w->failure; })) {
        m_divergedFlag.store(false); // it stopped the others, and was no divergence
        std::rethrow_exception(failure);
    }

    // The slice's spans on the mode's clock, every piece measured by its worker; waiting to start with the
    // team and for it to finish is WaitSlice.
    const double base = m_seconds;
    auto at = [&](Clock::time_point t) { return base + secondsBetween(t0, t); };
    std::vector<Span> spans;
    std::vector<const PushRecord*> order;
    for (int w = 0; w < team; ++w) {
        const WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
        spans.push_back({w, SpanKind::WaitSlice, at(t0), at(s.loopStart), 0});
        for (const auto& t : s.spans)
            spans.push_back({w, t.kind, at(t.start), at(t.end), t.samples, t.culprit});
        spans.push_back({w, SpanKind::WaitSlice, at(s.loopEnd), at(t1), 0});
        for (const PushRecord& r : s.records)
            order.push_back(&r);
    }
    const double wall = secondsBetween(t0, t1);
    reportWorkerTime(WorkWindow {base, base + wall, team}, spans, observer);
    m_seconds += wall;

    std::sort(order.begin(), order.end(), [](const PushRecord* a, const PushRecord* b) {
        if (a->event.applied != b->event.applied)
            return a->event.applied; // a diverged push (not applied) comes last
        return a->event.versionApplied < b->event.versionApplied;
    });
    for (const PushRecord* r : order) {
        UpdateEvent event = r->event;
        event.seconds = at(r->applied);
        countPush(event);
        reportUpdate(event, observer);
    }
}

} // namespace sgdscope
