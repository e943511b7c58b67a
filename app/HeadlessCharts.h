#pragma once

#include "app/Headless.h"

namespace sgdscope {

/// The headless run's charts (loss.png, idle.png, staleness.png, comparison.png), drawn by the window's own
/// chart widgets off screen.
ChartWriter headlessChartWriter();

} // namespace sgdscope
