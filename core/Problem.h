#pragma once

#include "core/Dataset.h"
#include "core/Model.h"

#include <memory>

namespace sgdscope {

/// What is trained: the model, its data and its initial parameters. Shared read-only by both modes'
/// trainers (and their workers).
struct Problem
{
    MlpSpec spec;
    ParameterLayout layout;
    std::shared_ptr<const DataSplit> data;
    ParamVector initialParameters;

    const Dataset& train() const { return data->train; }
};

} // namespace sgdscope
