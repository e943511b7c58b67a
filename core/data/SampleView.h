#pragma once

#include "core/data/Dataset.h"

#include <cstdint>

namespace sgdscope {

/// Read-only view of samples in columns (features x N, column-major), with either regression targets
/// (targetRows x N) or class labels.
template<typename Scalar>
struct SampleView
{
    const Scalar* inputs = nullptr;
    int features = 0;
    const Scalar* targets = nullptr;
    int targetRows = 0;
    const std::int32_t* labels = nullptr;
    std::int64_t count = 0;
};

/// A Dataset as the float kernels see it.
SampleView<float> viewOf(const Dataset& data);

} // namespace sgdscope
