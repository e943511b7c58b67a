// A comment with an unclosed bracket [1 and a semicolon; the next lines must still be read one by one.
#include "core/run/Experiment.h"
// The source root is on the include path, so angle brackets reach an engine as well (the test must name it).
#include <core/engines/Trainer.h>
