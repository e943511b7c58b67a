#pragma once
// A writer that knows the run: io may not include run (the layering test must name this line).
#include "core/run/Experiment.h"
