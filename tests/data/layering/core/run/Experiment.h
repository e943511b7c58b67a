#pragma once
// Allowed: run may include anything in core.
#include "core/engines/Trainer.h"
#include "core/io/Writer.h"
