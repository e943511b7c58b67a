#pragma once
// Running the sgdscope binary's studies (sgdscope --study DIR ...) from a test, and reading what they wrote; shared by
// the study tests (on this machine, under mpirun, and the window's).

#include "AppRuns.h"
#include "core/common/Json.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace sgdscope::testing {

/// A finished study: its exit code (-1: crashed or given up), stderr, study.json, results.csv, and the wall time.
struct Study
{
    int exitCode = -1;
    QString stderrText;
    QString stdoutText;
    QString dir;
    Json json; // null if none
    QByteArray table; // results.csv
    double seconds = 0.0;
};

inline QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/// Reads what a study wrote into `study.dir`.
inline void readStudy(Study& s)
{
    s.json = readJson(s.dir + QStringLiteral("/study.json"));
    s.table = readAll(s.dir + QStringLiteral("/results.csv"));
}

/// Runs `launcher` + sgdscope --study `dir` `args` to its end (at most `timeoutMs`).
inline Study runStudy(const QString& dir, const QStringList& args, const QStringList& launcher = {},
    int timeoutMs = 600000, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    Study s;
    s.dir = dir;
    QProcess p;
    p.setProcessEnvironment(env);
    const QStringList command
        = launcher + QStringList {QStringLiteral(SGDSCOPE_BINARY), QStringLiteral("--study"), dir} + args;
    QElapsedTimer timer;
    timer.start();
    p.start(command.front(), command.mid(1));
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return s;
    }
    s.seconds = static_cast<double>(timer.nsecsElapsed()) * 1e-9;
    s.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    s.stderrText = QString::fromUtf8(p.readAllStandardError());
    s.stdoutText = QString::fromUtf8(p.readAllStandardOutput());
    readStudy(s);
    return s;
}

/// The points of a study.json with `status` ("" for all).
inline std::vector<Json> pointsWith(const Json& study, const std::string& status = {})
{
    std::vector<Json> out;
    if (!study.is_object() || !study.contains("points"))
        return out;
    for (const Json& p : study.at("points")) {
        if (status.empty() || p.at("status").get<std::string>() == status)
            out.push_back(p);
    }
    return out;
}

} // namespace sgdscope::testing
