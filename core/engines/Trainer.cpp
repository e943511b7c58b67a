#include "core/engines/Trainer.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/train/DatasetView.h"
#include "core/train/ReductionPlan.h"
#include "core/train/UpdateRule.h"

#include <algorithm>
#include <new>

#include <omp.h>

namespace sgdscope {

namespace {
/// The trainer's own preconditions (the user-facing checks, with option names and ranges, are
/// validateSettings in run/SettingsCheck.h; this guards against a caller that skipped them).
void requireUsable(const TrainerSettings& s, std::int64_t trainingSamples)
{
    bool usable = s.workers >= 1 && s.batch >= 1 && s.batch <= trainingSamples && s.accum >= 1 && s.chunk >= 0
        && s.chunk <= s.batch && s.learningRate > 0 && s.momentum >= 0 && s.momentum < 1 && s.sampleBudget >= 1
        && s.jitter >= 0;
    for (const auto& slow : s.stragglers)
        usable = usable && slow.worker >= 0 && slow.worker < s.workers && slow.factor >= 1;
    if (!usable)
        throw SgdError("trainer settings out of range (workers " + std::to_string(s.workers) + ", batch "
            + std::to_string(s.batch) + ", accum " + std::to_string(s.accum) + ", chunk " + std::to_string(s.chunk)
            + "); check them with validateSettings first");
}
} // namespace

Trainer::Trainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode)
    : m_problem(std::move(problem))
    , m_settings(std::move(settings))
    , m_view(viewOf(m_problem->train()))
    , m_order(m_problem->train().size(), m_settings.seed)
    , m_params(m_problem->initialParameters)
    , m_mode(mode)
    , m_metrics(mode)
    , m_evaluator(*m_problem)
    , m_passSamples(passSamplesFor(m_problem->spec))
{
    requireUsable(m_settings, m_problem->train().size());
    m_nextEvalSamples
        = m_settings.evalEverySamples > 0 ? m_settings.evalEverySamples : std::numeric_limits<std::int64_t>::max();
}

Trainer::~Trainer() = default;

void Trainer::reconfigure(const TrainerSettings& settings)
{
    TrainerSettings next = settings;
    next.seed = m_settings.seed; // the data order carries on
    next.sampleBudget = m_settings.sampleBudget;
    requireUsable(next, m_problem->train().size());
    if (next.targetAccuracy != m_settings.targetAccuracy || next.targetLoss != m_settings.targetLoss)
        m_target = TargetReached {}; // a new target is reached anew
    m_settings = std::move(next);
    m_metrics.startSegment();
    settingsChanged();
}

bool Trainer::finished() const
{
    return m_samples >= m_settings.sampleBudget || m_diverged || m_stopped
        || (m_target.reached && m_settings.stopAtTarget);
}

int Trainer::chunkSizeFor(int batch) const
{
    return sgdscope::chunkSizeFor(m_settings.chunk, batch);
}

NetworkWorkspace& Trainer::workspace(int worker)
{
    // Capacity: the largest pass any batch size up to the current one can ask for.
    const int capacity = std::min(m_passSamples, m_settings.batch);
    if (capacity > m_workspaceCapacity) {
        m_workspaces.clear();
        m_workspaceCapacity = capacity;
    }
    while (m_workspaces.size() <= static_cast<std::size_t>(worker))
        m_workspaces.push_back(std::make_unique<NetworkWorkspace>(m_problem->spec, m_workspaceCapacity));
    return *m_workspaces[static_cast<std::size_t>(worker)];
}

void Trainer::markDiverged(std::int64_t atUpdate)
{
    m_diverged = true;
    m_divergedAt = atUpdate;
}

std::int64_t Trainer::updatesWithinLimits(const RunLimits& limits, std::int64_t cap, int batch) const
{
    std::int64_t updates = cap;
    if (limits.maxUpdates != std::numeric_limits<std::int64_t>::max())
        updates = std::min(updates, std::max<std::int64_t>(1, limits.maxUpdates - (m_updates - m_runStartUpdates)));
    updates = std::min(updates, stepsToReach(m_samples, m_settings.sampleBudget, batch));
    if (m_nextEvalSamples != std::numeric_limits<std::int64_t>::max())
        updates = std::min(updates, stepsToReach(m_samples, m_nextEvalSamples, batch));
    return updates;
}

