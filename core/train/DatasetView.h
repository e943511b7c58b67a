#pragma once

#include "core/data/Dataset.h"
#include "core/nn/SampleView.h"

namespace sgdscope {

/// A Dataset as the float kernels see it (a view: the data set must outlive it).
SampleView<float> viewOf(const Dataset& data);

} // namespace sgdscope
