#include "ui/ExternalRun.h"

#include "ui/ProgressJson.h"

#include <csignal>

#include <signal.h>

namespace sgdscope::ui {

void mergeBatch(MetricsBatch& into, MetricsBatch&& next)
{
    for (std::size_t m = 0; m < modeCount; ++m) {
        auto append = [](auto& to, auto& from) { to.insert(to.end(), from.begin(), from.end()); };
        append(into.points[m], next.points[m]);
        append(into.evals[m], next.evals[m]);
        append(into.timeline[m], next.timeline[m]);
        append(into.markers[m], next.markers[m]);
        if (next.status[m].valid)
            into.status[m] = std::move(next.status[m]);
    }
    if (!next.notes.isEmpty())
        into.notes = next.notes;
    if (!next.error.isEmpty())
        into.error = next.error;
    into.ready = into.ready || next.ready;
    for (std::size_t m = 0; m < modeCount; ++m) {
        if (!next.digests[m].isEmpty())
            into.digests[m] = next.digests[m];
    }
}

void moveColumns(MetricsBatch& batch, const QList<int>& columns)
{
    MetricsBatch moved;
    moved.notes = std::move(batch.notes);
    moved.error = std::move(batch.error);
    moved.ready = batch.ready;
    for (qsizetype i = 0; i < columns.size() && i < modeCount; ++i) {
        const auto from = static_cast<std::size_t>(i);
        const auto to = static_cast<std::size_t>(columns[i]);
        moved.points[to] = std::move(batch.points[from]);
        moved.evals[to] = std::move(batch.evals[from]);
        moved.timeline[to] = std::move(batch.timeline[from]);
        moved.markers[to] = std::move(batch.markers[from]);
        moved.status[to] = std::move(batch.status[from]);
        moved.digests[to] = std::move(batch.digests[from]);
    }
    batch = std::move(moved);
}

ExternalRun::ExternalRun(Kind kind, QObject* parent)
    : QObject(parent)
    , m_kind(kind)
{
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &ExternalRun::readOutput);
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
        const QString text = QString::fromUtf8(m_process.readAllStandardError());
        for (const QString& line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            m_errors << line;
        while (m_errors.size() > 40)
            m_errors.removeFirst();
    });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            m_errors << tr("could not start %1: %2").arg(m_commandLine, m_process.errorString());
            emit ended(-1, true);
        }
    });
    connect(&m_process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        m_killTimer.stop();
        readOutput();
        emit ended(exitCode, status == QProcess::CrashExit);
    });
    m_killTimer.setSingleShot(true);
    connect(&m_killTimer, &QTimer::timeout, this, [this] {
        if (running())
            m_process.kill();
    });
}

ExternalRun::~ExternalRun()
{
    if (running()) {
        disconnect(&m_process, nullptr, this, nullptr);
        m_process.kill();
        m_process.waitForFinished(3000);
    }
}

void ExternalRun::start(const QString& program, const QStringList& arguments, const QProcessEnvironment& environment,
    const QByteArray& input)
{
    m_commandLine = program + QLatin1Char(' ') + arguments.join(QLatin1Char(' '));
    m_process.setProcessEnvironment(environment);
    m_process.start(program, arguments);
    if (!input.isEmpty())
        m_process.write(input);
}

void ExternalRun::send(const QByteArray& line)
{
    if (running() && !m_stopping)
        m_process.write(line.endsWith('\n') ? line : line + '\n');
}

void ExternalRun::stop(int graceMs)
{
    if (!running() || m_stopping)
        return;
    m_stopping = true;
    if (m_kind == Kind::SessionChild) {
        m_process.write("{\"stop\": true}\n");
        m_process.closeWriteChannel();
    } else {
        ::kill(static_cast<pid_t>(m_process.processId()), SIGUSR1);
    }
    m_killTimer.start(graceMs);
}

void ExternalRun::waitForEnd(int ms)
{
    if (running() && !m_process.waitForFinished(ms)) {
        m_process.kill();
        m_process.waitForFinished(3000);
    }
}

MetricsBatch ExternalRun::take()
{
    MetricsBatch out;
    std::swap(out, m_merged);
    return out;
}

QString ExternalRun::errorTail() const
{
    return m_errors.join(QLatin1Char('\n'));
}

void ExternalRun::readOutput()
{
    m_partial += m_process.readAllStandardOutput();
    qsizetype end = 0;
    while ((end = m_partial.indexOf('\n')) >= 0) {
        const QByteArray line = m_partial.left(end).trimmed();
        m_partial.remove(0, end + 1);
        if (!line.startsWith('{'))
            continue; // not ours (mpirun's own notices)
        try {
            MetricsBatch batch = metricsBatchFromJson(
                parseJson(std::string_view(line.constData(), static_cast<std::size_t>(line.size())), "progress line"));
            if (m_columns != QList<int> {LeftColumn, RightColumn})
                moveColumns(batch, m_columns);
            mergeBatch(m_merged, std::move(batch));
        } catch (const std::exception& e) {
            m_errors << QString::fromUtf8(e.what());
        }
    }
}

} // namespace sgdscope::ui
