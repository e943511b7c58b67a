#pragma once
// Running the sgdscope binary (SGDSCOPE_BINARY) headless from a test, and reading what it wrote; shared by the tests
// whose runs are processes of their own (SimGrid allows one simulated platform per process).

#include "core/common/Json.h"

#include <QByteArray>
#include <QFile>
#include <QLatin1Char>
#include <QObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <string>

namespace sgdscope::testing {

/// The base of a test class whose runs each write to a folder of their own (nextOut) in one temporary folder
/// (m_dir, removed with the test object).
class RunFolderTest : public QObject
{
protected:
    QString nextOut() { return m_dir.filePath(QStringLiteral("run-%1").arg(++m_runs)); }
    QTemporaryDir m_dir;

private:
    int m_runs = 0;
};

/// A headless run: how it ended (-1: it crashed or was given up), what it said on stderr, and the files it wrote.
struct Run
{
    int exitCode = -1;
    QString stderrText;
    QString out;
    Json summary; // null if it wrote none
    QByteArray metrics; // metrics.csv
    QByteArray trace; // trace.json, if it wrote one
};

/// Runs sgdscope --headless --out `out` with `args` and `env`; `launcher` (a program and its arguments, e.g. taskset
/// -c 0) starts it if given. Gives the run up after `timeoutMs`.
inline Run runApp(const QString& out, const QStringList& args,
    const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(), const QStringList& launcher = {},
    int timeoutMs = 300000)
{
    Run r;
    r.out = out;
    QProcess p;
    p.setProcessEnvironment(env);
    const QStringList command = launcher
        + QStringList {QStringLiteral(SGDSCOPE_BINARY), QStringLiteral("--headless"), QStringLiteral("--out"), out}
        + args;
    p.start(command.front(), command.mid(1));
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.stderrText = QString::fromUtf8(p.readAllStandardError());
    QFile summary(out + QStringLiteral("/summary.json"));
    if (summary.open(QIODevice::ReadOnly)) {
        const QByteArray bytes = summary.readAll();
        r.summary = parseJson(std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())), "summary");
    }
    QFile metrics(out + QStringLiteral("/metrics.csv"));
    if (metrics.open(QIODevice::ReadOnly))
        r.metrics = metrics.readAll();
    QFile trace(out + QStringLiteral("/trace.json"));
    if (trace.open(QIODevice::ReadOnly))
        r.trace = trace.readAll();
    return r;
}

/// "a b c" as the words a, b and c (options written as one line).
inline QStringList words(const char* text)
{
    return QString::fromLatin1(text).split(QLatin1Char(' '));
}

/// The first mode's object in a run's summary.json.
inline const Json& firstRun(const Run& r)
{
    return r.summary.at("runs").front();
}

/// A JSON file (null if there is none).
inline Json readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray bytes = f.readAll();
    return parseJson(std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())), path.toStdString());
}

} // namespace sgdscope::testing
