#pragma once

#include "core/io/Json.h"
#include "core/run/Experiment.h"

namespace sgdscope {

/// summary.json's object for one mode.
Json summaryJson(const ModeResult& result);

} // namespace sgdscope
