#pragma once

#include "core/data/DataOrder.h"
#include "core/metrics/StalenessStats.h"
#include "core/metrics/TrainingObserver.h"
#include "core/nn/MlpWorkspace.h"
#include "core/train/Problem.h"
#include "core/train/TrainerSettings.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

namespace sgdscope {

/// Exact running totals of one worker in one mode.
struct WorkerTotals
{
    double busySeconds = 0.0; // computing, including injected straggler delay
    double idleSeconds = 0.0; // sync: waiting for the slowest worker; async: waiting for the lock or a snapshot
    double applySeconds = 0.0; // sync: combine + apply; async: applying its push
    std::int64_t updates = 0; // sync: updates it computed a part of; async: its pushes
    std::int64_t samples = 0;
};

/// Limits of one call to Trainer::run (a time slice in the window, the whole run headless).
struct RunLimits
{
    std::int64_t maxUpdates = std::numeric_limits<std::int64_t>::max();
    double maxSeconds = std::numeric_limits<double>::infinity(); // of the mode's clock
};

/// What both modes share: parameters, data order, counters, timing totals, evaluation.
///
/// Threading: a trainer is driven by one thread (the "driving thread"); it opens OpenMP teams of
/// `workers` threads from there. requestStop() may be called from any thread.
class Trainer
{
public:
    Trainer(std::shared_ptr<const Problem> problem, TrainerSettings settings);
    virtual ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    virtual Mode mode() const = 0;

    /// Trains until the sample budget is used, `limits` are reached, the observer or requestStop() asks to
    /// stop, or the loss diverges. Returns true if there is more to do (call again).
    bool run(const RunLimits& limits, TrainingObserver& observer);

    /// Changes workers, batch, accum, chunk, learning rate, momentum, stragglers and jitter from the next
    /// update on (the data order, parameters and counters carry on). Throws SgdError on invalid values.
    void reconfigure(const TrainerSettings& settings);
    const TrainerSettings& settings() const { return m_settings; }

    /// Thread-safe: the run stops at the next update (sync) or push boundary (async).
    void requestStop() { m_stopFlag.store(true, std::memory_order_relaxed); }

    bool finished() const { return m_samples >= m_settings.sampleBudget || m_diverged || m_stopped; }
    bool diverged() const { return m_diverged; }
    std::int64_t divergedAt() const { return m_divergedAt; }
    bool stopped() const { return m_stopped; }
    std::int64_t updates() const { return m_updates; }
    std::int64_t samples() const { return m_samples; }
    double seconds() const { return m_seconds; }
    const ParamVector& parameters() const { return m_params; }
    const std::vector<WorkerTotals>& workerTotals() const { return m_totals; }
    const StalenessStats& staleness() const { return m_staleness; }
    const Problem& problem() const { return *m_problem; }

    /// Loss (and accuracy) of the current parameters on a whole data set, in fixed blocks summed in a fixed
    /// order, so the value does not depend on the worker count. Runs on `workers` threads.
    EvalSums evaluate(const Dataset& data);
    /// Records an evaluation of the training set now and reports it to the observer.
    EvaluationRecord evaluateAndReport(TrainingObserver& observer);

protected:
    using Clock = std::chrono::steady_clock;
    static double secondsBetween(Clock::time_point a, Clock::time_point b)
    {
        return std::chrono::duration<double>(b - a).count();
    }

    /// Does one unit of work (one update or one time slice of pushes); implemented by each mode.
    virtual void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) = 0;
    /// Called by reconfigure() after the settings changed.
    virtual void settingsChanged() { }

    /// Straggler delay for `worker` after computing for `computeSeconds` in its `step`-th unit of work
    /// (seeded: the same for the same seed, worker and step).
    double stragglerDelay(int worker, std::int64_t step, double computeSeconds) const;
    static void sleepSeconds(double seconds);

    /// Creates the worker's workspace if needed (driving thread only, outside OpenMP regions).
    MlpWorkspace<float>& workspace(int worker);
    /// The worker's existing workspace; safe inside OpenMP regions (never allocates).
    MlpWorkspace<float>& workspaceAt(int worker) { return *m_workspaces[static_cast<std::size_t>(worker)]; }
    int chunkSizeFor(int batch) const;
    void markDiverged(std::int64_t atUpdate);
    void maybeEvaluate(TrainingObserver& observer);
    bool stopWanted(TrainingObserver& observer);

    std::shared_ptr<const Problem> m_problem;
    TrainerSettings m_settings;
    SampleView<float> m_view;
    DataOrder m_order;
    ParamVector m_params;
    std::vector<WorkerTotals> m_totals;
    StalenessStats m_staleness;
    std::int64_t m_updates = 0;
    std::int64_t m_samples = 0;
    double m_seconds = 0.0;
    std::int64_t m_nextEvalSamples = 0;
    std::int64_t m_runStartUpdates = 0; // m_updates when the current run() call began
    bool m_diverged = false;
    std::int64_t m_divergedAt = -1;
    bool m_stopped = false;
    std::atomic<bool> m_stopFlag {false};

private:
    std::vector<std::unique_ptr<MlpWorkspace<float>>> m_workspaces;
    std::vector<std::unique_ptr<MlpWorkspace<float>>> m_evalWorkspaces;
    int m_workspaceCapacity = 0;
};

} // namespace sgdscope
