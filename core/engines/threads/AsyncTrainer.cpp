#include "core/engines/threads/AsyncTrainer.h"

#include "core/common/Error.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace sgdscope {

/// One worker's own state, on its own cache lines (each is a separate, 64-byte aligned allocation).
struct alignas(64) AsyncTrainer::WorkerState
{
    explicit WorkerState(const DataOrder& order)
        : cursor(order)
    {
    }

    BatchCursor cursor;
    std::int64_t nextBatch = 0; // global batch of its next push
    IndexRange slice; // its slice of every batch
    ChunkLayout chunks;
    ReductionPlan plan; // the slice's chunks, one worker, K micro-batches
    ParamVector snapshot;
    ParamVector velocity;
    std::vector<ParamVector> buffers;
    std::vector<PushRecord> records; // this slice's pushes
    std::exception_ptr failure;
    std::int64_t pushes = 0; // all pushes so far
};

AsyncTrainer::AsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings)
    : Trainer(std::move(problem), std::move(settings))
{
    prepareWorkers();
}

AsyncTrainer::~AsyncTrainer() = default;

void AsyncTrainer::settingsChanged()
{
    prepareWorkers();
}

void AsyncTrainer::prepareWorkers()
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
        }
        if (s.snapshot.size() != m_params.size()) {
            s.snapshot.assign(m_params.size(), 0.0f);
            s.velocity.assign(m_params.size(), 0.0f);
        }
        if (s.slice.size() > 0) {
            s.chunks = ChunkLayout(s.slice.size(), std::min(chunk, s.slice.size()));
            s.plan = ReductionPlan::build(s.chunks.chunkCount, 1, m_settings.accum);
            if (s.buffers.size() < static_cast<std::size_t>(s.plan.bufferCount))
                s.buffers.resize(static_cast<std::size_t>(s.plan.bufferCount), ParamVector(m_params.size(), 0.0f));
        }
        workspace(w);
    }
}

