#pragma once

#include "core/engines/EngineKind.h"
#include "core/engines/Trainer.h"
#include "core/engines/sim/SimWorld.h"

#include <memory>

namespace sgdscope {

/// Where the workers of a run run.
struct EngineChoice
{
    EngineKind kind = EngineKind::Threads;
    SimPlatformChoice sim; // EngineKind::Sim: the cluster or platform file, and the built-in hosts' speed
    int simHosts = 0; // hosts to make for a built-in cluster (at least what the run needs)
};

/// Makes the trainer of one mode on one engine.
std::unique_ptr<Trainer> makeTrainer(
    const EngineChoice& engine, Mode mode, std::shared_ptr<const Problem> problem, const TrainerSettings& settings);
/// The threads engine.
inline std::unique_ptr<Trainer> makeTrainer(
    EngineKind engine, Mode mode, std::shared_ptr<const Problem> problem, const TrainerSettings& settings)
{
    return makeTrainer(EngineChoice {engine, {}, 0}, mode, std::move(problem), settings);
}

} // namespace sgdscope