std::int64_t Trainer::pushesWithinLimits(const RunLimits& limits, std::int64_t cap) const
{
    if (limits.maxUpdates == std::numeric_limits<std::int64_t>::max())
        return cap;
    return std::min(cap, std::max<std::int64_t>(1, limits.maxUpdates - (m_updates - m_runStartUpdates)));
}

UpdateEvent Trainer::syncUpdateEvent(int batch, double batchLoss, double seconds)
{
    UpdateEvent event;
    event.mode = m_mode;
    event.index = m_updates;
    event.learningRate = LearningRateRule(m_settings).scheduled(m_samples); // before this update's samples
    event.versionRead = m_updates;
    event.versionApplied = m_updates;
    event.samples = batch;
    event.seconds = seconds;
    event.batchLoss = batchLoss;
    event.applied = std::isfinite(batchLoss);
    if (event.applied) {
        ++m_updates;
        m_samples += batch;
    } else {
        markDiverged(m_updates);
    }
    event.samplesSeen = m_samples;
    return event;
}

int Trainer::nextLocalRoundSteps() const
{
    return localRoundSteps(m_settings.localSteps, stepsToReach(m_samples, m_settings.sampleBudget, m_settings.batch));
}

UpdateEvent Trainer::localRoundEvent(int steps, const RoundLoss& loss, double spread, double seconds)
{
    UpdateEvent event = syncUpdateEvent(steps * m_settings.batch, loss.mean(), seconds);
    if (event.applied)
        event.modelSpread = spread;
    return event;
}

void Trainer::countPush(UpdateEvent& push)
{
    push.mode = m_mode;
    push.index = m_updates;
    if (push.applied) {
        ++m_updates;
        m_samples += push.samples;
    } else if (!m_diverged) {
        markDiverged(m_updates);
    }
    push.samplesSeen = m_samples;
}

bool Trainer::stopRequestedNow() const
{
    return m_stopFlag.load(std::memory_order_relaxed) || cancellationRequested();
}

bool Trainer::stopWanted(TrainingObserver& observer)
{
    if (stopRequestedNow() || observer.stopRequested()) {
        m_stopped = true;
        return true;
    }
    return false;
}

bool Trainer::run(const RunLimits& limits, TrainingObserver& observer)
{
    const double sliceStart = m_seconds;
    m_runStartUpdates = m_updates;
    while (!finished()) {
        if (stopWanted(observer))
            break;
        if (m_updates - m_runStartUpdates >= limits.maxUpdates || m_seconds - sliceStart >= limits.maxSeconds)
            break;
        m_stragglers.prepare(); // before any worker asks, on this (the driving) thread
        trainSome(limits, sliceStart, observer);
        if (stopRequestedNow())
            m_stopped = true;
        maybeEvaluate(observer);
    }
    return !finished();
}

void Trainer::reportWorkerTime(const WorkWindow& window, std::span<const Span> spans, TrainingObserver& observer)
{
    m_metrics.addWorkerTime(window, spans);
    observer.onWorkerTime(window, spans);
}

UpdateFigures Trainer::reportUpdate(const UpdateEvent& update, TrainingObserver& observer)
{
    m_unreported.emplace(Unreported {update, std::nullopt}); // no allocation: both are plain values
    m_unreported->figures = m_metrics.addUpdate(update);
    observer.onUpdate(update, *m_unreported->figures);
    const UpdateFigures figures = *m_unreported->figures;
    m_unreported.reset();
    return figures;
}

void Trainer::reportUntilFailure(TrainingObserver& observer)
{
    if (!m_unreported)
        return;
    if (!m_unreported->figures)
        m_unreported->figures = m_metrics.addUpdate(m_unreported->update);
    observer.onUpdate(m_unreported->update, *m_unreported->figures);
    m_unreported.reset(); // (kept, with its figures, if it failed again: runMode tries once more)
}

