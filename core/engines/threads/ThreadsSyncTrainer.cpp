#include "core/engines/threads/ThreadsSyncTrainer.h"

#include "core/common/Error.h"
#include "core/engines/threads/StragglerSleep.h"
#include "core/engines/threads/WorkerTeam.h"
#include "core/train/BackupRule.h"
#include "core/train/ChunkGradients.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace sgdscope {

namespace {
constexpr std::size_t blockFloats = 4096; // combine/apply in cache-sized blocks
} // namespace

ThreadsSyncTrainer::ThreadsSyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode)
    : Trainer(std::move(problem), std::move(settings), mode)
    , m_cursor(m_order)
    , m_velocity(m_params.size(), 0.0f)
{
    if (mode != Mode::Sync && mode != Mode::Backup)
        throw SgdError(std::string("the threads engine's sync trainer cannot run mode ") + modeName(mode));
    preparePlan();
}

ThreadsSyncTrainer::~ThreadsSyncTrainer() = default;

void ThreadsSyncTrainer::settingsChanged()
{
    preparePlan();
}

void ThreadsSyncTrainer::preparePlan()
{
    if (!m_reduction.prepare(m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.workers, m_settings.accum,
            passSamples(), m_params.size()))
        return;
    m_slots.assign(static_cast<std::size_t>(m_settings.workers), WorkerSlot {});
    m_dropped.assign(static_cast<std::size_t>(m_settings.workers), 0);
    m_spans.reserve(static_cast<std::size_t>(m_settings.workers) * 6);
    for (int w = 0; w < m_settings.workers; ++w)
        workspace(w); // allocate before the first update, not inside it
}

int ThreadsSyncTrainer::gradientsKept() const
{
    return mode() == Mode::Backup ? backupGradientsKept(m_reduction, m_settings.backupWorkers) : m_settings.workers;
}

void ThreadsSyncTrainer::computePart(int worker, const std::uint32_t* indices, Clock::time_point start)
{
    WorkerSlot& slot = m_slots[static_cast<std::size_t>(worker)];
    slot.start = start;
    slot.dropped = false;
    slot.samples = computeWorkerPart(workspaceAt(worker), m_problem->layout, m_params.data(), m_view, indices,
        m_reduction.plan.workers[static_cast<std::size_t>(worker)], static_cast<float>(1.0 / m_reduction.chunks.batch),
        m_reduction.buffers, m_reduction.chunkLoss.data());
    slot.computed = Clock::now();
    const double delay = slot.samples > 0
        ? m_stragglers.delaySeconds(worker, m_updates, secondsBetween(slot.start, slot.computed))
        : 0;
    const bool backup = mode() == Mode::Backup;
    if (delay > 0) {
        slot.delayStart = Clock::now();
        if (backup)
            sleepForStraggler(delay, m_stopFlag, m_dropLate); // cut short once the update has its gradients
        else
            sleepForStraggler(delay, m_stopFlag);
        slot.ready = Clock::now();
    } else {
        slot.delayStart = slot.ready = slot.computed; // no delay span
    }
    if (backup && slot.samples > 0) {
        // The order of arrival decides: the first gradientsKept() are applied, the arrival that completes them
        // ends the others' delays, and whoever comes after is dropped.
        const int arrival = m_arrivals.fetch_add(1, std::memory_order_acq_rel);
        const int keep = gradientsKept();
        if (arrival == keep - 1) {
            m_completedBy = worker;
            m_dropLate.store(true, std::memory_order_release);
        }
        slot.dropped = arrival >= keep;
    }
    m_dropped[static_cast<std::size_t>(worker)] = slot.dropped ? 1 : 0; // its own element: read after the barrier
}

void ThreadsSyncTrainer::combineAndApply(int worker, int team)
{
    // Every member reads the same chunk losses in the same order: the same verdict without another barrier.
    const double loss = m_reduction.keptLossSum(m_dropped);
    if (!std::isfinite(loss))
        return; // diverged: leave the parameters as they were
    const auto [first, last] = elementShare(m_params.size(), team, worker);
    const MomentumSgd rule(m_settings.momentum);
    const float lr = LearningRateRule(m_settings).ofBatch(m_samples); // m_samples: before this update
    const float scale = m_reduction.keptScale(m_reduction.keptSamples(m_dropped));
    for (std::size_t b0 = first; b0 < last; b0 += blockFloats) {
        const std::size_t b1 = std::min(last, b0 + blockFloats);
        // Backup: a dropped worker's subtrees count as zero in the fixed tree.
        const float* g = m_reduction.combineKept(m_dropped, scale, b0, b1);
        rule.update(m_params.data(), m_velocity.data(), g, lr, b0, b1);
    }
}

