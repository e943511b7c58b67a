#pragma once

#include "core/data/Dataset.h"
#include "core/nn/ParameterLayout.h"

#include <memory>

namespace sgdscope {

/// What is trained: the model, its data and its initial parameters. Shared read-only by both modes'
/// trainers (and their workers).
struct Problem
{
    NetworkSpec spec;
    ParameterLayout layout;
    std::shared_ptr<const DataSplit> data;
    ParamVector initialParameters;

    const Dataset& train() const { return data->train; }
};

} // namespace sgdscope
