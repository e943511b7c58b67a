#pragma once

#include "ui/SessionData.h"

#include <QObject>
#include <QProcess>
#include <QTimer>

namespace sgdscope::ui {

/// A run in other processes that streams what the window shows as JSON lines (ui/ProgressJson.h): a
/// simulated cluster in a session child (`sgdscope --session-child`, which also takes live settings), or an
/// MPI job (`mpirun ... sgdscope --headless --engine mpi --progress -`, whose rank 0 writes the lines).
///
/// Threading: GUI thread only (QProcess signals).
class ExternalRun : public QObject
{
    Q_OBJECT
public:
    enum class Kind
    {
        SessionChild, // stops with {"stop": true} and the end of its input
        MpiJob // stops with SIGUSR1 to mpirun, which passes it on to every process at once
    };

    explicit ExternalRun(Kind kind, QObject* parent = nullptr);
    ~ExternalRun() override;

    /// Starts `program` with `arguments`; `input` (if any) is written to its standard input first.
    void start(const QString& program, const QStringList& arguments, const QProcessEnvironment& environment,
        const QByteArray& input = {});
    /// Where its columns go in the window: the stream's column i is the window's `columns[i]` (an MPI job of one
    /// process runs only some of the window's modes, in column order). By default each column is its own.
    void setColumns(const QList<int>& columns) { m_columns = columns; }
    /// Writes one line to its standard input (a session child's command).
    void send(const QByteArray& line);
    /// Asks it to finish cleanly (it keeps what it has); killed if it has not ended within `graceMs`.
    void stop(int graceMs = 5000);
    bool running() const { return m_process.state() != QProcess::NotRunning; }
    /// Whether stop() was called (its end is then expected, whatever its exit code).
    bool stopping() const { return m_stopping; }
    /// Blocks until it has ended (tests, shutdown); kills it after `ms`.
    void waitForEnd(int ms);
    /// Everything parsed since the last call, merged into one batch.
    MetricsBatch take();
    /// The last lines it wrote on standard error (for a failure message).
    QString errorTail() const;
    QString commandLine() const { return m_commandLine; }

signals:
    void ended(int exitCode, bool crashed);

private:
    void readOutput();

    Kind m_kind;
    QProcess m_process;
    QTimer m_killTimer;
    QByteArray m_partial;
    QStringList m_errors;
    MetricsBatch m_merged;
    QString m_commandLine;
    QList<int> m_columns {LeftColumn, RightColumn};
    bool m_stopping = false;
};

/// Appends `next` to `into`: points, evaluations, time bins and markers are added; the status of a mode,
/// the notes and an error replace the earlier ones.
void mergeBatch(MetricsBatch& into, MetricsBatch&& next);
/// Moves column i of `batch` to column `columns[i]` (the others are left empty).
void moveColumns(MetricsBatch& batch, const QList<int>& columns);

} // namespace sgdscope::ui
