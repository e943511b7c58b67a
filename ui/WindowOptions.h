#pragma once

#include "ui/SessionData.h"

#include "core/run/RunConfig.h"

#include <QString>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sgdscope::ui {

/// The window's command line: `sgdscope [run options]` opens the window so set. The options go through the
/// same option table and ConfigBuilder as a headless run's (so the same checks and messages); those with a
/// control of their own set it (preset, workers, batch, micro-batches, learning rate, seed, engine, cluster,
/// slow worker, jitter, async apply, async learning rate, target; --mode with exactly two modes, one per column, and
/// their knobs), the others are kept as the session's run options and shown in the panel; options that cannot apply to
/// a window
/// (--out, --steps, ...) are refused with the reason.
/// `configText` is a --config file's text (nullptr: none), named `configName` in messages. Throws SgdError.
SessionSettings windowSettings(const std::vector<std::pair<std::string, std::string>>& options,
    const std::string* configText = nullptr, const std::string& configName = {});

/// The same for a session's own settings: throws SgdError if its run options do not resolve (File > Open data).
void checkSessionOptions(const SessionSettings& settings);

/// The headless command that repeats a window session from its start, with the settings it started with
/// (live changes are not in it), writing into `out`; `syncUpdates` > 0 trains that many sync updates
/// (--steps), so that its sync parameters are the window's after as many updates. Values are quoted for a
/// POSIX shell where needed. `program` is the executable to name ("sgdscope" if it is on the PATH).
QString headlessCommand(
    const SessionSettings& settings, std::int64_t syncUpdates, const QString& out, const QString& program);

/// The same as an argument list (without the program; for MPI, mpirun's arguments come first). It runs the
/// columns' modes in column order (--mode, unless sync,async, the default) with the knobs of those modes only;
/// an MPI job of 1 process runs only the columns' modes that need no parameter server.
QStringList headlessArguments(const SessionSettings& settings, std::int64_t syncUpdates, const QString& out);

/// An MPI session's job as mpirun's arguments (without "mpirun"): the processes, the host file, `program`, and
/// its headless arguments. The window starts its MPI jobs with these, and Copy command line shows them.
QStringList mpirunArguments(
    const SessionSettings& settings, std::int64_t syncUpdates, const QString& out, const QString& program);

/// The run configuration of that headless command (summary.json's "config" for File > Save run as...).
RunConfig headlessConfig(const SessionSettings& settings, std::int64_t syncUpdates);

/// "data: my.csv" or the preset's name: what the session trains on, for the title and the preset box.
QString sessionDataName(const SessionSettings& settings);

} // namespace sgdscope::ui
