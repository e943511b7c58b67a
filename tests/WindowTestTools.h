#pragma once
// What the window's tests (test_window_*) share: the program run as a user runs it, a run folder's summary read
// back, the command line's refusals, a CSV file to train on, the window set to the parabola.

#include "AppRuns.h" // readJson
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/WindowOptions.h"

#include "core/common/Error.h"
#include "core/common/Json.h"

#include <QCoreApplication>
#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QString>
#include <QStringList>

#include <string>
#include <utility>
#include <vector>

namespace sgdscope::testing {

// ThreadSanitizer (LLVM 14) cannot follow a fork from a threaded process: the tests that start the program are
// skipped there; the others (the window's threads: training, first looks) run under it (label "threads").
#if defined(SGDSCOPE_SANITIZE_THREAD)
#define SKIP_IF_FORK_UNDER_TSAN() QSKIP("ThreadSanitizer cannot follow a fork from a threaded process")
#else
#define SKIP_IF_FORK_UNDER_TSAN() (void)0
#endif

/// Each test executable keeps its own QSettings (the window stores its settings and recent files there, and the
/// executables may run at once), empty at its start.
inline void useOwnSettings(const char* testName)
{
    QCoreApplication::setOrganizationName(QStringLiteral("sgdscope-tests"));
    QCoreApplication::setApplicationName(QString::fromLatin1(testName));
    QSettings().clear();
}

using Options = std::vector<std::pair<std::string, std::string>>;

inline QString refusalOf(const Options& options)
{
    try {
        (void)ui::windowSettings(options);
    } catch (const SgdError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

struct Result
{
    int exitCode = -1;
    QString out;
    QString err;
};

inline Result runProgram(const QStringList& args, int timeoutMs = 120000)
{
    QProcess p;
    p.start(QStringLiteral(SGDSCOPE_BINARY), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
        QString::fromUtf8(p.readAllStandardError())};
}

inline const QString csvFile = QStringLiteral(SGDSCOPE_TEST_DATA "/regression.csv");

/// The window and its controller on the parabola preset with `workers` workers, the preset's batch and learning
/// rate, no straggler.
inline void setParabola(ui::MainWindow& w, int workers)
{
    ui::SessionSettings s = w.panel()->settings();
    s.preset = QStringLiteral("parabola");
    s.workers = workers;
    s.batch = 0;
    s.learningRate = 0;
    s.slowWorker = -1;
    w.panel()->setSettings(s);
    w.controller()->setSettings(w.panel()->settings());
}

} // namespace sgdscope::testing
