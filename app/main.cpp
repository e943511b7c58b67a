#include "app/CommandLine.h"
#include "app/Headless.h"
#include "app/HeadlessCharts.h"
#include "app/ProgressStream.h"
#include "app/SessionChild.h"
#include "app/StudyCharts.h"
#include "app/StudyCommand.h"
#include "core/common/Error.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/EngineShapes.h"
#include "core/run/ModeChild.h"
#include "ui/MainWindow.h"
#include "ui/RunFolder.h"
#include "ui/StudyFolder.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"

#include <QApplication>
#include <QIcon>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

using namespace sgdscope;

namespace {
/// Headless runs draw their charts on Qt's offscreen platform, which warns about window features it does
/// not have; those warnings are not the user's business.
void quietOffscreenWarnings(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    if (type == QtWarningMsg
        && (message.contains(QLatin1String("does not support")) || message.contains(QLatin1String("XDG_RUNTIME_DIR"))))
        return;
    if (type == QtFatalMsg) // Qt aborts after this (e.g. out of memory while drawing): said as ours, once
        std::cerr << "sgdscope: Qt ended the program: " << qPrintable(message) << '\n';
    else
        std::cerr << qPrintable(qFormatLogMessage(type, context, message)) << '\n';
}

/// An exception that reaches no handler (one thrown through a function that may not throw, as Qt's may when memory
/// runs out while the charts are drawn) ends the program with a line of ours naming it, not a bare abort; the files
/// written so far (summary.json first) stay.
[[noreturn]] void onTerminate()
{
    std::string what = "an error it could not handle";
    if (const std::exception_ptr e = std::current_exception()) {
        try {
            std::rethrow_exception(e);
        } catch (const std::bad_alloc&) {
            what = "out of memory";
        } catch (const std::exception& x) {
            what = x.what();
        } catch (...) {
        }
    }
    std::fprintf(stderr, "sgdscope: the program ends: %s (the files it wrote so far are kept)\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}
} // namespace

int main(int argc, char** argv)
{
    std::set_terminate(onTerminate);
    // OpenMP's threads wait for each other passively unless the user says otherwise: libgomp's default spins
    // first, and on a machine where other processes keep the cores busy a spinning worker burns the time
    // slice its partner needs (sync P = 2 measured a third slower beside one busy process; equal when the
    // machine is idle). libgomp reads the setting when it loads, before main, hence the exec.
    if (!std::getenv("OMP_WAIT_POLICY") && ::setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
        ::execv("/proc/self/exe", argv); // returns only if it failed: then go on as we are
    // Qt's own options (-platform, -style, ...) are for the window; ours all start with "--".
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("-j", 0) == 0) { // a study's -j N (or -jN): --jobs
            args.push_back(a.size() > 2 ? "--jobs=" + a.substr(2) : "--jobs");
            continue;
        }
        const bool qtOption = a.size() > 1 && a[0] == '-' && std::isalpha(static_cast<unsigned char>(a[1]));
        if (!qtOption) // ours ("--lr") and values, negative numbers too ("--lr -1" is refused by the check)
            args.push_back(a);
        else if (a == "-platform" || a == "-style" || a == "-display" || a == "-geometry")
            ++i; // a Qt option and its value
    }
    CommandLine commandLine;
    try {
        commandLine = parseCommandLine(args);
    } catch (const SgdError& e) {
        return refuseRun(e.what());
    }
    // What answers at once needs neither a window nor a display.
    if (commandLine.help) {
        std::cout << helpText();
        return 0;
    }
    // A kernel path forced by SGDSCOPE_ISA that does not exist or that this CPU lacks: said before anything runs.
    if (const std::string isaProblem = kernelPathProblem(); !isaProblem.empty()) {
        return refuseRun(isaProblem, false); // the CPU's: it may differ from rank to rank
    }
    if (commandLine.version) {
        std::cout << "sgdscope 0.1.0 (" << kernelPathDescription() << ")\n";
        return 0;
    }
    if (commandLine.listPresets) {
        for (const auto& name : presetNames())
            std::cout << name << '\n';
        return 0;
    }
    if (commandLine.modeChild) {
        if (commandLine.headless || !commandLine.options.empty() || !commandLine.configFile.empty()) {
            std::cerr << "sgdscope: --mode-child takes its request on standard input, not as options\n";
            return 2;
        }
        return serveModeChild();
    }
    if (commandLine.sessionChild) {
        if (commandLine.headless || !commandLine.options.empty() || !commandLine.configFile.empty()) {
            std::cerr << "sgdscope: --session-child takes its settings on standard input, not as options\n";
            return 2;
        }
        return runSessionChild();
    }
    if (!commandLine.studyFlags.empty()) {
        // A study is headless: its points are headless runs, its charts are drawn off screen.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qInstallMessageHandler(quietOffscreenWarnings);
        return runStudyCommand(commandLine, args, studyChartWriter());
    }
    if (commandLine.headless) {
        // Charts are drawn off screen: no display needed.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        installInterruptHandlers();
        qInstallMessageHandler(quietOffscreenWarnings);
        // The QApplication for the charts is made only once the run has been checked and trained.
        const int exitCode = runHeadless(commandLine, headlessChartWriter(), progressToStandardOutput());
        // The last progress lines (a reader that takes none after a stop signal is not waited for long; then the
        // process leaves without the exit that would wait for standard output, which the writer holds).
        if (!drainProgress(interruptSignal() != 0 && interruptSignal() != SIGUSR1 ? 1.0 : 3600.0)) {
            std::fflush(stderr);
            std::_Exit(exitCode);
        }
        return exitCode;
    }
    // The window's command line: a run folder to show, or run options (and a data set named alone) to start
    // from, checked as headless checks them.
    std::optional<ui::SessionSettings> settings;
    std::string runFolder;
    std::string studyFolder;
    if (commandLine.paths.size() > 1)
        return refuseRun("'" + commandLine.paths[1] + "': the window opens one run folder or data set at a time");
    if (commandLine.paths.size() == 1) {
        const std::string& path = commandLine.paths.front();
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            return refuseRun("'" + path
                + "' does not exist; name a run folder (with summary.json), a CSV file or "
                  "an IDX folder, or give options (see --help)");
        if (std::filesystem::exists(std::filesystem::path(path) / "study.json", ec)
            && !std::filesystem::exists(std::filesystem::path(path) / "summary.json", ec)) {
            if (!commandLine.options.empty() || !commandLine.configFile.empty())
                return refuseRun("'" + path
                    + "' is a study, shown as it ran: run options apply to new runs, so give them without it (or "
                      "continue the study with its own command, in study.json)");
            studyFolder = path;
        } else if (std::filesystem::exists(std::filesystem::path(path) / "summary.json", ec)) {
            if (!commandLine.options.empty() || !commandLine.configFile.empty())
                return refuseRun("'" + path
                    + "' is a finished run, shown as it ran: run options apply to new "
                      "runs, so give them without it");
            runFolder = path;
        } else {
            commandLine.options.insert(commandLine.options.begin(), {"data", path});
        }
    }
    if (!commandLine.options.empty() || !commandLine.configFile.empty()) {
        try {
            std::string configText;
            if (!commandLine.configFile.empty())
                configText = readConfigFile(commandLine.configFile);
            settings = ui::windowSettings(
                commandLine.options, commandLine.configFile.empty() ? nullptr : &configText, commandLine.configFile);
        } catch (const SgdError& e) {
            return refuseRun(e.what());
        }
    }
    const bool platformGiven = !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")
        || std::find(argv + 1, argv + argc, std::string("-platform")) != argv + argc;
    if (!platformGiven && qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        std::cerr << "sgdscope: no display to open the window on (DISPLAY is not set); run it under xvfb-run "
                     "(xvfb-run -a sgdscope), or train without a window: sgdscope --headless --out DIR\n";
        return 2;
    }
    // The data is loaded and the model built (or the run folder read) before any window opens, as a headless
    // run would before it trains: what cannot work is refused now, with headless's message (the window keeps
    // the data).
    auto dataCache = std::make_shared<ui::DataCache>();
    ui::MetricsBatch firstLook;
    if (settings) {
        firstLook = ui::previewSession(dataCache, *settings, true);
        if (!firstLook.error.isEmpty())
            return refuseRun(firstLook.error.toStdString());
    }
    if (!runFolder.empty()) {
        try {
            (void)ui::loadRunFolder(QString::fromStdString(runFolder));
        } catch (const std::exception& e) {
            return refuseRun(e.what());
        }
    }
    if (!studyFolder.empty()) {
        try {
            (void)ui::loadStudyFolder(QString::fromStdString(studyFolder));
        } catch (const std::exception& e) {
            return refuseRun(e.what());
        }
    }

    qInstallMessageHandler(quietOffscreenWarnings); // (XDG_RUNTIME_DIR: not the user's business either)
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("sgdscope"));
    QApplication::setOrganizationName(QStringLiteral("sgdscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/sgdscope.svg")));
    ui::MainWindow window;
    window.adoptDataCache(dataCache);
    if (settings) {
        if (const QString problem = window.applySettings(*settings, &firstLook); !problem.isEmpty())
            return refuseRun(problem.toStdString());
    }
    if (!runFolder.empty()) {
        if (const QString problem = window.openRun(QString::fromStdString(runFolder)); !problem.isEmpty())
            return refuseRun(problem.toStdString());
    }
    window.show();
    if (!studyFolder.empty()) {
        if (const QString problem = window.openStudy(QString::fromStdString(studyFolder)); !problem.isEmpty())
            return refuseRun(problem.toStdString());
    }
    return QApplication::exec();
}
