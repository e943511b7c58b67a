#pragma once

#include "core/data/Dataset.h"
#include "core/run/RunConfig.h"

#include <cstdint>

namespace sgdscope {

/// The data a configuration trains on (headless runs and the window).
DataSplit loadData(const RunConfig& config);

/// The number of training samples a configuration will have, without loading the data (IDX files: read
/// from the header). 0 if it cannot tell (CSV, missing files).
std::int64_t trainingSetSize(const RunConfig& config);

} // namespace sgdscope
