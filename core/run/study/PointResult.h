#pragma once

#include "core/common/Json.h"

#include <cstdint>
#include <optional>
#include <string>

namespace sgdscope {

/// Where a point of a study stands.
enum class PointStatus
{
    Pending, // not started (or not yet known to run: a later rung)
    Running,
    Done, // finished: its summary.json is complete
    Diverged, // finished, its loss became NaN or Inf (a result, exit code 3)
    Failed, // the run failed (exit code 1, or a crash): run again when the study resumes
    Refused, // the run refused its options (exit code 2; the study's checks should have found it)
    Interrupted, // stopped by a signal before it finished: run again when the study resumes
    Lost, // its MPI rank died while it ran: run again when the study resumes
    Skipped, // cannot run (--skip-impossible)
};
const char* statusName(PointStatus status);
std::optional<PointStatus> statusNamed(const std::string& name);
/// Done or diverged: a result to keep, never run again.
inline bool isFinished(PointStatus s)
{
    return s == PointStatus::Done || s == PointStatus::Diverged;
}
/// No longer running or waiting (finished, or ended without a result in this session).
inline bool isSettled(PointStatus s)
{
    return s != PointStatus::Pending && s != PointStatus::Running;
}

/// What a study keeps of a point's run: its summary.json's figures (the point's one mode). Seconds are the
/// mode's clock (virtual on a simulated cluster).
struct PointResult
{
    std::string mode;
    std::string clock; // "virtual" | "real"
    double seconds = 0.0;
    double secondsToTarget = -1.0; // < 0: not reached, or no target
    std::int64_t samplesToTarget = -1;
    bool targetSet = false;
    double samplesPerSecond = 0.0;
    double idleFraction = 0.0;
    double meanStaleness = 0.0;
    double finalLoss = 0.0; // NaN when the run has none (diverged)
    double accuracy = -1.0; // test accuracy where the data has a test set, else training accuracy; < 0: none
    std::int64_t updates = 0;
    std::int64_t samples = 0;
    bool diverged = false;
    std::string digest; // params_digest
    double wallClockSeconds = 0.0; // real seconds the training took (not part of the results table)

    Json toJson() const;
    static PointResult fromJson(const Json& j);
};

/// Reads a point's run folder: its result if summary.json is there, complete (neither interrupted nor failed)
/// and of one mode; nullopt otherwise (the point runs again). Never throws: a folder it cannot read is not
/// finished.
std::optional<PointResult> readFinishedPoint(const std::string& folder);

} // namespace sgdscope
