#pragma once

#include "ui/SessionData.h"

#include <QString>

namespace sgdscope::ui {

/// A finished run's folder (any engine's --out: summary.json and metrics.csv) as the window's values: both
/// modes' loss points, evaluations, status and worker figures, and notes saying what ran. The timeline is
/// not in the folder (it is in the run's --trace file, for Perfetto). Throws SgdError naming the file and
/// what is wrong with it.
struct LoadedRun
{
    MetricsBatch batch;
    QString title; // "fashion-mnist, sim (datacenter), 64 workers"
};
LoadedRun loadRunFolder(const QString& folder);

} // namespace sgdscope::ui
