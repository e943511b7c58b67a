#pragma once

#include "ui/SessionData.h"

namespace sgdscope::ui {

/// The session's settings kept between launches (QSettings, one key each; the window keeps its geometry beside
/// them). `s`: the values of the keys not stored yet. A stored preset the window does not know gives parabola, two
/// modes it does not know (or one twice) the default columns, and knobs beyond what their boxes offer the boxes'
/// ends.
SessionSettings storedSessionSettings(SessionSettings s);
void storeSessionSettings(const SessionSettings& s);

} // namespace sgdscope::ui
