#pragma once
// Allowed: nn takes common only.
#include "core/common/Error.h"