void AsyncTrainer::push(WorkerState& s, int worker, int count)
{
    PushRecord r;
    r.worker = worker;
    r.samples = count;
    const std::uint32_t* batchIndices = s.cursor.next(m_settings.batch);
    const std::uint32_t* indices = batchIndices + s.slice.begin;
    const std::size_t size = m_params.size();
    const bool lockFree = m_settings.asyncApply == AsyncApply::LockFree;

    // Read a snapshot of the parameters with its version.
    std::int64_t versionRead = 0;
    r.readStart = Clock::now();
    if (lockFree) {
        r.computeStart = r.readStart;
        versionRead = m_version.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < size; ++i)
            s.snapshot[i] = std::atomic_ref<float>(m_params[i]).load(std::memory_order_relaxed);
    } else {
        std::lock_guard guard(m_lock);
        r.computeStart = Clock::now();
        versionRead = m_version.load(std::memory_order_relaxed);
        std::copy(m_params.begin(), m_params.end(), s.snapshot.begin());
    }

    // The slice's gradient: chunks and K micro-batches as in sync, weighted by samples (mean over the slice).
    MlpWorkspace<float>& ws = workspaceAt(worker);
    const auto scale = static_cast<float>(1.0 / r.samples);
    if (count != s.chunks.batch) {
        // The run's last push, cut to the samples left in the budget: chunks and tree for that size.
        s.chunks = ChunkLayout(count, std::min(s.chunks.chunkSize, count));
        s.plan = ReductionPlan::build(s.chunks.chunkCount, 1, m_settings.accum);
        while (s.buffers.size() < static_cast<std::size_t>(s.plan.bufferCount))
            s.buffers.emplace_back(m_params.size(), 0.0f);
    }
    const WorkerReduction& part = s.plan.workers.front();
    double lossSum = 0.0;
    for (const IndexRange& micro : part.microBatches) {
        for (int c = micro.begin; c < micro.end; ++c) {
            const IndexRange samples = s.chunks.samples(c);
            float* leaf = s.buffers[static_cast<std::size_t>(part.leafBuffer[static_cast<std::size_t>(c)])].data();
            lossSum += ws.gradient(
                m_problem->layout, s.snapshot.data(), m_view, indices + samples.begin, samples.size(), scale, leaf);
            for (const MergeOp& op : part.mergesAfter[static_cast<std::size_t>(c)]) {
                float* dst = s.buffers[static_cast<std::size_t>(op.dst)].data();
                const float* src = s.buffers[static_cast<std::size_t>(op.src)].data();
                for (std::size_t i = 0; i < size; ++i)
                    dst[i] += src[i];
            }
        }
    }
    r.loss = lossSum / r.samples;
    r.computeEnd = Clock::now();
    const double delay = stragglerDelay(worker, s.pushes, secondsBetween(r.computeStart, r.computeEnd));
    if (delay > 0)
        sleepSeconds(delay);
    r.ready = delay > 0 ? Clock::now() : r.computeEnd;
    ++s.pushes;
    ++s.nextBatch;

    if (!std::isfinite(r.loss)) {
        // Diverged: this push is not applied; everybody stops at the next push boundary.
        r.applyStart = r.applyEnd = r.ready;
        r.version = m_version.load(std::memory_order_relaxed);
        std::int64_t expected = -1;
        m_divergedVersion.compare_exchange_strong(expected, r.version);
        m_divergedFlag.store(true, std::memory_order_relaxed);
        s.records.push_back(r);
        return;
    }

    // Momentum on the worker's own buffer, outside any lock.
    const float* g = s.buffers[static_cast<std::size_t>(s.plan.rootBuffer)].data();
    const float momentum = static_cast<float>(m_settings.momentum);
    const float* step = g;
    if (momentum != 0.0f) {
        float* v = s.velocity.data();
        for (std::size_t i = 0; i < size; ++i)
            v[i] = momentum * v[i] + g[i];
        step = v;
    }
    auto rate = [&](std::int64_t staleness) {
        double lr = m_settings.learningRate;
        if (m_settings.asyncLearningRate == AsyncLearningRate::Staleness)
            lr /= static_cast<double>(std::max<std::int64_t>(1, staleness));
        return static_cast<float>(lr);
    };
    if (lockFree) {
        r.applyStart = Clock::now();
        // Hogwild!: the staleness is known once our place in the apply order is taken.
        const std::int64_t version = m_version.fetch_add(1, std::memory_order_acq_rel);
        r.version = version;
        r.staleness = version - versionRead;
        const float lr = rate(r.staleness);
        for (std::size_t i = 0; i < size; ++i) {
            std::atomic_ref<float> w(m_params[i]);
            w.store(w.load(std::memory_order_relaxed) - lr * step[i], std::memory_order_relaxed);
        }
        r.applyEnd = Clock::now();
    } else {
        std::unique_lock guard(m_lock);
        r.applyStart = Clock::now();
        const std::int64_t version = m_version.load(std::memory_order_relaxed);
        r.version = version;
        r.staleness = version - versionRead;
        const float lr = rate(r.staleness);
        float* w = m_params.data();
        for (std::size_t i = 0; i < size; ++i)
            w[i] -= lr * step[i];
        m_version.store(version + 1, std::memory_order_relaxed);
        guard.unlock();
        r.applyEnd = Clock::now();
    }
    r.applied = true;
    s.records.push_back(r);
}

void AsyncTrainer::workerLoop(int worker, Clock::time_point deadline)
{
    WorkerState& s = *m_workers[static_cast<std::size_t>(worker)];
    s.records.clear();
    const std::int64_t slice = s.slice.size();
    if (slice == 0)
        return;
    try {
        while (!m_divergedFlag.load(std::memory_order_relaxed) && !m_stopFlag.load(std::memory_order_relaxed)) {
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
        }
    } catch (...) {
        s.failure = std::current_exception();
        m_divergedFlag.store(true, std::memory_order_relaxed); // stops the others; cleared below
    }
}

