#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace sgdscope::ui {

/// A study run by the window (Run > Sweep...): `sgdscope --study DIR ... --progress -` as a child process, its
/// progress read from the JSON lines it writes (core/run/study/StudyRunner.h). Cancel sends SIGTERM: the study
/// keeps its finished points and marks the running ones; the same start again resumes it.
class StudyProcess : public QObject
{
    Q_OBJECT
public:
    explicit StudyProcess(QObject* parent = nullptr);
    ~StudyProcess() override;

    /// Starts `program --study dir args --progress -` (nothing may be running).
    void start(const QString& program, const QString& dir, const QStringList& args);
    /// Stops the study (SIGTERM); ended() follows.
    void cancel();
    bool running() const { return m_process.state() != QProcess::NotRunning; }
    QString dir() const { return m_dir; }
    QStringList args() const { return m_args; }
    int settled() const { return m_settled; }
    int total() const { return m_total; }
    /// Seconds the study expects to take still (-1: not known yet).
    double etaSeconds() const { return m_eta; }

Q_SIGNALS:
    void progressed(int settled, int total, double etaSeconds);
    /// The study ended: its exit code, its status (complete, incomplete, interrupted; empty if it never started)
    /// and, if it was refused or failed, its last line on standard error.
    void ended(int exitCode, const QString& status, const QString& problem);

private:
    void readLines();
    void finished(int exitCode, QProcess::ExitStatus status);

    QProcess m_process;
    QString m_dir;
    QStringList m_args;
    QByteArray m_pending;
    QByteArray m_errorTail; // the end of its standard error (its last line says why it was refused)
    QString m_status;
    int m_settled = 0;
    int m_total = 0;
    double m_eta = -1.0;
};

} // namespace sgdscope::ui
