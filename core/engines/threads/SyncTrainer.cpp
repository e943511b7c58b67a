#include "core/engines/threads/SyncTrainer.h"

#include "core/common/Error.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace sgdscope {

namespace {
constexpr std::size_t blockFloats = 4096; // combine/apply in cache-sized blocks
constexpr std::size_t alignFloats = 16;
} // namespace

SyncTrainer::SyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings)
    : Trainer(std::move(problem), std::move(settings))
    , m_cursor(m_order)
    , m_velocity(m_params.size(), 0.0f)
{
    preparePlan();
}

SyncTrainer::~SyncTrainer() = default;

void SyncTrainer::settingsChanged()
{
    preparePlan();
}

void SyncTrainer::preparePlan()
{
    const ChunkLayout chunks(m_settings.batch, chunkSizeFor(m_settings.batch));
    if (chunks.batch == m_chunks.batch && chunks.chunkSize == m_chunks.chunkSize && m_planWorkers == m_settings.workers
        && m_planAccum == m_settings.accum)
        return;
    m_chunks = chunks;
    m_planWorkers = m_settings.workers;
    m_planAccum = m_settings.accum;
    m_plan = ReductionPlan::build(m_chunks.chunkCount, m_settings.workers, m_settings.accum);
    if (m_buffers.size() < static_cast<std::size_t>(m_plan.bufferCount))
        m_buffers.resize(static_cast<std::size_t>(m_plan.bufferCount), ParamVector(m_params.size(), 0.0f));
    m_chunkLoss.assign(static_cast<std::size_t>(m_chunks.chunkCount), 0.0);
    m_slots.assign(static_cast<std::size_t>(m_settings.workers), WorkerSlot {});
    m_spans.assign(static_cast<std::size_t>(m_settings.workers), WorkerSpan {});
    for (int w = 0; w < m_settings.workers; ++w)
        workspace(w); // allocate before the first update, not inside it
}

void SyncTrainer::computePart(int worker, const std::uint32_t* indices)
{
    WorkerSlot& slot = m_slots[static_cast<std::size_t>(worker)];
    slot.start = Clock::now();
    const WorkerReduction& part = m_plan.workers[static_cast<std::size_t>(worker)];
    MlpWorkspace<float>& ws = workspaceAt(worker);
    const auto scale = static_cast<float>(1.0 / m_chunks.batch);
    const std::size_t size = m_params.size();
    // K micro-batches in a row; each is a run of whole chunks (the unit of the fixed reduction).
    for (const IndexRange& micro : part.microBatches) {
        for (int c = micro.begin; c < micro.end; ++c) {
            const int local = c - part.chunks.begin;
            const IndexRange samples = m_chunks.samples(c);
            float* leaf = m_buffers[static_cast<std::size_t>(part.leafBuffer[static_cast<std::size_t>(local)])].data();
            m_chunkLoss[static_cast<std::size_t>(c)] = ws.gradient(
                m_problem->layout, m_params.data(), m_view, indices + samples.begin, samples.size(), scale, leaf);
            for (const MergeOp& op : part.mergesAfter[static_cast<std::size_t>(local)]) {
                float* dst = m_buffers[static_cast<std::size_t>(op.dst)].data();
                const float* src = m_buffers[static_cast<std::size_t>(op.src)].data();
                for (std::size_t i = 0; i < size; ++i)
                    dst[i] += src[i];
            }
        }
    }
    slot.computed = Clock::now();
    const double delay = stragglerDelay(worker, m_updates, secondsBetween(slot.start, slot.computed));
    if (delay > 0)
        sleepSeconds(delay);
    slot.ready = delay > 0 ? Clock::now() : slot.computed;
}

void SyncTrainer::combineAndApply(int worker, int team)
{
    // Every member reads the same chunk losses in the same order: the same verdict without another barrier.
    double loss = 0.0;
    for (const double l : m_chunkLoss)
        loss += l;
    if (!std::isfinite(loss))
        return; // diverged: leave the parameters as they were
    const std::size_t blocks = (m_params.size() + alignFloats - 1) / alignFloats;
    const IndexRange mine = balancedPart(static_cast<int>(blocks), team, worker);
    const std::size_t first = static_cast<std::size_t>(mine.begin) * alignFloats;
    const std::size_t last = std::min(m_params.size(), static_cast<std::size_t>(mine.end) * alignFloats);
    const float lr = static_cast<float>(m_settings.learningRate);
    const float momentum = static_cast<float>(m_settings.momentum);
    float* w = m_params.data();
    float* v = m_velocity.data();
    const float* g = m_buffers[static_cast<std::size_t>(m_plan.rootBuffer)].data();
    for (std::size_t b0 = first; b0 < last; b0 += blockFloats) {
        const std::size_t b1 = std::min(last, b0 + blockFloats);
        for (const MergeOp& op : m_plan.combine) {
            float* dst = m_buffers[static_cast<std::size_t>(op.dst)].data();
            const float* src = m_buffers[static_cast<std::size_t>(op.src)].data();
            for (std::size_t i = b0; i < b1; ++i)
                dst[i] += src[i];
        }
        if (momentum == 0.0f) {
            for (std::size_t i = b0; i < b1; ++i)
                w[i] -= lr * g[i];
        } else {
            for (std::size_t i = b0; i < b1; ++i) {
                v[i] = momentum * v[i] + g[i];
                w[i] -= lr * v[i];
            }
        }
    }
}

