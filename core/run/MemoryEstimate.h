#pragma once

#include "core/nn/MlpSpec.h"
#include "core/train/TrainerSettings.h"

namespace sgdscope {

/// An upper estimate of what training both modes of this model needs besides the data: parameters,
/// momentum, every worker's reduction buffers, snapshots and activations.
double modelMemoryBytes(const MlpSpec& spec, const TrainerSettings& settings, int chunkSize);

} // namespace sgdscope
