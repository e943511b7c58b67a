#include "app/CommandLine.h"
#include "app/Headless.h"
#include "app/HeadlessCharts.h"
#include "core/common/Error.h"
#include "ui/MainWindow.h"

#include <QApplication>
#include <QIcon>

#include <iostream>
#include <string>
#include <vector>

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
    // Qt's own options (-platform, -style, ...) are for the window; ours all start with "--".
    std::vector<std::string> args;
    bool headless = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        headless = headless || a == "--headless";
        args.push_back(a);
    }
    if (headless) {
        CommandLine commandLine;
        try {
            commandLine = parseCommandLine(args);
        } catch (const SgdError& e) {
            std::cerr << "sgdscope: " << e.what() << '\n';
            return 2;
        }
        // Charts are drawn off screen: no display needed.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        installInterruptHandlers();
        qInstallMessageHandler(quietOffscreenWarnings);
        // The QApplication for the charts is made only once the run has been checked and trained.
        return runHeadless(commandLine, headlessChartWriter());
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("sgdscope"));
    QApplication::setOrganizationName(QStringLiteral("sgdscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/sgdscope.svg")));
    std::vector<std::string> rest;
    for (int i = 1; i < argc; ++i)
        rest.emplace_back(argv[i]);
    try {
        const CommandLine commandLine = parseCommandLine(rest);
        if (commandLine.help) {
            std::cout << helpText();
            return 0;
        }
        if (commandLine.version) {
            std::cout << "sgdscope 0.1.0\n";
            return 0;
        }
        if (commandLine.listPresets) {
            for (const auto& name : presetNames())
                std::cout << name << '\n';
            return 0;
        }
        if (!commandLine.options.empty() || !commandLine.configFile.empty())
            throw SgdError("run options are for --headless runs; the window has its own controls (see --help)");
    } catch (const SgdError& e) {
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 2;
    }
    ui::MainWindow window;
    window.show();
    return QApplication::exec();
}
