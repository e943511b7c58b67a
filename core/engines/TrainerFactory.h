#pragma once

#include "core/common/NamedValues.h"
#include "core/engines/Trainer.h"

#include <memory>

namespace sgdscope {

/// Where the workers run.
enum class EngineKind
{
    Threads, // OpenMP threads of this machine, real clock
};
inline constexpr NameTable<EngineKind, 1> engineNames {{{"threads", EngineKind::Threads}}};

/// Makes the trainer of one mode on one engine.
std::unique_ptr<Trainer> makeTrainer(
    EngineKind engine, Mode mode, std::shared_ptr<const Problem> problem, const TrainerSettings& settings);

} // namespace sgdscope
