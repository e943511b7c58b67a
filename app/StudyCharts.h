#pragma once

#include "core/run/study/StudyRunner.h"

namespace sgdscope {

/// A study's charts (core/run/study/StudyFigures.h), drawn by the window's own chart widgets off screen.
StudyChartWriter studyChartWriter();

} // namespace sgdscope