void SyncTrainer::trainSome(const RunLimits&, double, TrainingObserver& observer)
{
    preparePlan();
    const int team = m_settings.workers;
    const int batch = m_settings.batch;
    const std::uint32_t* indices = m_cursor.next(batch);

    const Clock::time_point t0 = Clock::now();
    if (team == 1) {
        try {
            computePart(0, indices);
            combineAndApply(0, 1);
        } catch (...) {
            m_slots[0].failure = std::current_exception();
        }
    } else {
#pragma omp parallel num_threads(team)
        {
            const int w = omp_get_thread_num();
            if (omp_get_num_threads() != team) {
#pragma omp single
                m_slots[0].failure = std::make_exception_ptr(SgdError("could not start " + std::to_string(team)
                    + " worker threads (OpenMP gave " + std::to_string(omp_get_num_threads()) + ")"));
            } else {
                try {
                    computePart(w, indices);
                } catch (...) {
                    m_slots[static_cast<std::size_t>(w)].failure = std::current_exception();
                }
#pragma omp barrier
                bool failed = false;
                for (const auto& slot : m_slots)
                    failed = failed || slot.failure;
                if (!failed)
                    combineAndApply(w, team);
            }
        }
    }
    const Clock::time_point t1 = Clock::now();
    for (auto& slot : m_slots) {
        if (slot.failure) {
            const std::exception_ptr failure = slot.failure;
            for (auto& s : m_slots)
                s.failure = nullptr;
            std::rethrow_exception(failure);
        }
    }

    double lossSum = 0.0;
    for (const double l : m_chunkLoss)
        lossSum += l;
    const double batchLoss = lossSum / batch;

    // Accounting: release = the moment the slowest worker was ready.
    Clock::time_point release = t0;
    for (const auto& slot : m_slots)
        release = std::max(release, slot.ready);
    const double wall = secondsBetween(t0, t1);
    const double applySeconds = secondsBetween(release, t1);
    for (int w = 0; w < team; ++w) {
        const WorkerSlot& slot = m_slots[static_cast<std::size_t>(w)];
        WorkerTotals& totals = m_totals[static_cast<std::size_t>(w)];
        const double busy = secondsBetween(slot.start, slot.ready);
        totals.busySeconds += busy;
        totals.idleSeconds += wall - busy - applySeconds;
        totals.applySeconds += applySeconds;
        const int chunks = m_plan.workers[static_cast<std::size_t>(w)].chunks.size();
        if (chunks > 0) {
            ++totals.updates;
            const IndexRange r = m_plan.workers[static_cast<std::size_t>(w)].chunks;
            totals.samples += m_chunks.samples(r.end - 1).end - m_chunks.samples(r.begin).begin;
        }
        WorkerSpan& span = m_spans[static_cast<std::size_t>(w)];
        span.worker = w;
        span.idleBefore = secondsBetween(t0, slot.start);
        span.computeStart = m_seconds + span.idleBefore;
        span.computeEnd = m_seconds + secondsBetween(t0, slot.computed);
        span.readyAt = m_seconds + secondsBetween(t0, slot.ready);
        span.applyStart = m_seconds + secondsBetween(t0, release);
        span.applyEnd = m_seconds + wall;
    }
    m_staleness.add(0, -1);

    const std::int64_t index = m_updates;
    m_seconds += wall;
    UpdateRecord record;
    record.mode = Mode::Sync;
    record.index = index;
    record.batchLoss = batchLoss;
    record.batch = batch;
    if (!std::isfinite(batchLoss)) {
        // The update was not applied; the run stops here with everything recorded so far.
        record.samples = m_samples;
        record.seconds = m_seconds;
        markDiverged(index);
        observer.onUpdate(record, m_spans);
        return;
    }
    ++m_updates;
    m_samples += batch;
    record.samples = m_samples;
    record.seconds = m_seconds;
    observer.onUpdate(record, m_spans);
}

} // namespace sgdscope
