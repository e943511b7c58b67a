#include "core/engines/threads/ThreadsLocalSgdTrainer.h"

#include "core/common/Error.h"
#include "core/engines/threads/StragglerSleep.h"
#include "core/engines/threads/WorkerTeam.h"
#include "core/train/ChunkGradients.h"
#include "core/train/UpdateRule.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace sgdscope {

/// One worker's round: its timed spans and losses, on its own cache lines (its model is in m_models).
struct alignas(64) ThreadsLocalSgdTrainer::WorkerState
{
    struct TimedSpan
    {
        SpanKind kind;
        Clock::time_point start, end;
        int samples = 0;
    };

    std::vector<TimedSpan> spans; // this round's local steps
    RoundLoss loss; // this round's samples' losses
    Clock::time_point start, ready, released, averaged, joinStart;
    std::exception_ptr failure;
};

/// A worker's local steps on this machine's clock: each step's compute, its straggler delay (its factor drawn for
/// its global step) and its apply, as timed spans.
class ThreadsLocalSgdTrainer::TimedSteps final : public LocalStepHooks
{
public:
    TimedSteps(WorkerState& worker, int index, const StragglerModel& stragglers, std::int64_t globalStep,
        const std::atomic<bool>& stop)
        : m_spans(worker.spans)
        , m_worker(index)
        , m_stragglers(stragglers)
        , m_globalStep(globalStep)
        , m_stop(stop)
    {
    }
    void computing(int) override { m_start = Clock::now(); }
    void computed(int step, int samples) override
    {
        const Clock::time_point computed = Clock::now();
        m_spans.push_back({SpanKind::Compute, m_start, computed, samples});
        const double delay
            = m_stragglers.delaySeconds(m_worker, m_globalStep + step, secondsBetween(m_start, computed));
        if (delay > 0) {
            const Clock::time_point delayStart = Clock::now();
            sleepForStraggler(delay, m_stop);
            m_spans.push_back({SpanKind::Delay, delayStart, Clock::now(), 0});
        }
    }
    void applying(int) override { m_start = Clock::now(); }
    void applied(int) override { m_spans.push_back({SpanKind::Apply, m_start, Clock::now(), 0}); }

private:
    std::vector<WorkerState::TimedSpan>& m_spans;
    int m_worker;
    const StragglerModel& m_stragglers;
    std::int64_t m_globalStep;
    const std::atomic<bool>& m_stop;
    Clock::time_point m_start;
};

ThreadsLocalSgdTrainer::ThreadsLocalSgdTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings)
    : Trainer(std::move(problem), std::move(settings), Mode::LocalSgd)
    , m_cursor(m_order)
{
    prepareWorkers();
}

ThreadsLocalSgdTrainer::~ThreadsLocalSgdTrainer() = default;

void ThreadsLocalSgdTrainer::settingsChanged()
{
    prepareWorkers();
}

void ThreadsLocalSgdTrainer::prepareWorkers()
{
    const int team = m_settings.workers;
    if (m_workers.size() > static_cast<std::size_t>(team))
        m_workers.resize(static_cast<std::size_t>(team));
    while (m_workers.size() < static_cast<std::size_t>(team))
        m_workers.push_back(std::make_unique<WorkerState>());
    // Every worker starts from the shared model (a change of settings happens between rounds).
    m_models.prepare(team, m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.accum, passSamples(), m_params);
    for (int w = 0; w < team; ++w) {
        m_workers[static_cast<std::size_t>(w)]->spans.reserve(static_cast<std::size_t>(3 * m_settings.localSteps));
        workspace(w);
    }
    m_spread.assign(static_cast<std::size_t>(team) * static_cast<std::size_t>(team), 0.0);
    m_modelSquares.assign(static_cast<std::size_t>(team), 0.0);
    m_spans.reserve(static_cast<std::size_t>(team) * static_cast<std::size_t>(3 * m_settings.localSteps + 4));
}

void ThreadsLocalSgdTrainer::localSteps(int worker, Clock::time_point start)
{
    WorkerState& s = *m_workers[static_cast<std::size_t>(worker)];
    s.start = start;
    s.spans.clear();
    TimedSteps timed(s, worker, m_stragglers, m_globalStep, m_stopFlag);
    s.loss = m_models.localSteps(worker, workspaceAt(worker), m_problem->layout, m_view,
        MomentumSgd(m_settings.momentum), LearningRateRule(m_settings), m_samples, timed);
}

