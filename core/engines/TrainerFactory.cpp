#include "core/engines/TrainerFactory.h"

#include "core/engines/threads/ThreadsAsyncTrainer.h"
#include "core/engines/threads/ThreadsSyncTrainer.h"

namespace sgdscope {

std::unique_ptr<Trainer> makeTrainer(
    EngineKind engine, Mode mode, std::shared_ptr<const Problem> problem, const TrainerSettings& settings)
{
    switch (engine) {
    case EngineKind::Threads:
        break;
    }
    if (mode == Mode::Sync)
        return std::make_unique<ThreadsSyncTrainer>(std::move(problem), settings);
    return std::make_unique<ThreadsAsyncTrainer>(std::move(problem), settings);
}

} // namespace sgdscope
