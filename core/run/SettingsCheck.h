#pragma once

#include "core/train/Problem.h"
#include "core/train/TrainerSettings.h"

namespace sgdscope {

/// Checks trainer settings against the option table's ranges and the problem (the batch must fit in the
/// training set, stragglers must be existing workers); throws SgdError naming the option as on the command
/// line ("--workers: 0 is not allowed; use an integer from 1 to 256"). Used for headless runs and for the
/// window's live changes alike.
void validateSettings(const TrainerSettings& settings, const Problem& problem);

} // namespace sgdscope
