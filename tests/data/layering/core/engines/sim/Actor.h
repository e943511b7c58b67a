#pragma once
// An engine that reaches up to the run through a relative path (the layering test must name this line).
#include "../../run/Experiment.h"
// Allowed: engines may include train, nn, data, metrics (also relatively).
#include "../../nn/Layer.h"
