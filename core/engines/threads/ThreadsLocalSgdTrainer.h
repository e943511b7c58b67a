#pragma once

#include "core/engines/Trainer.h"
#include "core/train/LocalSgd.h"

#include <chrono>
#include <exception>
#include <memory>

namespace sgdscope {

/// Local SGD with periodic model averaging on OpenMP threads of this machine (the math: LocalSgdModels): each
/// worker takes H local steps (TrainerSettings::localSteps), step h on its slice of the round's h-th global
/// batch, then the workers meet and the models are averaged; every worker goes on from the average. With H = 1
/// and no momentum each round is sync's update up to rounding (the averaged w - lr g_w against w - lr x the
/// averaged g).
///
/// A round is one update of the mode (a window): samples = H x the batch (the last round of the run takes only
/// the steps left in the sample budget). Measured per worker: compute and straggler delay of each local step
/// (its factor drawn per global step), the local step's apply (Apply), waiting for the last worker to finish
/// its round (WaitBarrier, named after it), its share of the averaging (Apply) and waiting for the others'
/// shares. Before each averaging the mean distance of the workers' models from their average is measured
/// (UpdateEvent::modelSpread).
class ThreadsLocalSgdTrainer final : public Trainer
{
public:
    ThreadsLocalSgdTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings);
    ~ThreadsLocalSgdTrainer() override;
    const char* engineName() const override { return "threads"; }

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    using Clock = std::chrono::steady_clock;
    struct WorkerState;
    class TimedSteps;

    void prepareWorkers();
    /// Worker w's local steps of the round (LocalSgdModels::localSteps), timed.
    void localSteps(int worker, Clock::time_point start);
    /// Worker w's share of the averaging: elements [first, last) of every model, in worker order.
    void average(int worker, int team);

    BatchCursor m_cursor;
    std::vector<std::unique_ptr<WorkerState>> m_workers;
    LocalSgdModels m_models;
    std::vector<double> m_spread; // [team x workers]: each averaging share's squared distances, per model
    std::vector<double> m_modelSquares; // per model: its squared distance, summed over the shares
    std::vector<Span> m_spans;
    std::int64_t m_globalStep = 0; // local steps of each worker so far (straggler draws)
};

} // namespace sgdscope
