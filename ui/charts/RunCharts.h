#pragma once

#include "ui/SeriesStore.h"

#include <QStringList>

namespace sgdscope::ui {

/// The headless run's pictures, drawn with the window's own charts off screen: loss.png (each mode's loss),
/// idle.png (per-worker busy/idle/apply), staleness.png (each mode's price: sync's wait per update, async's
/// staleness, as histograms and over time) and
/// comparison.png (both modes against samples and against seconds), at twice the pixel density, each
/// written atomically. Returns the problems (empty on success). Needs a QApplication.
QStringList writeRunCharts(const QString& folder, const ModeSeries& sync, const ModeSeries& async);

} // namespace sgdscope::ui
