#pragma once

#include "ui/SeriesStore.h"
#include "ui/SessionData.h"

#include "core/common/Json.h"

#include <QString>

namespace sgdscope::ui {

/// A finished run's folder (any engine's --out: summary.json and metrics.csv) as the window's values: its
/// modes' loss points, evaluations, status and worker figures, one column each, and notes saying what ran. A
/// folder of two modes fills the columns in its order; of one mode, that mode's column beside sync or async (a
/// sync-like mode on the left); more modes than the two columns are refused. The timeline is not in the folder
/// (it is in the run's --trace file, for Perfetto). Throws SgdError naming the file and what is wrong with it.
struct LoadedRun
{
    MetricsBatch batch;
    ColumnModes modes; // the columns' modes (the knobs stay the defaults)
    QString title; // "fashion-mnist, sim (datacenter), 64 workers"
};
LoadedRun loadRunFolder(const QString& folder);

/// What a window session writes into a run folder besides its charts' data (File > Save run as...).
struct SessionRecord
{
    Json config; // the session's run configuration (summary.json's "config", as headless writes it)
    Json dataset; // summary.json's "dataset": name, train_samples, test_samples, parameters
    QString engine; // "threads", "sim", "mpi"
    ColumnModes modes; // the columns' modes (summary.json's and metrics.csv's names) and knobs
    int workers = 0;
    int batch = 0; // samples per update
    int accum = 1;
    std::array<QString, modeCount> digests; // as of the last pause (empty: not known)
    QString command; // the headless command that repeats the session from its start
    bool running = false; // saved mid-run: the figures are those so far
};

/// Writes a window session as a run folder: summary.json and metrics.csv in the headless run's format (the
/// keys and columns loadRunFolder and scripts read; metrics.csv holds the window's evenly thinned curve, which
/// summary.json says) and the headless run's charts (loss.png, idle.png, staleness.png, comparison.png). The
/// folder must not exist or be empty: everything is written into a new folder beside it, which then takes its
/// name, so a failure leaves nothing half-written. Throws SgdError naming the file.
void saveRunFolder(
    const QString& folder, const std::array<const ModeSeries*, modeCount>& columns, const SessionRecord& record);

} // namespace sgdscope::ui