void Trainer::reportCut(WindowCutter& cutter, TrainingObserver& observer, bool everything)
{
    cutter.flush(
        [&](const WorkWindow& window, std::span<const Span> spans, WindowCutter::Closed& closed) {
            // The figures take the time once, and again only if they failed (the cutter keeps the window's spans
            // until it leaves; out of memory there changes none of them). The observer is given it once: one that
            // failed may have taken part of it (ProgressFanOut's recorder, the window's slice), and a second
            // time would count that part twice.
            if (!closed.timeCounted) {
                m_metrics.addWorkerTime(window, spans);
                closed.timeCounted = true;
            }
            if (!closed.timeObserved) {
                closed.timeObserved = true;
                observer.onWorkerTime(window, spans);
            }
            while (closed.updatesReported < closed.updates.size())
                reportUpdate(closed.updates[closed.updatesReported++], observer); // it finishes what it was given
        },
        everything);
}

void Trainer::maybeEvaluate(TrainingObserver& observer)
{
    if (m_diverged || m_samples < m_nextEvalSamples)
        return;
    // A periodic evaluation gives way to a stop signal: the stopped run writes its summary first.
    if (!currentEvaluationUnlessStopped(observer))
        m_stopped = true;
}

EvalSums Trainer::evaluate(const Dataset& data)
{
    // As many threads as the machine runs at once (not one per worker: 64 simulated workers are not 64 cores);
    // the sums are the same whatever the count.
    return m_evaluator.evaluate(m_params.data(), data, std::min(m_settings.workers, omp_get_max_threads()),
        m_evaluationCancellable ? std::function<bool()>([] { return cancellationRequested(); })
                                : std::function<bool()>());
}

EvaluationRecord Trainer::evaluateAndReport(TrainingObserver& observer)
{
    const EvaluationRecord record = evaluateAt(m_updates, m_samples, m_seconds);
    reportEvaluation(record, observer);
    return record;
}

EvaluationRecord Trainer::evaluateAt(std::int64_t updates, std::int64_t samples, double seconds)
{
    auto mean = [](double sum, std::int64_t n) { return sum / static_cast<double>(std::max<std::int64_t>(1, n)); };
    const EvalSums train = evaluate(m_problem->train());
    EvaluationRecord record;
    record.mode = m_mode;
    record.index = updates;
    record.samples = samples;
    record.seconds = seconds;
    record.trainLoss = mean(train.lossSum, train.samples);
    if (m_problem->train().isClassification())
        record.trainAccuracy = mean(static_cast<double>(train.correct), train.samples);
    if (const auto& test = m_problem->data->test) {
        const EvalSums held = evaluate(*test);
        record.hasTest = true;
        record.testLoss = mean(held.lossSum, held.samples);
        if (test->isClassification())
            record.testAccuracy = mean(static_cast<double>(held.correct), held.samples);
    }
    if (!m_target.reached && meetsTarget(record, m_settings.targetAccuracy, m_settings.targetLoss))
        m_target = TargetReached {true, seconds, samples, updates};
    if (m_settings.evalEverySamples <= 0)
        m_nextEvalSamples = std::numeric_limits<std::int64_t>::max();
    while (m_nextEvalSamples <= samples)
        m_nextEvalSamples += m_settings.evalEverySamples;
    m_lastEvaluation = record;
    m_evaluated = true;
    return record;
}

void Trainer::reportEvaluation(const EvaluationRecord& record, TrainingObserver& observer)
{
    observer.onEvaluation(record);
}

std::optional<EvaluationRecord> Trainer::currentEvaluationUnlessStopped(TrainingObserver& observer)
{
    m_evaluationCancellable = true;
    try {
        const EvaluationRecord record = currentEvaluation(observer);
        m_evaluationCancellable = false;
        return record;
    } catch (const EvaluationCancelled&) {
        m_evaluationCancellable = false;
        return std::nullopt;
    }
}

EvaluationRecord Trainer::currentEvaluation(TrainingObserver& observer)
{
    if (m_evaluated && m_lastEvaluation.index == m_updates && m_lastEvaluation.samples == m_samples)
        return m_lastEvaluation;
    return evaluateAndReport(observer);
}

} // namespace sgdscope
