#pragma once
// A writer that knows the run: io may not include run (the layering test must name this line).
#include "core/run/Experiment.h"
// The same through a detour that only resolving "../" shows (the test must name it too).
#include "core/metrics/../run/Experiment.h"
