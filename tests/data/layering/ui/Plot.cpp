// Qt Charts outside ui/charts/ (the test must name it), and two paths that reach an engine only once "./" and
// "../" are resolved from the source root (the test must name both). Not formatted: clang-format would sort them.
// clang-format off
#include <QChart>
#include "./core/engines/Trainer.h"
#include "ui/../core/engines/Trainer.h"
// clang-format on
