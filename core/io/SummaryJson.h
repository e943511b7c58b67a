#pragma once

#include "core/common/Json.h"
#include "core/metrics/Events.h"
#include "core/metrics/RunMetrics.h"

#include <cstdint>
#include <string>

namespace sgdscope {

/// What summary.json says of one mode's run, as plain values: core/run builds it from the run
/// (run/RunSummary.h), this writer lays it out. The engine's and the mode's own sections come ready-made as
/// JSON objects, their members written where summary.json has them.
struct ModeSummaryRecord
{
    Mode mode = Mode::Sync;
    std::string engine; // "threads", "sim", "mpi"
    std::string topology; // the team-wide modes' wires between processes or hosts ("ps", "tree", "allreduce"); "": none
    int workers = 0;
    int batch = 0;
    int accum = 0;
    int chunk = 0;
    std::int64_t updates = 0;
    std::int64_t samples = 0;
    EvaluationRecord final; // of the final parameters, or the last evaluation if finalIsLastEvaluation
    bool finalIsLastEvaluation = false;
    bool virtualClock = false; // a simulated cluster's seconds
    Json clusterFields = Json::object(); // a simulated run's cluster, calibrations and cost model, after "clock"
    double seconds = 0.0; // the mode's clock
    double wallSeconds = 0.0;
    double onCoreSeconds = -1.0; // this process's threads while it trained (< 0: not known)
    double waitedForACoreSeconds = -1.0; // ... runnable but waiting for a core (the kernel's run-queue delay)
    const RunMetrics* metrics = nullptr; // every time, wait and staleness figure
    Json modeFields = Json::object(); // the mode's own section ("backup", "local_sgd", ...), after the waits
    Json learningRate = Json::object(); // the rule and the rates the updates or pushes applied (run/RunSummary.h)
    double targetAccuracy = -1.0; // the run's target (< 0: none)
    double targetLoss = -1.0;
    bool targetReached = false;
    double secondsToTarget = 0.0;
    std::int64_t samplesToTarget = 0;
    std::int64_t updatesToTarget = 0;
    std::string paramsDigest;
    int kernelOrder = 0; // the kernels' order of operations (nn/kernels/Isa.h)
    std::string kernelPath; // the instruction-set path that computed it
    bool diverged = false;
    std::int64_t divergedAt = -1;
    bool interrupted = false;
    std::string failure; // empty if the run did not fail

    double samplesPerSecond() const { return seconds > 0 ? static_cast<double>(samples) / seconds : 0.0; }
};

/// summary.json's object for one mode.
Json summaryJson(const ModeSummaryRecord& record);

} // namespace sgdscope
