#include "core/io/SummaryJson.h"

#include <cmath>

namespace sgdscope {

Json summaryJson(const ModeResult& r)
{
    Json j = Json::object();
    j.set("mode", modeName(r.mode));
    j.set("workers", r.settings.workers);
    j.set("batch", r.settings.batch);
    j.set("accum", r.settings.accum);
    j.set("chunk", r.settings.chunk);
    j.set("updates", r.updates);
    j.set("samples", r.samples);
    j.set("final_loss", std::isfinite(r.finalLoss) ? Json(r.finalLoss) : Json(nullptr));
    if (r.trainAccuracy >= 0)
        j.set("train_accuracy", r.trainAccuracy);
    if (r.testAccuracy >= 0) {
        j.set("test_accuracy", r.testAccuracy);
        j.set("test_loss", std::isfinite(r.testLoss) ? Json(r.testLoss) : Json(nullptr));
    }
    j.set("seconds", r.seconds);
    j.set("samples_per_second", r.samplesPerSecond());
    j.set("idle_fraction", r.idleFraction());
    Json workers = Json::array();
    for (std::size_t w = 0; w < r.workers.size(); ++w) {
        const WorkerTotals& t = r.workers[w];
        Json o = Json::object();
        o.set("worker", static_cast<int>(w));
        o.set("busy_seconds", t.busySeconds);
        o.set("idle_seconds", t.idleSeconds);
        o.set("apply_seconds", t.applySeconds);
        o.set(
            "idle_fraction", t.busySeconds + t.idleSeconds > 0 ? t.idleSeconds / (t.busySeconds + t.idleSeconds) : 0.0);
        o.set("updates", t.updates);
        o.set("samples", t.samples);
        if (r.mode == Mode::Async && w < r.staleness.perWorker().size()) {
            o.set("mean_staleness", r.staleness.perWorker()[w].mean());
            o.set("max_staleness", r.staleness.perWorker()[w].max);
        }
        workers.push(o);
    }
    j.set("workers_detail", workers);
    Json staleness = Json::object();
    staleness.set("count", r.staleness.count());
    staleness.set("mean", r.staleness.mean());
    staleness.set("max", r.staleness.max());
    staleness.set("p50", r.staleness.percentile(0.5));
    staleness.set("p99", r.staleness.percentile(0.99));
    Json histogram = Json::array();
    for (const auto count : r.staleness.counts())
        histogram.push(Json(count));
    staleness.set("histogram", histogram); // histogram[s] = pushes with staleness s
    j.set("staleness", staleness);
    j.set("params_digest", r.paramsDigest);
    j.set("diverged", r.diverged);
    j.set("diverged_at_update", r.diverged ? Json(r.divergedAt) : Json(nullptr));
    j.set("interrupted", r.interrupted);
    return j;
}

} // namespace sgdscope
