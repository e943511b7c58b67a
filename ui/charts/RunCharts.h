#pragma once

#include "ui/SeriesStore.h"

#include <QColor>
#include <QStringList>

#include <vector>

namespace sgdscope::ui {

/// The headless run's pictures, drawn with the window's own charts off screen: loss.png (each mode's loss),
/// idle.png (per-worker busy/idle/apply), staleness.png (each mode's price: sync's wait per update, async's
/// staleness, as histograms and over time) and
/// comparison.png (every mode against samples and against seconds), at twice the pixel density, each
/// written atomically. Returns the problem that stopped it, naming the file and the cause (empty on success): it
/// stops at the first, since a full disk fails every later file for the same reason. Needs a QApplication.
/// One mode's series as drawn: its name, its colour, and its family (sync-like modes show their wait per update,
/// the others their staleness).
struct ChartedMode
{
    const ModeSeries* series = nullptr;
    QString name; // "Sync", "Backup", ...
    QColor color;
    bool syncLike = true;
    bool boundWaits = false; // ssp: its pushes' waits at the bound, beside its staleness
};
QStringList writeRunCharts(const QString& folder, const std::vector<ChartedMode>& modes);

} // namespace sgdscope::ui
