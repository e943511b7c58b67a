// A window that reaches into an engine (the layering test must name this line).
#include "core/engines/Trainer.h"
#include "core/run/Experiment.h"
