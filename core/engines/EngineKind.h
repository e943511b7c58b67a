#pragma once

#include "core/common/NamedValues.h"

namespace sgdscope {

/// Where the workers of a run run.
enum class EngineKind
{
    Threads, // OpenMP threads of this machine, real clock
    Sim, // a simulated cluster in virtual time (SimGrid)
};
inline constexpr NameTable<EngineKind, 2> engineNames {{{"threads", EngineKind::Threads}, {"sim", EngineKind::Sim}}};

} // namespace sgdscope