void ThreadsSyncTrainer::trainSome(const RunLimits&, double, TrainingObserver& observer)
{
    preparePlan();
    const int team = m_settings.workers;
    const int batch = m_settings.batch;
    const std::uint32_t* indices = m_cursor.next(batch);
    m_arrivals.store(0, std::memory_order_relaxed);
    m_dropLate.store(false, std::memory_order_relaxed);
    m_completedBy = -1;

    const Clock::time_point t0 = Clock::now();
    if (team == 1) {
        // A team of one: its spans follow one another, each from the clock read that ended the one before
        // (three reads an update instead of seven).
        WorkerSlot& slot = m_slots[0];
        slot.applied = t0;
        try {
            computePart(0, indices, t0);
            slot.waitStart = slot.released = slot.applyStart = slot.ready; // nobody to wait for
            combineAndApply(0, 1);
            slot.applied = Clock::now();
        } catch (...) {
            slot.failure = std::current_exception();
        }
        slot.joinStart = slot.applied;
    } else {
#pragma omp parallel num_threads(team)
        {
            const int w = omp_get_thread_num();
            if (omp_get_num_threads() != team) {
#pragma omp single
                m_slots[0].failure = teamSizeFailure(team, omp_get_num_threads());
            } else {
                WorkerSlot& slot = m_slots[static_cast<std::size_t>(w)];
                try {
                    computePart(w, indices, Clock::now());
                } catch (...) {
                    slot.failure = std::current_exception();
                }
                slot.waitStart = Clock::now();
#pragma omp barrier
                slot.released = Clock::now();
                bool failed = false;
                for (const auto& s : m_slots)
                    failed = failed || s.failure;
                slot.applyStart = Clock::now();
                if (!failed)
                    combineAndApply(w, team);
                slot.applied = Clock::now();
                slot.joinStart = Clock::now();
            }
        }
    }
    const Clock::time_point t1 = team == 1 ? m_slots[0].joinStart : Clock::now();
    if (const std::exception_ptr failure
        = takeFirstFailure(m_slots, [](WorkerSlot& slot) -> std::exception_ptr& { return slot.failure; }))
        std::rethrow_exception(failure);

    // Each worker's spans on the mode's clock, every one timed on its own, between the update's start (t0,
    // read before the team starts) and its end (t1, after the team has joined): waiting to be started,
    // compute, delay, waiting for the slowest worker, its part of the combine and apply, waiting for the
    // others to finish theirs.
    const double base = m_seconds;
    auto at = [&](Clock::time_point t) { return base + secondsBetween(t0, t); };
    m_spans.clear();
    // A team of one waits for nobody: the moments between its spans are bookkeeping (unaccounted), not waits.
    const bool waits = team > 1;
    // Whom the waits were for: at the barrier, the last worker to reach it (backup: until the arrival that
    // completed the update, that worker; then the dropped ones, which stop when they see it); at the end, the
    // last to finish its share of the apply. A worker does not wait for itself.
    int lastToArrive = 0;
    int lastToApply = 0;
    for (int w = 1; w < team; ++w) {
        if (m_slots[static_cast<std::size_t>(w)].waitStart > m_slots[static_cast<std::size_t>(lastToArrive)].waitStart)
            lastToArrive = w;
        if (m_slots[static_cast<std::size_t>(w)].applied > m_slots[static_cast<std::size_t>(lastToApply)].applied)
            lastToApply = w;
    }
    const int completedBy = m_completedBy;
    auto culprit = [](int whom, int w) { return whom == w ? -1 : whom; };
    for (int w = 0; w < team; ++w) {
        const WorkerSlot& s = m_slots[static_cast<std::size_t>(w)];
        if (waits)
            m_spans.push_back({w, SpanKind::WaitBarrier, at(t0), at(s.start), 0});
        m_spans.push_back({w, SpanKind::Compute, at(s.start), at(s.computed), s.samples});
        m_spans.push_back({w, SpanKind::Delay, at(s.delayStart), at(s.ready), 0});
        if (waits) {
            Clock::time_point from = s.waitStart;
            if (completedBy >= 0) {
                const Clock::time_point completed
                    = std::clamp(m_slots[static_cast<std::size_t>(completedBy)].waitStart, s.waitStart, s.released);
                m_spans.push_back({w, SpanKind::WaitBarrier, at(from), at(completed), 0, culprit(completedBy, w)});
                from = completed;
            }
            m_spans.push_back({w, SpanKind::WaitBarrier, at(from), at(s.released), 0, culprit(lastToArrive, w)});
        }
        m_spans.push_back({w, SpanKind::Apply, at(s.applyStart), at(s.applied), 0});
        if (waits)
            m_spans.push_back({w, SpanKind::WaitBarrier, at(s.joinStart), at(t1), 0, culprit(lastToApply, w)});
    }
    const double wall = secondsBetween(t0, t1);
    reportWorkerTime(WorkWindow {base, base + wall, team}, m_spans, observer);

    m_seconds += wall;
    const int kept = m_reduction.keptSamples(m_dropped);
    // A non-finite loss: the update was not applied and the run stops here with everything recorded so far.
    UpdateEvent event = syncUpdateEvent(batch, m_reduction.keptLossSum(m_dropped) / kept, m_seconds);
    const DroppedGradients left = droppedGradients(m_reduction, m_dropped);
    event.droppedGradients = left.gradients;
    event.droppedSamples = left.samples;
    reportUpdate(event, observer);
}

} // namespace sgdscope
