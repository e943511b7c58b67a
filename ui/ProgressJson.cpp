#include "ui/ProgressJson.h"

#include "core/common/Error.h"

#include <cmath>
#include <limits>

namespace sgdscope::ui {

namespace {
constexpr double microsecond = 1e-6;

double number(const Json& v)
{
    if (v.is_null())
        return std::numeric_limits<double>::quiet_NaN(); // dumpJson writes non-finite numbers as null
    if (!v.is_number())
        throw SgdError("progress line: expected a number, found " + typeName(v));
    return v.get<double>();
}

std::int64_t integer(const Json& v)
{
    if (!v.is_number())
        throw SgdError("progress line: expected an integer, found " + typeName(v));
    return v.get<std::int64_t>();
}

const Json& field(const Json& object, const char* key)
{
    const Json* v = member(object, key);
    if (!v)
        throw SgdError(std::string("progress line: field \"") + key + "\" is missing");
    return *v;
}

const Json& arrayAt(const Json& a, std::size_t i)
{
    if (!a.is_array() || i >= a.size())
        throw SgdError("progress line: an array is shorter than expected");
    return a[i];
}

template<typename T, typename F>
Json perMode(const std::array<std::vector<T>, modeCount>& lists, F&& one)
{
    Json modes = Json::array();
    for (const auto& list : lists) {
        Json items = Json::array();
        for (const T& item : list)
            items.push_back(one(item));
        modes.push_back(std::move(items));
    }
    return modes;
}

template<typename T, typename F>
void readPerMode(const Json& json, std::array<std::vector<T>, modeCount>& lists, F&& one)
{
    for (std::size_t m = 0; m < modeCount; ++m) {
        const Json& items = arrayAt(json, m);
        if (!items.is_array())
            throw SgdError("progress line: expected an array per mode");
        for (const Json& item : items)
            lists[m].push_back(one(item));
    }
}

Json statusJson(const ModeStatus& s)
{
    Json j = Json::object();
    j["valid"] = s.valid;
    if (!s.valid)
        return j;
    j["updates"] = s.updates;
    j["samples"] = s.samples;
    j["seconds"] = s.seconds;
    j["updates_per_second"] = s.updatesPerSecond;
    j["samples_per_second"] = s.samplesPerSecond;
    j["last_loss"] = s.lastLoss;
    j["last_test_accuracy"] = s.lastTestAccuracy;
    j["idle_fraction"] = s.idleFraction;
    j["segment_start"] = s.segmentStart;
    j["virtual_clock"] = s.virtualClock;
    j["mean_staleness"] = s.meanStaleness;
    j["max_staleness"] = s.maxStaleness;
    j["mean_wait"] = s.meanWait;
    j["mean_learning_rate"] = s.meanLearningRate;
    j["diverged"] = s.diverged;
    j["diverged_at"] = s.divergedAt;
    j["finished"] = s.finished;
    j["target_reached"] = s.targetReached;
    j["target_seconds"] = s.targetSeconds;
    j["target_samples"] = s.targetSamples;
    j["target_accuracy"] = s.targetAccuracy;
    j["target_loss"] = s.targetLoss;
    Json workers = Json::array();
    for (const WorkerTime& w : s.workers)
        workers.push_back(
            Json::array({w.wall, w.busy, w.idle, w.apply, w.transfer, w.unaccounted, w.updates, w.madeOthersWait}));
    j["workers"] = std::move(workers);
    j["staleness_counts"] = s.stalenessCounts;
    j["staleness_tail_folded"] = s.stalenessTailFolded;
    j["wait_decades"] = s.waitDecades;
    return j;
}

ModeStatus statusFromJson(const Json& j)
{
    ModeStatus s;
    s.valid = field(j, "valid").get<bool>();
    if (!s.valid)
        return s;
    s.updates = integer(field(j, "updates"));
    s.samples = integer(field(j, "samples"));
    s.seconds = number(field(j, "seconds"));
    s.updatesPerSecond = number(field(j, "updates_per_second"));
    s.samplesPerSecond = number(field(j, "samples_per_second"));
    s.lastLoss = number(field(j, "last_loss"));
    s.lastTestAccuracy = number(field(j, "last_test_accuracy"));
    s.idleFraction = number(field(j, "idle_fraction"));
    s.segmentStart = number(field(j, "segment_start"));
    s.virtualClock = field(j, "virtual_clock").get<bool>();
    s.meanStaleness = number(field(j, "mean_staleness"));
    s.maxStaleness = integer(field(j, "max_staleness"));
    s.meanWait = number(field(j, "mean_wait"));
    s.meanLearningRate = number(field(j, "mean_learning_rate"));
    s.diverged = field(j, "diverged").get<bool>();
    s.divergedAt = integer(field(j, "diverged_at"));
    s.finished = field(j, "finished").get<bool>();
    s.targetReached = field(j, "target_reached").get<bool>();
    s.targetSeconds = number(field(j, "target_seconds"));
    s.targetSamples = integer(field(j, "target_samples"));
    s.targetAccuracy = number(field(j, "target_accuracy"));
    s.targetLoss = number(field(j, "target_loss"));
    for (const Json& w : field(j, "workers")) {
        WorkerTime t;
        t.wall = number(arrayAt(w, 0));
        t.busy = number(arrayAt(w, 1));
        t.idle = number(arrayAt(w, 2));
        t.apply = number(arrayAt(w, 3));
        t.transfer = number(arrayAt(w, 4));
        t.unaccounted = number(arrayAt(w, 5));
        t.updates = integer(arrayAt(w, 6));
        t.madeOthersWait = w.size() > 7 ? number(arrayAt(w, 7)) : 0.0; // (absent from older streams)
        s.workers.push_back(t);
    }
    s.stalenessCounts = field(j, "staleness_counts").get<std::vector<std::int64_t>>();
    s.stalenessTailFolded = field(j, "staleness_tail_folded").get<bool>();
    s.waitDecades = field(j, "wait_decades").get<std::vector<std::int64_t>>();
    return s;
}
} // namespace

Json metricsBatchJson(const MetricsBatch& b)
{
    Json j = Json::object();
    j["type"] = "batch";
    j["points"] = perMode(b.points, [](const LossPoint& p) {
        return Json::array({p.index, p.samples, p.seconds, p.loss, p.staleness, p.waitSeconds});
    });
    j["evals"] = perMode(b.evals, [](const EvalPoint& e) {
        return Json::array({e.index, e.samples, e.seconds, e.loss, e.accuracy, e.hasTest, e.testLoss, e.testAccuracy});
    });
    j["timeline"] = perMode(b.timeline, [](const TimeBin& t) {
        Json bin = Json::array({t.worker, t.bin});
        for (const float seconds : t.seconds)
            bin.push_back(std::lround(seconds / microsecond));
        return bin;
    });
    j["markers"] = perMode(b.markers, [](const Marker& m) {
        return Json::array({m.index, m.samples, m.seconds, m.text.toStdString()});
    });
    Json status = Json::array();
    for (const ModeStatus& s : b.status)
        status.push_back(statusJson(s));
    j["status"] = std::move(status);
    Json notes = Json::array();
    for (const QString& n : b.notes)
        notes.push_back(n.toStdString());
    j["notes"] = std::move(notes);
    j["error"] = b.error.toStdString();
    j["ready"] = b.ready;
    if (!b.digests[LeftColumn].isEmpty() || !b.digests[RightColumn].isEmpty())
        j["digests"] = Json::array({b.digests[LeftColumn].toStdString(), b.digests[RightColumn].toStdString()});
    return j;
}

MetricsBatch metricsBatchFromJson(const Json& j)
{
    if (!j.is_object() || field(j, "type") != "batch")
        throw SgdError("progress line: not a batch");
    MetricsBatch b;
    readPerMode(field(j, "points"), b.points, [](const Json& a) {
        LossPoint p;
        p.index = integer(arrayAt(a, 0));
        p.samples = integer(arrayAt(a, 1));
        p.seconds = number(arrayAt(a, 2));
        p.loss = number(arrayAt(a, 3));
        p.staleness = integer(arrayAt(a, 4));
        p.waitSeconds = number(arrayAt(a, 5));
        return p;
    });
    readPerMode(field(j, "evals"), b.evals, [](const Json& a) {
        EvalPoint e;
        e.index = integer(arrayAt(a, 0));
        e.samples = integer(arrayAt(a, 1));
        e.seconds = number(arrayAt(a, 2));
        e.loss = number(arrayAt(a, 3));
        e.accuracy = number(arrayAt(a, 4));
        e.hasTest = arrayAt(a, 5).get<bool>();
        e.testLoss = number(arrayAt(a, 6));
        e.testAccuracy = number(arrayAt(a, 7));
        return e;
    });
    readPerMode(field(j, "timeline"), b.timeline, [](const Json& a) {
        TimeBin t;
        t.worker = static_cast<int>(integer(arrayAt(a, 0)));
        t.bin = integer(arrayAt(a, 1));
        for (std::size_t k = 0; k < t.seconds.size(); ++k)
            t.seconds[k] = static_cast<float>(static_cast<double>(integer(arrayAt(a, 2 + k))) * microsecond);
        return t;
    });
    readPerMode(field(j, "markers"), b.markers, [](const Json& a) {
        Marker m;
        m.index = integer(arrayAt(a, 0));
        m.samples = integer(arrayAt(a, 1));
        m.seconds = number(arrayAt(a, 2));
        m.text = QString::fromStdString(arrayAt(a, 3).get<std::string>());
        return m;
    });
    const Json& status = field(j, "status");
    for (std::size_t m = 0; m < modeCount; ++m)
        b.status[m] = statusFromJson(arrayAt(status, m));
    for (const Json& n : field(j, "notes"))
        b.notes << QString::fromStdString(n.get<std::string>());
    b.error = QString::fromStdString(field(j, "error").get<std::string>());
    b.ready = field(j, "ready").get<bool>();
    if (const Json* d = member(j, "digests")) { // only when a session child pauses
        for (std::size_t m = 0; m < modeCount; ++m)
            b.digests[m] = QString::fromStdString(arrayAt(*d, m).get<std::string>());
    }
    return b;
}

Json sessionSettingsJson(const SessionSettings& s)
{
    Json j = Json::object();
    j["preset"] = s.preset.toStdString();
    j["target_accuracy"] = s.targetAccuracy;
    j["target_loss"] = s.targetLoss;
    j["workers"] = s.workers;
    j["batch"] = s.batch;
    j["accum"] = s.accum;
    j["learning_rate"] = s.learningRate;
    j["slow_worker"] = s.slowWorker;
    j["slow_factor"] = s.slowFactor;
    j["jitter"] = s.jitter;
    j["seed"] = s.seed;
    j["lock_free"] = s.lockFree;
    j["push_learning_rate"] = s.pushLearningRate.toStdString();
    j["engine"] = s.engine.toStdString();
    j["cluster"] = s.cluster.toStdString();
    j["platform_file"] = s.platformFile.toStdString();
    j["topology"] = s.topology.toStdString();
    j["host_file"] = s.hostFile.toStdString();
    j["batch_per_worker"] = s.batchPerWorker;
    j["modes"] = Json::array({s.modes.names[LeftColumn].toStdString(), s.modes.names[RightColumn].toStdString()});
    j["ssp_bound"] = s.modes.sspBound;
    j["backup_workers"] = s.modes.backupWorkers;
    j["local_steps"] = s.modes.localSteps;
    j["dc_lambda"] = s.modes.dcLambda;
    Json options = Json::array();
    for (const auto& [name, value] : s.options)
        options.push_back(Json::array({name.toStdString(), value.toStdString()}));
    j["options"] = options;
    return j;
}

SessionSettings sessionSettingsFromJson(const Json& j)
{
    if (!j.is_object())
        throw SgdError("session settings: expected an object, found " + typeName(j));
    auto text = [&](const char* key) { return QString::fromStdString(field(j, key).get<std::string>()); };
    SessionSettings s;
    s.preset = text("preset");
    s.targetAccuracy = number(field(j, "target_accuracy"));
    s.targetLoss = number(field(j, "target_loss"));
    s.workers = static_cast<int>(integer(field(j, "workers")));
    s.batch = static_cast<int>(integer(field(j, "batch")));
    s.accum = static_cast<int>(integer(field(j, "accum")));
    s.learningRate = number(field(j, "learning_rate"));
    s.slowWorker = static_cast<int>(integer(field(j, "slow_worker")));
    s.slowFactor = number(field(j, "slow_factor"));
    s.jitter = number(field(j, "jitter"));
    s.seed = field(j, "seed").get<std::uint64_t>();
    s.lockFree = field(j, "lock_free").get<bool>();
    s.pushLearningRate = text("push_learning_rate");
    s.engine = text("engine");
    s.cluster = text("cluster");
    s.platformFile = text("platform_file");
    s.topology = text("topology");
    s.hostFile = text("host_file");
    s.batchPerWorker = field(j, "batch_per_worker").get<bool>();
    const Json& modes = field(j, "modes");
    if (!modes.is_array() || modes.size() != modeCount || !modes[0].is_string() || !modes[1].is_string())
        throw SgdError("session settings: \"modes\" is not a list of two mode names");
    for (std::size_t c = 0; c < modeCount; ++c)
        s.modes.names[c] = QString::fromStdString(modes[c].get<std::string>());
    s.modes.sspBound = static_cast<int>(integer(field(j, "ssp_bound")));
    s.modes.backupWorkers = static_cast<int>(integer(field(j, "backup_workers")));
    s.modes.localSteps = static_cast<int>(integer(field(j, "local_steps")));
    s.modes.dcLambda = number(field(j, "dc_lambda"));
    const Json& options = field(j, "options");
    if (!options.is_array())
        throw SgdError("session settings: \"options\" is not an array");
    for (const Json& o : options) {
        if (!o.is_array() || o.size() != 2 || !o[0].is_string() || !o[1].is_string())
            throw SgdError("session settings: an entry of \"options\" is not a [name, value] pair of strings");
        s.options.append(
            {QString::fromStdString(o[0].get<std::string>()), QString::fromStdString(o[1].get<std::string>())});
    }
    return s;
}

SessionCommand sessionCommandFromJson(const Json& j)
{
    if (!j.is_object())
        throw SgdError("session command: expected an object, found " + typeName(j));
    SessionCommand c;
    if (const Json* s = member(j, "settings"))
        c.settings = sessionSettingsFromJson(*s);
    if (const Json* p = member(j, "pause"))
        c.pause = p->get<bool>();
    if (const Json* s = member(j, "stop"))
        c.stop = s->get<bool>();
    return c;
}

} // namespace sgdscope::ui
