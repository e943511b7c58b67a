#include "ui/StudyProcess.h"

#include "core/common/Json.h"

#include <exception>

namespace sgdscope::ui {

StudyProcess::StudyProcess(QObject* parent)
    : QObject(parent)
{
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &StudyProcess::readLines);
    connect(&m_process, &QProcess::finished, this, &StudyProcess::finished);
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
        m_errorTail += m_process.readAllStandardError();
        if (m_errorTail.size() > 8192) // a long study says a line per point: only the last few matter
            m_errorTail = m_errorTail.right(4096);
    });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            Q_EMIT ended(-1, QString(), tr("could not start %1: %2").arg(m_process.program(), m_process.errorString()));
    });
}

StudyProcess::~StudyProcess()
{
    // A study outlives no window: stopped as Cancel stops it (its finished points stay).
    if (running()) {
        m_process.disconnect(this);
        m_process.terminate();
        if (!m_process.waitForFinished(15000))
            m_process.kill();
        m_process.waitForFinished(2000);
    }
}

void StudyProcess::start(const QString& program, const QString& dir, const QStringList& args)
{
    if (running())
        return;
    m_dir = dir;
    m_args = args;
    m_pending.clear();
    m_errorTail.clear();
    m_status.clear();
    m_settled = 0;
    m_total = 0;
    m_eta = -1.0;
    m_process.start(program,
        QStringList {QStringLiteral("--study"), dir} + args
            + QStringList {QStringLiteral("--progress"), QStringLiteral("-")});
}

void StudyProcess::cancel()
{
    if (running())
        m_process.terminate(); // SIGTERM: the study marks its running points and writes its files
}

void StudyProcess::readLines()
{
    m_pending += m_process.readAllStandardOutput();
    qsizetype end = 0;
    while ((end = m_pending.indexOf('\n')) >= 0) {
        const QByteArray line = m_pending.left(end);
        m_pending.remove(0, end + 1);
        Json j;
        try {
            j = parseJson(std::string_view(line.constData(), static_cast<std::size_t>(line.size())), "study progress");
        } catch (const std::exception&) {
            continue;
        }
        const Json* event = member(j, "study");
        if (!event || !event->is_string())
            continue;
        const std::string kind = event->get<std::string>();
        auto integer = [&](const char* key, int fallback) {
            const Json* v = member(j, key);
            return v && v->is_number_integer() ? v->get<int>() : fallback;
        };
        if (kind == "start") {
            m_total = integer("total", 0);
            Q_EMIT progressed(m_settled, m_total, m_eta);
        } else if (kind == "point") {
            m_settled = integer("settled", m_settled);
            m_total = integer("total", m_total);
            const Json* eta = member(j, "eta_seconds");
            m_eta = eta && eta->is_number() ? eta->get<double>() : -1.0;
            Q_EMIT progressed(m_settled, m_total, m_eta);
        } else if (kind == "end") {
            const Json* status = member(j, "status");
            m_status = status && status->is_string() ? QString::fromStdString(status->get<std::string>()) : QString();
        }
    }
}

void StudyProcess::finished(int exitCode, QProcess::ExitStatus status)
{
    readLines();
    QString problem;
    if (status != QProcess::NormalExit || (exitCode != 0 && m_status.isEmpty())) {
        m_errorTail += m_process.readAllStandardError();
        const QStringList lines = QString::fromUtf8(m_errorTail).trimmed().split(QLatin1Char('\n'));
        problem = lines.isEmpty() ? QString() : lines.back();
        if (problem.startsWith(QStringLiteral("sgdscope: ")))
            problem = problem.mid(10);
    }
    Q_EMIT ended(status == QProcess::NormalExit ? exitCode : -1, m_status, problem);
}

} // namespace sgdscope::ui
