#pragma once

#include "core/engines/Trainer.h"
#include "core/engines/sim/SimCost.h"
#include "core/engines/sim/SimWorld.h"
#include "core/train/ChunkGradients.h"

#include <vector>

namespace sgdscope {

/// What the simulated cluster's sync-like trainers (SimSyncTrainer: sync and local-sgd; SimBackupTrainer) share:
/// the fixed chunk tree of an update, its math executed for real on this machine's cores (the timing does not
/// depend on the values), the work each worker's part costs on its host, and the report of a slice's updates as
/// one window each. Each trainer simulates only how its workers meet (a tree of messages, a parameter server).
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
    /// changed; returns whether it rebuilt.
    bool prepareReduction();
    /// One update's math: the parts of the workers not `dropped` (empty: none), in parallel on this machine's
    /// cores (each the same computeWorkerPart on the same plan as every engine, whichever thread computes it),
    /// then the kept update (SyncReduction::applyKept; with nothing dropped, sync's). Returns its batch loss over
    /// the kept samples (not finite: not applied, the parameters stay as they were).
    double computeUpdate(const std::uint32_t* indices, const std::vector<char>& dropped);
    /// Per worker: the floating-point work of its part of a batch (its samples, and its tree additions unless the
    /// platform's steps are measured ones, which include them), and its samples.
    void workerWork(std::vector<double>& flops, std::vector<int>& samples) const;
    /// Reports the workers' spans inside one update's window [from, to) of virtual time (`perWorker`: each worker's
    /// in time order; `next`: where each goes on, 0 at the slice's start; `base`: the mode's clock minus the virtual
    /// clock), and moves the mode's clock to the window's end.
    void reportWindow(std::vector<std::vector<Span>>& perWorker, std::vector<std::size_t>& next, double from, double to,
        double base, TrainingObserver& observer);

    SimPlatformChoice m_platform;
    SimCost m_cost;
    BatchCursor m_cursor;
    SyncReduction m_reduction;
    ParamVector m_velocity;
    int m_mathThreads = 1;

private:
    bool m_server;
    std::vector<Span> m_windowSpans;
};

} // namespace sgdscope
