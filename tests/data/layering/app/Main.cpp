// A front end that starts an engine itself: app may include ui, run and common only (the test must name this).
#include "core/engines/Trainer.h"
#include "core/run/Experiment.h"
