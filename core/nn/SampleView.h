#pragma once

#include <cstdint>

namespace sgdscope {

/// The samples a pass reads, as plain columns of numbers: inputs (features x count, column-major) with either
/// regression targets (targetRows x count) or class labels. The network knows no data sets: whoever holds the
/// data makes the view (train/DatasetView.h for a Dataset).
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

} // namespace sgdscope