void ThreadsLocalSgdTrainer::average(int worker, int team)
{
    const auto [first, last] = elementShare(m_params.size(), team, worker);
    double* spread = m_spread.data() + static_cast<std::size_t>(worker) * static_cast<std::size_t>(team);
    std::fill(spread, spread + team, 0.0);
    m_models.average(m_params.data(), first, last, spread);
}

void ThreadsLocalSgdTrainer::trainSome(const RunLimits&, double, TrainingObserver& observer)
{
    const int team = m_settings.workers;
    const int steps = nextLocalRoundSteps();
    m_models.startRound(m_cursor, steps, m_settings.batch);

    std::exception_ptr teamFailure;
    bool diverged = false;
    const Clock::time_point t0 = Clock::now();
#pragma omp parallel num_threads(team) if (team > 1)
    {
        const int w = omp_get_thread_num();
        if (omp_get_num_threads() != team) {
#pragma omp single
            teamFailure = teamSizeFailure(team, omp_get_num_threads());
        } else {
            WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
            try {
                localSteps(w, Clock::now());
            } catch (...) {
                s.failure = std::current_exception();
            }
            s.ready = Clock::now();
#pragma omp barrier
            s.released = Clock::now();
            // Every member adds the same losses in the same order: the same verdict without another barrier.
            RoundLoss loss;
            bool stop = false;
            for (const auto& other : m_workers) {
                loss.add(other->loss);
                stop = stop || other->failure;
            }
            stop = stop || loss.diverged();
            if (!stop)
                average(w, team);
            s.averaged = Clock::now();
#pragma omp single
            diverged = stop;
            s.joinStart = Clock::now();
        }
    }
    const Clock::time_point t1 = Clock::now();
    if (teamFailure)
        std::rethrow_exception(teamFailure);
    if (const std::exception_ptr failure = takeFirstFailure(
            m_workers, [](std::unique_ptr<WorkerState>& w) -> std::exception_ptr& { return w->failure; }))
        std::rethrow_exception(failure);

    // Whom the waits were for: at the meeting, the last worker to finish its round; at the end, the last to finish
    // its share of the averaging.
    int lastReady = 0;
    int lastAveraged = 0;
    for (int w = 1; w < team; ++w) {
        if (m_workers[static_cast<std::size_t>(w)]->ready > m_workers[static_cast<std::size_t>(lastReady)]->ready)
            lastReady = w;
        if (m_workers[static_cast<std::size_t>(w)]->averaged
            > m_workers[static_cast<std::size_t>(lastAveraged)]->averaged)
            lastAveraged = w;
    }
    const double base = m_seconds;
    auto at = [&](Clock::time_point t) { return base + secondsBetween(t0, t); };
    auto culprit = [](int whom, int w) { return whom == w ? -1 : whom; };
    const bool waits = team > 1;
    m_spans.clear();
    RoundLoss loss;
    for (int w = 0; w < team; ++w) {
        const WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
        if (waits)
            m_spans.push_back({w, SpanKind::WaitBarrier, at(t0), at(s.start), 0});
        for (const auto& t : s.spans)
            m_spans.push_back({w, t.kind, at(t.start), at(t.end), t.samples});
        if (waits)
            m_spans.push_back({w, SpanKind::WaitBarrier, at(s.ready), at(s.released), 0, culprit(lastReady, w)});
        m_spans.push_back({w, SpanKind::Apply, at(s.released), at(s.averaged), 0});
        if (waits)
            m_spans.push_back({w, SpanKind::WaitBarrier, at(s.joinStart), at(t1), 0, culprit(lastAveraged, w)});
        loss.add(s.loss);
    }
    const double wall = secondsBetween(t0, t1);
    reportWorkerTime(WorkWindow {base, base + wall, team}, m_spans, observer);
    m_seconds += wall;
    m_globalStep += steps;

    // Each model's squared distance from the average, summed over the shares.
    for (int o = 0; o < team; ++o) {
        double squares = 0.0;
        for (int share = 0; share < team; ++share)
            squares += m_spread[static_cast<std::size_t>(share) * static_cast<std::size_t>(team)
                + static_cast<std::size_t>(o)];
        m_modelSquares[static_cast<std::size_t>(o)] = squares;
    }
    const double spread = diverged ? -1.0 : LocalSgdModels::meanDistance(m_modelSquares.data(), team);
    reportUpdate(localRoundEvent(steps, loss, spread, m_seconds), observer);
}

} // namespace sgdscope
