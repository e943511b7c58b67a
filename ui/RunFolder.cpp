#include "ui/RunFolder.h"

#include "ui/ModeChoice.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/io/Files.h"
#include "ui/charts/Exportable.h"
#include "ui/charts/RunCharts.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

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
            t.madeOthersWait = numberOr(w, "made_others_wait_seconds", 0.0);
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
    // Which column each run goes to: two runs in their order, one beside sync or async.
    QStringList names;
    for (const Json& run : *runs) {
        const QString name = QString::fromStdString(textOr(run, "mode", ""));
        if (!modeNamed(name))
            throw SgdError("'" + summaryPath.toStdString() + "': a run's \"mode\" is '" + name.left(40).toStdString()
                + "'; use one of " + modeNameList().join(QStringLiteral(", ")).toStdString());
        names << name;
    }
    if (names.size() > modeCount)
        throw SgdError("'" + summaryPath.toStdString() + "': the folder holds " + std::to_string(names.size())
            + " runs (" + names.join(QLatin1Char(',')).toStdString()
            + "), and the window shows two side by side; its PNG charts show them all, or train two at a time "
              "(--mode "
            + names[0].toStdString() + "," + names[1].toStdString() + ")");
    if (names.size() == modeCount && names[0] == names[1]) // (headless refuses a mode given twice)
        throw SgdError("'" + summaryPath.toStdString() + "': the folder holds two runs of " + names[0].toStdString()
            + ", and the window's columns show two different modes; open each run's folder, or train "
            + names[0].toStdString() + " beside another mode");
    if (names.size() == modeCount)
        loaded.modes.names = {names[0], names[1]};
    else if (syncLikeMode(names[0]))
        loaded.modes.names = {names[0], QStringLiteral("async")};
    else
        loaded.modes.names = {QStringLiteral("sync"), names[0]};
    auto columnOf = [&](const QString& name) {
        const auto it = std::find(loaded.modes.names.begin(), loaded.modes.names.end(), name);
        return it == loaded.modes.names.end() ? -1 : static_cast<int>(it - loaded.modes.names.begin());
    };
    std::string engine = "threads";
    int workers = 0;
    for (const Json& run : *runs) {
        const int m = columnOf(QString::fromStdString(textOr(run, "mode", "")));
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
        const int m = columnOf(QString::fromUtf8(cells[mode]));
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

namespace {
/// A number for CSV and JSON: shortest exact text; "" for a value that is not there.
std::string cell(double v)
{
    if (!std::isfinite(v))
        return {};
    std::ostringstream out;
    out.precision(17);
    out << v;
    return out.str();
}

Json runJson(int column, const ModeSeries& series, const SessionRecord& r)
{
    const ModeStatus& s = series.status();
    const QString& name = r.modes.names[static_cast<std::size_t>(column)];
    Json j = Json::object();
    j["mode"] = name.toStdString();
    j["engine"] = r.engine.toStdString();
    j["workers"] = r.workers;
    j["batch"] = r.batch;
    j["accum"] = r.accum;
    j["updates"] = s.updates;
    j["samples"] = s.samples;
    j["final_loss"] = s.lastLoss;
    if (s.lastTestAccuracy >= 0)
        j["test_accuracy"] = s.lastTestAccuracy;
    j["clock"] = s.virtualClock ? "virtual" : "real";
    j["seconds"] = s.seconds;
    j["samples_per_second"] = s.seconds > 0 ? static_cast<double>(s.samples) / s.seconds : 0.0;
    j["idle_fraction"] = s.idleFraction;
    // The window's worker figures cover the time since the last live change (segment_start_seconds on).
    j["workers_since_seconds"] = s.segmentStart;
    Json workers = Json::array();
    for (std::size_t w = 0; w < s.workers.size(); ++w) {
        const WorkerTime& t = s.workers[w];
        Json wj = Json::object();
        wj["worker"] = static_cast<int>(w);
        wj["wall_seconds"] = t.wall;
        wj["busy_seconds"] = t.busy;
        wj["idle_seconds"] = t.idle;
        wj["apply_seconds"] = t.apply;
        wj["communication_seconds"] = t.transfer;
        wj["unaccounted_seconds"] = t.unaccounted;
        wj["idle_fraction"] = t.wall > 0 ? t.idle / t.wall : 0.0;
        wj["updates"] = t.updates;
        wj["made_others_wait_seconds"] = t.madeOthersWait;
        workers.push_back(wj);
    }
    j["workers_detail"] = workers;
    if (!syncLikeMode(name)) {
        Json st = Json::object();
        std::int64_t count = 0;
        for (const auto c : s.stalenessCounts)
            count += c;
        st["count"] = count;
        st["mean"] = s.meanStaleness;
        st["max"] = s.maxStaleness;
        // Percentiles from the histogram; one that falls in its folded last bar ("s or more") is left out.
        auto percentile = [&](double q) -> Json {
            std::int64_t seen = 0;
            for (std::size_t i = 0; i < s.stalenessCounts.size(); ++i) {
                seen += s.stalenessCounts[i];
                if (static_cast<double>(seen) >= q * static_cast<double>(count))
                    return s.stalenessTailFolded && i + 1 == s.stalenessCounts.size() ? Json() : Json(i);
            }
            return Json();
        };
        if (count > 0) {
            st["p50"] = percentile(0.5);
            st["p99"] = percentile(0.99);
        }
        Json h = Json::array();
        for (const auto c : s.stalenessCounts)
            h.push_back(c);
        st["histogram"] = h;
        j["staleness"] = st;
    } else {
        Json wait = Json::object();
        wait["mean_seconds"] = s.meanWait;
        j["update_wait"] = wait;
    }
    if (s.targetAccuracy >= 0 || s.targetLoss >= 0) {
        Json target = Json::object();
        if (s.targetAccuracy >= 0)
            target["test_accuracy"] = s.targetAccuracy;
        if (s.targetLoss >= 0)
            target["train_loss"] = s.targetLoss;
        j["target"] = target;
        if (s.targetReached) {
            j["seconds_to_target"] = s.targetSeconds;
            j["samples_to_target"] = s.targetSamples;
        }
    }
    if (!r.digests[static_cast<std::size_t>(column)].isEmpty())
        j["params_digest"] = r.digests[static_cast<std::size_t>(column)].toStdString();
    j["diverged"] = s.diverged;
    j["diverged_at_update"] = s.diverged ? Json(s.divergedAt) : Json();
    Json changes = Json::array();
    for (const Marker& m : series.markers())
        changes.push_back(Json::object(
            {{"update", m.index}, {"samples", m.samples}, {"seconds", m.seconds}, {"settings", m.text.toStdString()}}));
    j["live_changes"] = changes;
    return j;
}
} // namespace

void saveRunFolder(
    const QString& folder, const std::array<const ModeSeries*, modeCount>& series, const SessionRecord& record)
{
    for (int c = 0; c < modeCount; ++c)
        (void)columnMode(record.modes, c); // names the column whose mode is not one
    const QFileInfo target(QDir::cleanPath(folder)); // ("run/" is the folder run, not a place inside it)
    if (target.exists() && !(target.isDir() && QDir(folder).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot)))
        throw SgdError("Save run as: '" + folder.toStdString() + "' exists; save into a new or empty folder");
    // Everything goes into a new folder beside it, which takes the name once it is complete.
    const QString staging
        = QDir(target.absolutePath())
              .filePath(
                  QStringLiteral(".%1.saving-%2").arg(target.fileName()).arg(QDateTime::currentMSecsSinceEpoch()));
    const std::string dir = staging.toStdString();
    ensureWritableDirectory(dir, "Save run as: folder");
    struct Cleanup
    {
        QString path;
        ~Cleanup()
        {
            if (!path.isEmpty())
                QDir(path).removeRecursively();
        }
    } cleanup {staging};
    const bool virtualClock = series[LeftColumn]->status().virtualClock || series[RightColumn]->status().virtualClock;

    std::string csv = std::string("mode,kind,update,samples,") + (virtualClock ? "virtual_seconds" : "seconds")
        + ",batch_loss,staleness," + (virtualClock ? "virtual_wait_seconds" : "wait_seconds")
        + ",worker,train_loss,train_accuracy,test_loss,test_accuracy\n";
    Json runs = Json::array();
    for (int m = 0; m < modeCount; ++m) {
        const ModeSeries& s = *series[static_cast<std::size_t>(m)];
        if (!s.status().valid && s.points().empty())
            continue;
        const std::string name = record.modes.names[static_cast<std::size_t>(m)].toStdString();
        for (const LossPoint& p : s.points())
            csv += name + ",update," + std::to_string(p.index) + "," + std::to_string(p.samples) + "," + cell(p.seconds)
                + "," + cell(p.loss) + "," + std::to_string(p.staleness) + "," + cell(p.waitSeconds) + ",,,,,\n";
        for (const EvalPoint& e : s.evals())
            csv += name + ",eval," + std::to_string(e.index) + "," + std::to_string(e.samples) + "," + cell(e.seconds)
                + ",,,,," + cell(e.loss) + "," + (e.accuracy >= 0 ? cell(e.accuracy) : std::string()) + ","
                + (e.hasTest ? cell(e.testLoss) : std::string()) + ","
                + (e.hasTest && e.testAccuracy >= 0 ? cell(e.testAccuracy) : std::string()) + "\n";
        runs.push_back(runJson(m, s, record));
    }
    if (runs.empty())
        throw SgdError("Save run as: nothing to save yet; start a run first");
    Json summary = Json::object();
    summary["version"] = "sgdscope 0.1";
    summary["config"] = record.config;
    summary["dataset"] = record.dataset;
    summary["runs"] = runs;
    summary["interrupted"] = false;
    Json window = Json::object();
    window["saved_mid_run"] = record.running;
    window["metrics_rows"] = "the window's evenly thinned curve and every evaluation, not every update";
    window["command"] = record.command.toStdString();
    summary["window"] = window;
    // The charts first, summary.json last: a folder with a summary is a whole run folder.
    std::vector<ChartedMode> charted;
    for (int m = 0; m < modeCount; ++m) {
        const Mode mode = columnMode(record.modes, m);
        charted.push_back(
            {series[static_cast<std::size_t>(m)], modeTitle(mode), palette::mode(mode), isSyncLike(mode)});
    }
    const QStringList problems = writeRunCharts(staging, charted);
    if (!problems.isEmpty())
        throw SgdError(problems.join(QStringLiteral("; ")).toStdString());
    writeFileAtomically((std::filesystem::path(dir) / "metrics.csv").string(), csv);
    writeFileAtomically((std::filesystem::path(dir) / "summary.json").string(), dumpJson(summary, 2) + "\n");
    if (target.exists() && !QDir().rmdir(target.absoluteFilePath()))
        throw SgdError("Save run as: '" + folder.toStdString() + "' could not be replaced");
    if (!QDir().rename(staging, target.absoluteFilePath()))
        throw SgdError(
            "Save run as: '" + staging.toStdString() + "' could not be renamed to '" + folder.toStdString() + "'");
    cleanup.path.clear();
}

} // namespace sgdscope::ui