void AsyncTrainer::trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer)
{
    const int team = m_settings.workers;
    std::int64_t pushes = limits.maxUpdates == std::numeric_limits<std::int64_t>::max()
        ? limits.maxUpdates
        : std::max<std::int64_t>(0, limits.maxUpdates - (m_updates - m_runStartUpdates));
    // End the slice near the next whole-training-set evaluation, so async's loss curve has the same
    // resolution as sync's (evaluating needs the workers stopped).
    if (m_nextEvalSamples != std::numeric_limits<std::int64_t>::max()) {
        const std::int64_t perPush = std::max(1, m_settings.batch / team);
        pushes = std::min(pushes, std::max<std::int64_t>(1, (m_nextEvalSamples - m_samples + perPush - 1) / perPush));
    }
    m_pushesLeft.store(pushes);
    const double remaining = limits.maxSeconds - (m_seconds - sliceStartSeconds);
    const double sliceSeconds = std::max(0.0, std::min(m_sliceSeconds, remaining));
    const Clock::time_point t0 = Clock::now();
    const Clock::time_point deadline
        = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(sliceSeconds));
    m_preDeadlineActive.store(0);
    std::exception_ptr teamFailure;
    if (team == 1) {
        workerLoop(0, deadline);
    } else {
#pragma omp parallel num_threads(team)
        {
            if (omp_get_num_threads() != team) {
#pragma omp single
                teamFailure = std::make_exception_ptr(SgdError("could not start " + std::to_string(team)
                    + " worker threads (OpenMP gave " + std::to_string(omp_get_num_threads()) + ")"));
            } else {
                workerLoop(omp_get_thread_num(), deadline);
            }
        }
    }
    const Clock::time_point t1 = Clock::now();
    if (teamFailure)
        std::rethrow_exception(teamFailure);
    for (auto& w : m_workers) {
        if (w->failure) {
            const std::exception_ptr failure = w->failure;
            w->failure = nullptr;
            m_divergedFlag.store(false);
            std::rethrow_exception(failure);
        }
    }

    // Accounting for this slice, and the pushes in apply order.
    const double wall = secondsBetween(t0, t1);
    std::vector<const PushRecord*> order;
    for (int w = 0; w < team; ++w) {
        const WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
        WorkerTotals& totals = m_totals[static_cast<std::size_t>(w)];
        double busy = 0.0;
        double apply = 0.0;
        for (const PushRecord& r : s.records) {
            busy += secondsBetween(r.computeStart, r.ready);
            apply += secondsBetween(r.applyStart, r.applyEnd);
            order.push_back(&r);
            if (r.applied) {
                ++totals.updates;
                totals.samples += r.samples;
            }
        }
        totals.busySeconds += busy;
        totals.applySeconds += apply;
        totals.idleSeconds += wall - busy - apply;
    }
    std::sort(order.begin(), order.end(), [](const PushRecord* a, const PushRecord* b) {
        if (a->applied != b->applied)
            return a->applied; // a diverged push (not applied) comes last
        return a->version < b->version;
    });
    const double clock0 = m_seconds;
    m_seconds += wall;
    for (const PushRecord* r : order) {
        WorkerSpan span;
        span.worker = r->worker;
        span.idleBefore = secondsBetween(r->readStart, r->computeStart);
        span.computeStart = clock0 + secondsBetween(t0, r->computeStart);
        span.computeEnd = clock0 + secondsBetween(t0, r->computeEnd);
        span.readyAt = clock0 + secondsBetween(t0, r->ready);
        span.applyStart = clock0 + secondsBetween(t0, r->applyStart);
        span.applyEnd = clock0 + secondsBetween(t0, r->applyEnd);
        UpdateRecord record;
        record.mode = Mode::Async;
        record.worker = r->worker;
        record.batchLoss = r->loss;
        record.batch = r->samples;
        record.staleness = r->staleness;
        if (!r->applied) {
            record.index = m_updates;
            record.samples = m_samples;
            record.seconds = span.readyAt;
            if (!m_diverged)
                markDiverged(m_updates);
            observer.onUpdate(record, std::span<const WorkerSpan>(&span, 1));
            continue;
        }
        m_staleness.add(r->staleness, r->worker);
        record.index = m_updates++;
        m_samples += r->samples;
        record.samples = m_samples;
        record.seconds = span.applyEnd;
        observer.onUpdate(record, std::span<const WorkerSpan>(&span, 1));
    }
    if (m_stopFlag.load(std::memory_order_relaxed))
        m_stopped = true;
}

} // namespace sgdscope
