#pragma once

#include "core/metrics/TrainingObserver.h"
#include "core/run/Experiment.h"

#include <memory>
#include <string>
#include <vector>

namespace sgdscope {

/// The modes a window trains side by side, live, on this process's engine (this machine's threads, or a
/// simulated cluster in a session child): a trainer per mode, made from one prepared run, given new settings
/// between slices, and run a slice at a time. The window's thread calls everything here (the trainers'
/// driving thread); nothing here knows the window.
class LiveModes
{
public:
    /// A trainer for each of `modes`, from `initial` (checked first: validateSettings, backup's B). Throws
    /// SgdError naming the option.
    LiveModes(const PreparedRun& run, const std::vector<Mode>& modes, const TrainerSettings& initial);
    ~LiveModes();
    LiveModes(const LiveModes&) = delete;
    LiveModes& operator=(const LiveModes&) = delete;

    int count() const { return static_cast<int>(m_trainers.size()); }
    Mode mode(int m) const;

    /// Checks `settings` (values, backup's B against the workers, a platform file's hosts and routes for the
    /// workers) and applies them from every mode's next update, push or round. Throws SgdError naming what
    /// cannot be, and then changes nothing.
    void reconfigure(const TrainerSettings& settings);
    /// Where mode `m` stands and its figures so far (valid until its next slice).
    ModeStanding standing(int m) const;
    /// Evaluates mode `m`'s current parameters on the whole set and reports it to `observer` (the first point
    /// of its curves).
    void evaluateNow(int m, TrainingObserver& observer);
    /// Trains mode `m` for one slice: `sliceSeconds` of its clock on this machine; on a simulated cluster, as
    /// many updates as take about that much of this machine's time (its clock is virtual). Returns whether it
    /// trained (false once the mode has finished: diverged, or its budget used).
    bool runSlice(int m, TrainingObserver& observer, double sliceSeconds);
    /// summary.json's params_digest of mode `m`'s current parameters.
    std::string digest(int m) const;
    /// What is worth knowing about `settings` on this run's engine, one sentence each: the chunks of the exact
    /// sum, workers without work, a calibration made on a busy machine.
    std::vector<std::string> notes(const TrainerSettings& settings) const;

private:
    PreparedRun m_run;
    std::vector<std::unique_ptr<Trainer>> m_trainers;
    std::vector<std::int64_t> m_simSliceUpdates; // per mode: updates that take about a slice of this machine's time
};

/// The settings mode `mode`'s trainer takes of the session's: lock-free applies to async and ssp (dc-asgd
/// compensates under the lock).
TrainerSettings settingsForMode(TrainerSettings settings, Mode mode);

/// Refuses (SgdError naming --backup-workers) a backup B that leaves no gradient of `settings.workers`, when
/// `runsBackup`.
void checkBackupWorkers(const TrainerSettings& settings, bool runsBackup);

/// The whole-set evaluation of `run`'s initial parameters (the same on every engine and worker count), computed
/// here by one worker.
EvaluationRecord evaluateInitialParameters(const PreparedRun& run, TrainerSettings settings);

} // namespace sgdscope
