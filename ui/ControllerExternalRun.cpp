// Controller's external runs: a simulated cluster's session child and an MPI job in processes of their own
// (ExternalRun): how each is started, and what its end means. Pause, live changes and stop reach them from the
// session's calls in Controller.cpp.
#include "ui/Controller.h"

#include "ui/ExternalRun.h"
#include "ui/ModeChoice.h"
#include "ui/ProgressJson.h"
#include "ui/WindowOptions.h"
#include "ui/charts/Exportable.h"

#include "core/run/EngineShapes.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QStandardPaths>

#include <algorithm>

#include <unistd.h>

namespace sgdscope::ui {

QString Controller::program() const
{
    return m_program.isEmpty() ? QCoreApplication::applicationFilePath() : m_program;
}

QString Controller::externalCommand() const
{
    return m_external ? m_external->commandLine() : QString();
}

void Controller::startExternal()
{
    const QString program = this->program();
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    m_runFolder.clear();
    m_externalNotes.clear();
    if (m_settings.engine == QStringLiteral("sim")) {
        m_external = std::make_unique<ExternalRun>(ExternalRun::Kind::SessionChild);
        m_external->start(program, {QStringLiteral("--session-child")}, environment,
            QByteArray::fromStdString(dumpJson(sessionSettingsJson(m_settings), -1) + "\n"));
    } else {
        // An MPI job: sync and local-sgd on P processes, the others on a parameter server and P - 1 workers; one
        // mode after the other; rank 0 streams what the window shows and writes the run's files into a folder of
        // its own.
        const SessionSettings& s = m_settings;
        const QString base = QStandardPaths::writableLocation(QStandardPaths::TempLocation);
        m_runFolder = QDir(base).filePath(
            QStringLiteral("sgdscope-runs/mpi-%1")
                .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"))));
        QStringList args = mpirunArguments(s, 0, m_runFolder, program);
        args << QStringLiteral("--progress") << QStringLiteral("-");
        // A target ends each mode of the job when reached (headless runs stop at their target).
        if (s.targetAccuracy >= 0 && presetInfo(s.preset, s.options).classification)
            args << QStringLiteral("--target-accuracy") << QString::number(s.targetAccuracy, 'g', 17);
        else if (s.targetLoss >= 0)
            args << QStringLiteral("--target-loss") << QString::number(s.targetLoss, 'g', 17);
        if (::geteuid() == 0) {
            // Open MPI refuses root unless told twice; CI and containers run as root.
            environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
            environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
        }
        m_external = std::make_unique<ExternalRun>(ExternalRun::Kind::MpiJob);
        // The job streams the modes it runs in column order (headlessArguments asks for those it can run).
        const QList<int> columns = mpiRunnableColumns(s);
        if (!columns.isEmpty())
            m_external->setColumns(columns);
        m_external->start(QStringLiteral("mpirun"), args, environment);
        QStringList shapes;
        int fewestWorkers = s.workers;
        for (const int c : columns) {
            const Mode m = columnMode(s.modes, c);
            const int workers = mpiColumnWorkers(s.modes, columns, c, s.workers);
            fewestWorkers = std::min(fewestWorkers, workers);
            const QString team = workers == 1 ? tr("1 worker") : tr("%1 workers").arg(workers);
            shapes << (workers == s.workers ? tr("%1 on %2").arg(modeTitle(m), team)
                                            : tr("%1 on a parameter server and %2").arg(modeTitle(m), team));
        }
        m_externalNotes << (shapes.size() > 1 ? tr("MPI job of %1: %2, one after the other. Results in %3.")
                                              : tr("MPI job of %1: %2. Results in %3."))
                               .arg(s.workers == 1 ? tr("1 process") : tr("%1 processes").arg(s.workers),
                                   shapes.join(tr(", then ")), m_runFolder);
        if (columns.size() < modeCount)
            m_externalNotes << tr("A job of 1 process has no parameter server: only the column that needs none "
                                  "trains.");
        if (s.lockFree)
            m_externalNotes << tr("Lock-free is for threads: MPI's pushing modes go through a parameter server.");
        const bool straggler = s.slowWorker >= 0 && s.slowFactor > 1.0;
        if (straggler && s.slowWorker >= fewestWorkers)
            m_externalNotes << tr("No straggler: the modes with a parameter server have workers 0 to %1 in a job of "
                                  "%2 processes, so worker %3 does not exist in every mode; pick a lower one.")
                                   .arg(fewestWorkers - 1)
                                   .arg(s.workers)
                                   .arg(s.slowWorker);
    }
    connect(m_external.get(), &ExternalRun::ended, this, &Controller::externalEnded);
    setState(State::Loading);
}

void Controller::externalEnded(int exitCode, bool crashed)
{
    if (!m_external)
        return;
    drain();
    if (!m_external)
        return;
    if (m_state == State::Failed)
        return;
    if (m_external->stopping() || (exitCode == 0 && !crashed)) {
        setState(State::Finished);
        return;
    }
    setState(State::Failed);
    const QString tail = m_external->errorTail();
    emit errorOccurred(tr("%1 ended with exit code %2%3")
                           .arg(m_running.engine == QStringLiteral("mpi") ? tr("The MPI job") : tr("The simulation"))
                           .arg(exitCode)
                           .arg(tail.isEmpty() ? QString() : QStringLiteral(":\n") + tail));
}

} // namespace sgdscope::ui
