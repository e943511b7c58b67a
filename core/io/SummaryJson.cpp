#include "core/io/SummaryJson.h"

#include <cmath>

namespace sgdscope {

Json summaryJson(const ModeResult& r)
{
    Json j = Json::object();
    j["mode"] = modeName(r.mode);
    j["workers"] = r.settings.workers;
    j["batch"] = r.settings.batch;
    j["accum"] = r.settings.accum;
    j["chunk"] = r.settings.chunk;
    j["updates"] = r.updates;
    j["samples"] = r.samples;
    j["final_loss"] = std::isfinite(r.finalLoss) ? Json(r.finalLoss) : Json(nullptr);
    if (r.trainAccuracy >= 0)
        j["train_accuracy"] = r.trainAccuracy;
    if (r.testAccuracy >= 0) {
        j["test_accuracy"] = r.testAccuracy;
        j["test_loss"] = std::isfinite(r.testLoss) ? Json(r.testLoss) : Json(nullptr);
    }
    j["seconds"] = r.seconds;
    j["samples_per_second"] = r.samplesPerSecond();
    j["idle_fraction"] = r.idleFraction();
    Json workers = Json::array();
    for (std::size_t w = 0; w < r.workers.size(); ++w) {
        const WorkerTotals& t = r.workers[w];
        Json o = Json::object();
        o["worker"] = static_cast<int>(w);
        o["busy_seconds"] = t.busySeconds;
        o["idle_seconds"] = t.idleSeconds;
        o["apply_seconds"] = t.applySeconds;
        o["idle_fraction"] = t.busySeconds + t.idleSeconds > 0 ? t.idleSeconds / (t.busySeconds + t.idleSeconds) : 0.0;
        o["updates"] = t.updates;
        o["samples"] = t.samples;
        if (r.mode == Mode::Async && w < r.staleness.perWorker().size()) {
            o["mean_staleness"] = r.staleness.perWorker()[w].mean();
            o["max_staleness"] = r.staleness.perWorker()[w].max;
        }
        workers.push_back(o);
    }
    j["workers_detail"] = workers;
    Json staleness = Json::object();
    staleness["count"] = r.staleness.count();
    staleness["mean"] = r.staleness.mean();
    staleness["max"] = r.staleness.max();
    staleness["p50"] = r.staleness.percentile(0.5);
    staleness["p99"] = r.staleness.percentile(0.99);
    Json histogram = Json::array();
    for (const auto count : r.staleness.counts())
        histogram.push_back(Json(count));
    staleness["histogram"] = histogram; // histogram[s] = pushes with staleness s
    j["staleness"] = staleness;
    j["params_digest"] = r.paramsDigest;
    j["diverged"] = r.diverged;
    j["diverged_at_update"] = r.diverged ? Json(r.divergedAt) : Json(nullptr);
    j["interrupted"] = r.interrupted;
    return j;
}

} // namespace sgdscope
