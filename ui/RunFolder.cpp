#include "ui/RunFolder.h"

#include "core/common/Error.h"
#include "core/io/Json.h"

#include <QDir>
#include <QFile>

#include <cmath>
#include <map>

namespace sgdscope::ui {

namespace {
QByteArray readAll(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        throw SgdError("'" + path.toStdString() + "': cannot be read (" + f.errorString().toStdString()
            + "); a run folder holds summary.json and metrics.csv");
    return f.readAll();
}

double numberOr(const Json& object, const char* key, double fallback)
{
    const Json* v = member(object, key);
    return v && v->is_number() ? v->get<double>() : fallback;
}

std::int64_t integerOr(const Json& object, const char* key, std::int64_t fallback)
{
    const Json* v = member(object, key);
    return v && v->is_number_integer() ? v->get<std::int64_t>() : fallback;
}

std::string textOr(const Json& object, const char* key, const std::string& fallback)
{
    const Json* v = member(object, key);
    return v && v->is_string() ? v->get<std::string>() : fallback;
}

int modeIndex(const std::string& mode)
{
    if (mode == "sync")
        return SyncMode;
    if (mode == "async")
        return AsyncMode;
    return -1;
}

ModeStatus statusOf(const Json& run)
{
    ModeStatus s;
    s.valid = true;
    s.updates = integerOr(run, "updates", 0);
    s.samples = integerOr(run, "samples", 0);
    s.seconds = numberOr(run, "seconds", 0.0);
    s.samplesPerSecond = numberOr(run, "samples_per_second", 0.0);
    s.updatesPerSecond = s.seconds > 0 ? static_cast<double>(s.updates) / s.seconds : 0.0;
    s.lastLoss = numberOr(run, "final_loss", 0.0);
    s.lastTestAccuracy = numberOr(run, "test_accuracy", -1.0);
    s.idleFraction = numberOr(run, "idle_fraction", 0.0);
    s.virtualClock = textOr(run, "clock", "real") == "virtual";
    s.diverged = member(run, "diverged") && (*member(run, "diverged")) == true;
    s.divergedAt = integerOr(run, "diverged_at_update", -1);
    s.finished = true;
    if (const Json* st = member(run, "staleness")) {
        s.meanStaleness = numberOr(*st, "mean", 0.0);
        s.maxStaleness = integerOr(*st, "max", 0);
        if (const Json* h = member(*st, "histogram"); h && h->is_array()) {
            for (const Json& c : *h)
                s.stalenessCounts.push_back(c.is_number_integer() ? c.get<std::int64_t>() : 0);
        }
    }
    if (const Json* wait = member(run, "update_wait")) {
        s.meanWait = numberOr(*wait, "mean_seconds", 0.0);
        // The summary's bins (ten per decade from 1 us) folded into the window's decades.
        const Json* h = member(*wait, "histogram");
        const Json* edges = h ? member(*h, "edges_seconds") : nullptr;
        const Json* counts = h ? member(*h, "counts") : nullptr;
        if (edges && counts && edges->is_array() && counts->is_array()) {
            for (std::size_t i = 0; i < counts->size() && i < edges->size(); ++i) {
                const double lower = (*edges)[i].is_number() ? (*edges)[i].get<double>() : 0.0;
                const auto decade = lower < 1e-6
                    ? std::size_t {0}
                    : static_cast<std::size_t>(std::max(0.0, std::floor(std::log10(lower) + 1e-9) + 7));
                if (s.waitDecades.size() <= decade)
                    s.waitDecades.resize(decade + 1, 0);
                s.waitDecades[decade] += (*counts)[i].is_number_integer() ? (*counts)[i].get<std::int64_t>() : 0;
            }
        }
    }
    if (const Json* target = member(run, "target"); target && target->is_object()) {
        s.targetAccuracy = numberOr(*target, "test_accuracy", -1.0);
        s.targetLoss = numberOr(*target, "train_loss", -1.0);
    }
    const Json* seconds = member(run, "seconds_to_target");
    if (seconds && seconds->is_number()) {
        s.targetReached = true;
        s.targetSeconds = seconds->get<double>();
        s.targetSamples = integerOr(run, "samples_to_target", 0);
    }
    if (const Json* workers = member(run, "workers_detail"); workers && workers->is_array()) {
        for (const Json& w : *workers) {
            WorkerTime t;
            t.wall = numberOr(w, "wall_seconds", 0.0);
            t.busy = numberOr(w, "busy_seconds", 0.0);
            t.idle = numberOr(w, "idle_seconds", 0.0);
            t.apply = numberOr(w, "apply_seconds", 0.0);
            t.transfer = numberOr(w, "communication_seconds", 0.0);
            t.unaccounted = numberOr(w, "unaccounted_seconds", 0.0);
            t.updates = integerOr(w, "updates", 0);
            s.workers.push_back(t);
        }
    }
    return s;
}

double field(const QList<QByteArray>& cells, int column)
{
    if (column < 0 || column >= cells.size() || cells[column].isEmpty())
        return std::nan("");
    bool parsed = false;
    const double number = cells[column].toDouble(&parsed);
    return parsed ? number : std::nan(""); // an empty or malformed cell is "no value"
}
} // namespace

LoadedRun loadRunFolder(const QString& folder)
{
    const QDir dir(folder);
    const QString summaryPath = dir.filePath(QStringLiteral("summary.json"));
    const QByteArray summaryText = readAll(summaryPath);
    const Json summary
        = parseJson(std::string_view(summaryText.constData(), static_cast<std::size_t>(summaryText.size())),
            "'" + summaryPath.toStdString() + "'");
    const Json* runs = member(summary, "runs");
    if (!runs || !runs->is_array() || runs->empty())
        throw SgdError("'" + summaryPath.toStdString() + "': no \"runs\" (is this an sgdscope run folder?)");

    LoadedRun loaded;
    MetricsBatch& b = loaded.batch;
    b.ready = true;
    std::string engine = "threads";
    int workers = 0;
    for (const Json& run : *runs) {
        const int m = modeIndex(textOr(run, "mode", ""));
        if (m < 0)
            throw SgdError("'" + summaryPath.toStdString() + "': a run's \"mode\" is not sync or async");
        b.status[static_cast<std::size_t>(m)] = statusOf(run);
        engine = textOr(run, "engine", engine);
        workers = std::max<int>(workers, static_cast<int>(integerOr(run, "workers", 0)));
    }

    // metrics.csv: one row per kept update and per evaluation.
    const QString csvPath = dir.filePath(QStringLiteral("metrics.csv"));
    const QByteArray csv = readAll(csvPath);
    const QList<QByteArray> lines = csv.split('\n');
    if (lines.isEmpty())
        throw SgdError("'" + csvPath.toStdString() + "': empty");
    const QList<QByteArray> header = lines.front().trimmed().split(',');
    auto column = [&](const char* name) { return static_cast<int>(header.indexOf(QByteArray(name))); };
    const int mode = column("mode");
    const int kind = column("kind");
    const int update = column("update");
    const int samples = column("samples");
    const int seconds = column("seconds") >= 0 ? column("seconds") : column("virtual_seconds");
    if (mode < 0 || kind < 0 || update < 0 || samples < 0 || seconds < 0)
        throw SgdError("'" + csvPath.toStdString() + "': the header lacks mode, kind, update, samples or seconds");
    const int batchLoss = column("batch_loss");
    const int staleness = column("staleness");
    const int wait = column("wait_seconds") >= 0 ? column("wait_seconds") : column("virtual_wait_seconds");
    const int trainLoss = column("train_loss");
    const int trainAccuracy = column("train_accuracy");
    const int testLoss = column("test_loss");
    const int testAccuracy = column("test_accuracy");
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QList<QByteArray> cells = lines[i].trimmed().split(',');
        if (cells.size() < header.size())
            continue; // the empty last line
        const int m = modeIndex(cells[mode].toStdString());
        if (m < 0)
            continue;
        const auto index = static_cast<std::int64_t>(field(cells, update));
        const auto seen = static_cast<std::int64_t>(field(cells, samples));
        const double at = field(cells, seconds);
        if (cells[kind] == "update") {
            LossPoint p;
            p.index = index;
            p.samples = seen;
            p.seconds = at;
            p.loss = field(cells, batchLoss);
            const double st = field(cells, staleness);
            p.staleness = std::isfinite(st) ? static_cast<std::int64_t>(st) : 0;
            const double w = field(cells, wait);
            p.waitSeconds = std::isfinite(w) ? w : 0.0;
            b.points[static_cast<std::size_t>(m)].push_back(p);
        } else if (cells[kind] == "eval") {
            EvalPoint e;
            e.index = index;
            e.samples = seen;
            e.seconds = at;
            e.loss = field(cells, trainLoss);
            const double acc = field(cells, trainAccuracy);
            e.accuracy = std::isfinite(acc) ? acc : -1.0;
            const double tl = field(cells, testLoss);
            e.hasTest = std::isfinite(tl);
            e.testLoss = e.hasTest ? tl : 0.0;
            const double ta = field(cells, testAccuracy);
            e.testAccuracy = std::isfinite(ta) ? ta : -1.0;
            b.evals[static_cast<std::size_t>(m)].push_back(e);
        }
    }
    const Json* config = member(summary, "config");
    const std::string preset = config ? textOr(*config, "preset", textOr(*config, "dataset", "")) : "";
    std::string where = engine;
    if (const Json* c = config ? member(*config, "cluster") : nullptr; c && c->is_string())
        where += " (" + c->get<std::string>() + ")";
    else if (const Json* p = config ? member(*config, "platform") : nullptr; p && p->is_string())
        where += " (" + p->get<std::string>() + ")";
    loaded.title = QString::fromStdString(
        preset + ", " + where + ", " + std::to_string(workers) + (workers == 1 ? " worker" : " workers"));
    b.notes << QObject::tr("Run folder %1: %2%3. Its timeline is in its --trace file (Perfetto), not here.")
                   .arg(QDir::toNativeSeparators(dir.absolutePath()), loaded.title,
                       member(summary, "interrupted") && (*member(summary, "interrupted")) == true
                           ? QObject::tr(", interrupted")
                           : QString());
    return loaded;
}

} // namespace sgdscope::ui
