#pragma once
// Platform files and cost checks for the simulated cluster's tests (test_sim_*).

#include "AppRuns.h"
#include "core/common/Json.h"

#include <QByteArray>
#include <QFile>
#include <QLatin1Char>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QtGlobal>

#include <algorithm>
#include <cmath>
#include <string>

namespace sgdscope::testing {

/// Writes `text` to the file `name` in `dir`; returns its path (a test that cannot write it stops there).
inline QString writeTestFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

/// Writes a platform file of one fully routed zone to `name` in `dir`: `hosts` as given (each the attributes of a
/// <host>), every pair joined by link `l` (its attributes: `link`). Returns its path.
inline QString writePlatform(
    const QTemporaryDir& dir, const QString& name, const QStringList& hosts, const QString& link)
{
    QString xml = QStringLiteral("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
                                 "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
                                 "<zone id=\"z\" routing=\"Full\">\n");
    QStringList ids;
    for (const QString& h : hosts) {
        xml += QStringLiteral("  <host %1/>\n").arg(h);
        ids << h.section(QLatin1Char('"'), 1, 1);
    }
    xml += QStringLiteral("  <link id=\"l\" %1/>\n").arg(link);
    for (int a = 0; a < ids.size(); ++a) {
        for (int b = a + 1; b < ids.size(); ++b)
            xml += QStringLiteral("  <route src=\"%1\" dst=\"%2\"><link_ctn id=\"l\"/></route>\n").arg(ids[a], ids[b]);
    }
    xml += QStringLiteral("</zone>\n</platform>\n");
    return writeTestFile(dir, name, xml.toUtf8());
}

/// The options of a simulated run on the platform file `path`, then `rest`.
inline QStringList onPlatform(const QString& path, const char* rest)
{
    return QStringList {QStringLiteral("--engine"), QStringLiteral("sim"), QStringLiteral("--platform"), path}
    + words(rest);
}

/// "" if every worker of `run` computed its samples at `speed` flop/s: the model's flops per sample, and a whole
/// number of tree additions (how many depends on where its chunks sit in the reduction tree), else what differs.
inline QString computedAtSpeed(const Json& run, double speed)
{
    const double perSample = run.at("cost_model").at("flops_per_sample").get<double>();
    const double perAddition = run.at("cost_model").at("tree_addition_flops").get<double>();
    for (const Json& w : run.at("workers_detail")) {
        const double flops = w.at("compute_seconds").get<double>() * speed;
        const double additions = (flops - w.at("samples").get<double>() * perSample) / perAddition;
        if (additions < -1e-6 || std::fabs(additions - std::round(additions)) > 1e-6 * std::max(1.0, additions))
            return QStringLiteral("%1: worker %2 computed %3 flops for %4 samples of %5 flops (and additions of %6)")
                .arg(QString::fromStdString(run.at("mode").get<std::string>()))
                .arg(w.at("worker").get<int>())
                .arg(flops)
                .arg(w.at("samples").get<double>())
                .arg(perSample)
                .arg(perAddition);
    }
    return {};
}

} // namespace sgdscope::testing
