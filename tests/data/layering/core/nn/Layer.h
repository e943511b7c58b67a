#pragma once
// Allowed: nn takes common only.
#include "core/common/Error.h"
// core/ is free of Qt (the test must name this line).
#include <QString>
