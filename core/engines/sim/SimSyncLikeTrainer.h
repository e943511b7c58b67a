#pragma once

#include "core/engines/Trainer.h"
#include "core/engines/sim/SimCost.h"
#include "core/engines/sim/SimWorld.h"
#include "core/train/ChunkGradients.h"
#include "core/train/LocalSgd.h"

#include <vector>

namespace sgdscope {

/// What the simulated cluster's team-wide trainers (SimSyncTrainer: sync and local-sgd on a tree or an all-reduce;
/// SimServerTrainer: sync, backup and local-sgd on a parameter server) share: the fixed chunk tree of an update and
/// local SGD's rounds, their math executed for real on this machine's cores (the timing does not depend on the
/// values), the work each worker's part costs on its host, the straggler draws, and the report of a slice's updates
/// as one window each. Each trainer simulates only how its workers meet (--topology: who sends what to whom).
class SimSyncLikeTrainer : public Trainer
{
public:
    ~SimSyncLikeTrainer() override;
    const char* engineName() const override { return "sim"; }

protected:
    /// Places `settings.workers` workers on the platform (and a parameter server's host after theirs if `server`);
    /// throws SgdError if they do not fit.
    SimSyncLikeTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode,
        SimPlatformChoice platform, int hosts, bool server);

    /// Places the workers again and rebuilds the reduction for the new settings.
    void settingsChanged() override;
    /// Rebuilds the reduction for the current settings, and the math's workspaces (one per thread), if they
    /// changed, and local SGD's models; returns whether the reduction was rebuilt.
    bool prepareReduction();
    /// How many steps each update of a slice of at most `updates` steps takes: 1 for sync and backup; local SGD's
    /// rounds of H local steps (the run's last one shorter), whole rounds only, at least one.
    std::vector<int> sliceSteps(std::int64_t updates) const;
    /// Per update, per worker: its straggler factor, the mean of its steps' draws (each drawn for its global step;
    /// 1 for a worker without samples). Moves the global step on.
    std::vector<std::vector<double>> drawFactors(const std::vector<int>& steps, const std::vector<int>& samples);
    /// Local SGD: a round of `steps` local steps and the average (LocalSgdModels); returns its loss and the models'
    /// spread before the average (if it was averaged).
    RoundLoss computeRound(int steps, double& spread, std::int64_t samplesDone);
    /// One update's math: the parts of the workers not `dropped` (empty: none), in parallel on this machine's
    /// cores (each the same computeWorkerPart on the same plan as every engine, whichever thread computes it),
    /// then the kept update (SyncReduction::applyKept; with nothing dropped, sync's). Returns its batch loss over
    /// the kept samples (not finite: not applied, the parameters stay as they were).
    double computeUpdate(const std::uint32_t* indices, const std::vector<char>& dropped, std::int64_t samplesDone);
    /// Per worker: the floating-point work of its part of a batch (its samples, and its tree additions unless the
    /// platform's steps are measured ones, which include them), and its samples.
    void workerWork(std::vector<double>& flops, std::vector<int>& samples) const;
    /// Reports a slice's `updates` updates in order, each as a window of virtual time from the previous one's end
    /// (the first's from `sliceStart`) to `windowEnd(u)`: the workers' spans inside it (`perWorker`: each worker's
    /// in time order), then the event `update(u, base)` returns (base: the mode's clock minus the virtual clock).
    /// Moves the mode's clock along; stops after an update that was not applied (diverged: the run stops there
    /// with everything recorded so far).
    template<typename WindowEnd, typename Update>
    void reportUpdates(std::vector<std::vector<Span>>& perWorker, int updates, double sliceStart, WindowEnd windowEnd,
        Update update, TrainingObserver& observer)
    {
        const double base = m_seconds - sliceStart;
        std::vector<std::size_t> next(perWorker.size(), 0);
        double from = sliceStart;
        for (int u = 0; u < updates; ++u) {
            const double to = windowEnd(u);
            reportWindow(perWorker, next, from, to, base, observer);
            const UpdateEvent event = update(u, base);
            reportUpdate(event, observer);
            if (!event.applied)
                return;
            from = to;
        }
    }

    SimPlatformChoice m_platform;
    SimCost m_cost;
    BatchCursor m_cursor;
    SyncReduction m_reduction;
    ParamVector m_velocity;
    int m_mathThreads = 1;
    LocalSgdModels m_models; // local-sgd
    std::int64_t m_step = 0; // steps simulated (straggler draws: local-sgd's local steps, the others' updates)

private:
    /// Reports the workers' spans inside [from, to) of virtual time and moves the mode's clock to its end (`next`:
    /// where each worker's spans go on).
    void reportWindow(std::vector<std::vector<Span>>& perWorker, std::vector<std::size_t>& next, double from, double to,
        double base, TrainingObserver& observer);

    bool m_server;
    std::vector<Span> m_windowSpans;
};

} // namespace sgdscope
