#pragma once

// The window's values as JSON lines: how a run in another process (a simulated cluster in a child process,
// MPI rank 0 under mpirun) streams what the window shows, and how the window sends it its settings. One
// JSON object per line; every reader refuses what it does not understand with SgdError naming the field.

#include "ui/SessionData.h"

#include "core/common/Json.h"

#include <optional>
#include <string>

namespace sgdscope::ui {

/// What has arrived since the last line: {"type": "batch", ...}. Time bins travel in whole microseconds.
Json metricsBatchJson(const MetricsBatch& batch);
MetricsBatch metricsBatchFromJson(const Json& json);

Json sessionSettingsJson(const SessionSettings& settings);
SessionSettings sessionSettingsFromJson(const Json& json);

/// A command from the window to a session child, one per line: {"settings": {...}}, {"pause": true|false},
/// {"stop": true}.
struct SessionCommand
{
    std::optional<SessionSettings> settings;
    std::optional<bool> pause;
    bool stop = false;
};
SessionCommand sessionCommandFromJson(const Json& json);

} // namespace sgdscope::ui
