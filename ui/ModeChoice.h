#pragma once

// The window's two columns each show a mode (SessionSettings::modes): what the window needs to know of a mode
// by its name, its family (what its lower charts show) and its knob (S, B, H or lambda), in one place.

#include "ui/SessionData.h"

#include "core/metrics/Events.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace sgdscope::ui {

/// The mode called `name` (core's names: "sync", "async", "ssp", "backup", "local-sgd", "dc-asgd"), if any.
std::optional<Mode> modeNamed(const QString& name);
/// The mode of `column`; throws SgdError naming the column's text if it is not a mode.
Mode columnMode(const ColumnModes& modes, int column);
/// Every mode's name, in the order the columns' boxes list them.
QStringList modeNameList();

/// Sync-like modes (sync, backup, local-sgd) train in team-wide updates and show the wait per update; the others
/// push worker by worker and show staleness (core's isSyncLike).
bool syncLikeMode(const QString& name);
/// Whether a column of the session shows a team-wide mode (the only ones --topology concerns).
bool teamWideColumn(const SessionSettings& settings);

/// The workers of `column`'s mode in an MPI job of `processes` that runs the modes of `columns` (core's
/// mpiJobWorkers, on the wires mpiDefaultTopology gives it beside the others); `processes` for a name not a mode.
int mpiColumnWorkers(const ColumnModes& modes, const QList<int>& columns, int column, int processes);

/// A mode's own run option ("ssp-bound", "backup-workers", "local-steps", "dc-lambda"; nullptr for sync and
/// async), its symbol ("S", "B", "H", "\u03bb") and its value in `modes`.
const char* knobOption(Mode m);
QString knobSymbol(Mode m);
double knobValue(const ColumnModes& modes, Mode m);
void setKnobValue(ColumnModes& modes, Mode m, double value);
/// `value` within what the window's box for the knob of `m` offers: the option table's range, cut at the box's end
/// (S up to 1,000, H up to 1,024, lambda 0 to 10; B up to 4,095, which the session's workers cut further). NaN
/// gives the low end.
double knobInWindowRange(Mode m, double value);
/// Every knob of `modes` so (values restored from QSettings, which anyone may have edited).
ColumnModes knobsInWindowRange(ColumnModes modes);
/// The value as a run option takes it: "3"; lambda as the shortest text that reads back exactly ("0.04").
QString knobText(const ColumnModes& modes, Mode m);
/// "S=3" for the markers and titles; empty for sync and async.
QString knobLabel(const ColumnModes& modes, Mode m);

/// The most backup workers the session allows: one fewer than backup's workers (an MPI job's backup has a
/// parameter server and P - 1 workers), at least 0.
int maxBackupWorkers(const SessionSettings& settings);

/// Whether an MPI job runs `m` on a parameter server and workers (async, ssp, backup, dc-asgd: 2 processes at
/// least), not on every process (sync, local-sgd).
bool needsParameterServerOnMpi(Mode m);
/// The columns an MPI job of the session's processes runs, in column order: all of them, except that a job of 1
/// process runs only the modes without a parameter server.
QList<int> mpiRunnableColumns(const SessionSettings& settings);

} // namespace sgdscope::ui
