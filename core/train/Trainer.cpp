#include "core/train/Trainer.h"

#include "core/common/Error.h"
#include "core/common/Rng.h"
#include "core/train/ReductionPlan.h"

#include <omp.h>

#include <cerrno>
#include <cmath>
#include <ctime>
#include <exception>

#include <sys/prctl.h>

namespace sgdscope {

namespace {
constexpr int evalBlock = 1024; // samples per evaluation block (fixed: the loss sum must not depend on P)
constexpr int evalCapacity = 256;
} // namespace

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

Trainer::Trainer(std::shared_ptr<const Problem> problem, TrainerSettings settings)
    : m_problem(std::move(problem))
    , m_settings(std::move(settings))
    , m_view(viewOf(m_problem->train()))
    , m_order(m_problem->train().size(), m_settings.seed)
    , m_params(m_problem->initialParameters)
{
    requireUsable(m_settings, m_problem->train().size());
    m_totals.resize(static_cast<std::size_t>(m_settings.workers));
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
    m_settings = std::move(next);
    if (m_totals.size() < static_cast<std::size_t>(m_settings.workers))
        m_totals.resize(static_cast<std::size_t>(m_settings.workers));
    settingsChanged();
}

int Trainer::chunkSizeFor(int batch) const
{
    return m_settings.chunk > 0 ? std::min(m_settings.chunk, batch) : defaultChunkSize(batch, m_problem->spec);
}

MlpWorkspace<float>& Trainer::workspace(int worker)
{
    // Capacity: the largest chunk any batch size up to the current one can ask for.
    const int capacity = chunkSizeFor(m_settings.batch);
    if (capacity > m_workspaceCapacity) {
        m_workspaces.clear();
        m_workspaceCapacity = capacity;
    }
    while (m_workspaces.size() <= static_cast<std::size_t>(worker))
        m_workspaces.push_back(std::make_unique<MlpWorkspace<float>>(m_problem->spec, m_workspaceCapacity));
    return *m_workspaces[static_cast<std::size_t>(worker)];
}

double Trainer::stragglerDelay(int worker, std::int64_t step, double computeSeconds) const
{
    double factor = 1.0;
    for (const auto& slow : m_settings.stragglers) {
        if (slow.worker == worker)
            factor *= slow.factor;
    }
    if (m_settings.jitter > 0) {
        Rng rng(mixSeed(
            m_settings.seed ^ 0x7177E5ULL, static_cast<std::uint64_t>(worker), static_cast<std::uint64_t>(step)));
        factor *= std::exp(m_settings.jitter * rng.normal());
    }
    // Only slow-downs can be modelled (by sleeping); a factor below 1 counts as 1.
    return factor > 1.0 ? (factor - 1.0) * computeSeconds : 0.0;
}

void Trainer::sleepSeconds(double seconds)
{
    if (seconds <= 0)
        return;
    // A sleep cannot end more precisely than the scheduler wakes us (tens of microseconds), so the last
    // stretch of a delay, and all of a very short one, is waited out on the clock.
    constexpr double spinSeconds = 80e-6;
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    if (seconds > spinSeconds) {
        // Ask the kernel for precise wake-ups on this thread (the default 50 us slack would swamp them).
        thread_local bool slackSet = false;
        if (!slackSet) {
            ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
            slackSet = true;
        }
        timespec deadline {};
        ::clock_gettime(CLOCK_MONOTONIC, &deadline);
        const double total = static_cast<double>(deadline.tv_nsec) * 1e-9 + (seconds - spinSeconds);
        deadline.tv_sec += static_cast<time_t>(std::floor(total));
        deadline.tv_nsec = static_cast<long>((total - std::floor(total)) * 1e9);
        while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) { }
    }
    while (Clock::now() < end) { }
}

void Trainer::markDiverged(std::int64_t atUpdate)
{
    m_diverged = true;
    m_divergedAt = atUpdate;
}

bool Trainer::stopWanted(TrainingObserver& observer)
{
    if (m_stopFlag.load(std::memory_order_relaxed) || observer.stopRequested()) {
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
        trainSome(limits, sliceStart, observer);
        maybeEvaluate(observer);
    }
    return !finished();
}

void Trainer::maybeEvaluate(TrainingObserver& observer)
{
    if (m_diverged || m_samples < m_nextEvalSamples)
        return;
    evaluateAndReport(observer);
    while (m_nextEvalSamples <= m_samples)
        m_nextEvalSamples += m_settings.evalEverySamples;
}

EvaluationRecord Trainer::evaluateAndReport(TrainingObserver& observer)
{
    const EvalSums sums = evaluate(m_problem->train());
    EvaluationRecord record;
    record.mode = mode();
    record.index = m_updates;
    record.samples = m_samples;
    record.seconds = m_seconds;
    record.trainLoss = sums.lossSum / static_cast<double>(std::max<std::int64_t>(1, sums.samples));
    if (m_problem->train().isClassification())
        record.trainAccuracy
            = static_cast<double>(sums.correct) / static_cast<double>(std::max<std::int64_t>(1, sums.samples));
    observer.onEvaluation(record);
    return record;
}

EvalSums Trainer::evaluate(const Dataset& data)
{
    const SampleView<float> view = viewOf(data);
    const std::int64_t n = data.size();
    const std::int64_t blocks = (n + evalBlock - 1) / evalBlock;
    const int threads = static_cast<int>(std::min<std::int64_t>(m_settings.workers, std::max<std::int64_t>(1, blocks)));
    while (m_evalWorkspaces.size() < static_cast<std::size_t>(threads))
        m_evalWorkspaces.push_back(std::make_unique<MlpWorkspace<float>>(m_problem->spec, evalCapacity));
    std::vector<EvalSums> perBlock(static_cast<std::size_t>(blocks));
    std::exception_ptr failure;
    const float* params = m_params.data();
    const ParameterLayout& layout = m_problem->layout;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
        // Exceptions must not leave an OpenMP region: record, rethrow outside.
        try {
            const std::int64_t first = b * evalBlock;
            perBlock[static_cast<std::size_t>(b)]
                = m_evalWorkspaces[static_cast<std::size_t>(omp_get_thread_num())]->evaluate(
                    layout, params, view, first, std::min<std::int64_t>(evalBlock, n - first));
        } catch (...) {
#pragma omp critical(sgdscope_eval_failure)
            failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
    EvalSums total;
    for (const auto& s : perBlock) {
        total.lossSum += s.lossSum;
        total.correct += s.correct;
        total.samples += s.samples;
    }
    return total;
}

} // namespace sgdscope
