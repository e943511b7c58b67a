#include "app/CommandLine.h"
#include "app/Headless.h"
#include "app/HeadlessCharts.h"
#include "app/ProgressStream.h"
#include "app/SessionChild.h"
#include "core/common/Error.h"
#include "core/nn/kernels/Isa.h"
#include "core/run/ConfigBuilder.h"
#include "ui/MainWindow.h"

#include <QApplication>
#include <QIcon>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
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
    std::cerr << qPrintable(qFormatLogMessage(type, context, message)) << '\n';
}
} // namespace

int main(int argc, char** argv)
{
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
        return refuseCommandLine(e.what());
    }
    // What answers at once needs neither a window nor a display.
    if (commandLine.help) {
        std::cout << helpText();
        return 0;
    }
    // A kernel path forced by SGDSCOPE_ISA that does not exist or that this CPU lacks: said before anything runs.
    if (const std::string isaProblem = isaSettingProblem(); !isaProblem.empty()) {
        return refuseCommandLine(isaProblem, false); // the CPU's: it may differ from rank to rank
    }
    if (commandLine.version) {
        std::cout << "sgdscope 0.1.0 (" << kernelDescription() << ")\n";
        return 0;
    }
    if (commandLine.listPresets) {
        for (const auto& name : presetNames())
            std::cout << name << '\n';
        return 0;
    }
    if (commandLine.sessionChild) {
        if (commandLine.headless || !commandLine.options.empty() || !commandLine.configFile.empty()) {
            std::cerr << "sgdscope: --session-child takes its settings on standard input, not as options\n";
            return 2;
        }
        return runSessionChild();
    }
    if (commandLine.headless) {
        // Charts are drawn off screen: no display needed.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        installInterruptHandlers();
        qInstallMessageHandler(quietOffscreenWarnings);
        // The QApplication for the charts is made only once the run has been checked and trained.
        return runHeadless(commandLine, headlessChartWriter(), progressToStandardOutput());
    }
    if (!commandLine.options.empty() || !commandLine.configFile.empty()) {
        std::cerr << "sgdscope: run options are for --headless runs; the window has its own controls (see --help)\n";
        return 2;
    }
    const bool platformGiven = !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")
        || std::find(argv + 1, argv + argc, std::string("-platform")) != argv + argc;
    if (!platformGiven && qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        std::cerr << "sgdscope: no display to open the window on (DISPLAY is not set); run it under xvfb-run "
                     "(xvfb-run -a sgdscope), or train without a window: sgdscope --headless --out DIR\n";
        return 2;
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("sgdscope"));
    QApplication::setOrganizationName(QStringLiteral("sgdscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/sgdscope.svg")));
    ui::MainWindow window;
    window.show();
    return QApplication::exec();
}
