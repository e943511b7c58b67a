#include "core/io/SummaryJson.h"

#include <cmath>

namespace sgdscope {

namespace {

Json finiteOrNull(double v)
{
    return std::isfinite(v) ? Json(v) : Json(nullptr);
}

/// Seconds by kind of wait ("barrier", "lock", ...), all kinds listed.
Json waitsJson(const WorkerFigures& w)
{
    Json waits = Json::object();
    for (const auto& [name, kind] : spanKindNames) {
        if (isWait(kind))
            waits[std::string(name)] = w.of(kind);
    }
    return waits;
}

void timeFields(Json& j, const WorkerFigures& w)
{
    j["wall_seconds"] = w.wallSeconds;
    j["busy_seconds"] = w.busy();
    j["compute_seconds"] = w.of(SpanKind::Compute);
    j["delay_seconds"] = w.of(SpanKind::Delay);
    j["idle_seconds"] = w.idle();
    j["wait_seconds"] = waitsJson(w);
    j["apply_seconds"] = w.apply();
    j["communication_seconds"] = w.communication();
    j["unaccounted_seconds"] = w.unaccounted();
    j["idle_fraction"] = w.idleFraction();
}

Json updateWaitJson(const WaitStats& waits)
{
    Json j = Json::object();
    j["count"] = waits.count();
    j["mean_seconds"] = waits.mean();
    j["max_seconds"] = waits.max();
    // From the histogram: the upper edge of the bin that holds the percentile (at most 26% above the value).
    j["p50_upper_bound_seconds"] = waits.percentile(0.5);
    j["p99_upper_bound_seconds"] = waits.percentile(0.99);
    // Bins up to the last one that holds an update: [edges[i], edges[i+1]) holds counts[i].
    int last = 0;
    for (int b = 0; b < WaitStats::binCount; ++b) {
        if (waits.counts()[static_cast<std::size_t>(b)] > 0)
            last = b;
    }
    Json edges = Json::array();
    Json counts = Json::array();
    for (int b = 0; b <= last; ++b) {
        edges.push_back(WaitStats::lowerEdge(b));
        counts.push_back(waits.counts()[static_cast<std::size_t>(b)]);
    }
    edges.push_back(finiteOrNull(WaitStats::upperEdge(last)));
    j["histogram"] = Json {{"edges_seconds", edges}, {"counts", counts}};
    return j;
}

} // namespace

Json summaryJson(const ModeSummaryRecord& r)
{
    static const RunMetrics none;
    const RunMetrics& m = r.metrics ? *r.metrics : none;
    WorkerFigures all;
    for (const auto& w : m.workers())
        all.add(w);

    Json j = Json::object();
    j["mode"] = modeName(r.mode);
    j["engine"] = r.engine;
    if (!r.topology.empty())
        j["topology"] = r.topology;
    j["workers"] = r.workers;
    j["batch"] = r.batch;
    j["accum"] = r.accum;
    j["chunk"] = r.chunk;
    j["updates"] = r.updates;
    j["samples"] = r.samples;
    j["final_loss"] = finiteOrNull(r.final.trainLoss);
    if (r.final.trainAccuracy >= 0)
        j["train_accuracy"] = r.final.trainAccuracy;
    if (r.final.hasTest)
        j["test_loss"] = finiteOrNull(r.final.testLoss);
    if (r.final.testAccuracy >= 0)
        j["test_accuracy"] = r.final.testAccuracy;
    if (r.finalIsLastEvaluation) // an interrupted or failed run: its figures are its last evaluation's
        j["final_evaluation"] = r.final.index < 0
            ? Json {{"updates", nullptr}, {"samples", nullptr},
                {"note", "the run was cut short before its first evaluation: no loss to report"}}
            : Json {{"updates", r.final.index}, {"samples", r.final.samples},
                {"note", "the last evaluation before the run was cut short; the final parameters were not evaluated"}};
    // Simulated runs count virtual seconds (the simulated cluster's clock), labelled as such.
    j["clock"] = r.virtualClock ? "virtual" : "real";
    for (const auto& [key, value] : r.clusterFields.items())
        j[key] = value;
    j["seconds"] = r.seconds;
    j["samples_per_second"] = r.samplesPerSecond();
    j["wall_clock_seconds"] = r.wallSeconds; // the real time the training took, the final evaluation not counted
    if (r.onCoreSeconds >= 0 && r.waitedForACoreSeconds >= 0) {
        // What the operating system took from this process while it trained: its threads' time runnable but waiting
        // for a core (their run-queue delay). Well above 0, the machine was busy (or the workers outnumber the
        // cores), and that time is in the waits and the unaccounted time. A simulated run's virtual seconds do not
        // depend on it: there it says how busy the machine was while it simulated (its wall_clock_seconds).
        const double wanted = r.onCoreSeconds + r.waitedForACoreSeconds;
        j["process_cpu"]
            = Json {{"on_core_seconds", r.onCoreSeconds}, {"waited_for_a_core_seconds", r.waitedForACoreSeconds},
                {"waited_for_a_core_share", wanted > 0 ? r.waitedForACoreSeconds / wanted : 0.0}};
    }
    // Worker-seconds, summed over the workers: every wall second of every worker is busy, idle (by kind of
    // wait), apply, communication or unaccounted.
    Json sums = Json::object();
    timeFields(sums, all);
    j["all_workers"] = std::move(sums);
    j["idle_fraction"] = all.idleFraction(); // of all workers' wall time
    Json workers = Json::array();
    for (std::size_t w = 0; w < m.workers().size(); ++w) {
        Json o = Json::object();
        o["worker"] = static_cast<int>(w);
        timeFields(o, m.workers()[w]);
        o["updates"] = m.workers()[w].updates;
        o["samples"] = m.workers()[w].samples;
        // Beside its own waits (idle_seconds): the others' waits attributed to it (it was the last to arrive, or
        // held what they waited for), summed over the workers that waited.
        o["made_others_wait_seconds"] = m.workers()[w].madeOthersWait;
        if (!isSyncLike(r.mode) && w < m.staleness().perWorker().size()) {
            o["mean_staleness"] = m.staleness().perWorker()[w].mean();
            o["max_staleness"] = m.staleness().perWorker()[w].max;
        }
        workers.push_back(o);
    }
    j["workers_detail"] = workers;
    Json staleness = Json::object();
    staleness["count"] = m.staleness().count();
    staleness["mean"] = m.staleness().mean();
    staleness["max"] = m.staleness().max();
    staleness["p50"] = m.staleness().percentile(0.5);
    staleness["p99"] = m.staleness().percentile(0.99);
    staleness["histogram"] = m.staleness().counts(); // histogram[s] = updates with staleness s
    j["staleness"] = staleness;
    if (hasUpdateWaits(r.mode))
        j["update_wait"] = updateWaitJson(m.updateWaits());
    for (const auto& [key, value] : r.modeFields.items())
        j[key] = value;
    if (!r.learningRate.empty())
        j["learning_rate"] = r.learningRate;
    if (r.targetAccuracy >= 0 || r.targetLoss >= 0) {
        j["target"]
            = r.targetAccuracy >= 0 ? Json {{"test_accuracy", r.targetAccuracy}} : Json {{"train_loss", r.targetLoss}};
        j["target_reached"] = r.targetReached;
        j["seconds_to_target"] = r.targetReached ? Json(r.secondsToTarget) : Json(nullptr);
        j["samples_to_target"] = r.targetReached ? Json(r.samplesToTarget) : Json(nullptr);
        j["updates_to_target"] = r.targetReached ? Json(r.updatesToTarget) : Json(nullptr);
    }
    // (null: the parameters never came back, from a simulated mode's process that ended before its result)
    j["params_digest"] = r.paramsDigest.empty() ? Json(nullptr) : Json(r.paramsDigest);
    // What the digest depends on besides the source, the data and the settings: the kernels' order of
    // operations; the path (instruction set) that computed it does not change the bits.
    j["kernels"] = Json {{"order", r.kernelOrder}, {"path", r.kernelPath.empty() ? Json(nullptr) : Json(r.kernelPath)}};
    j["diverged"] = r.diverged;
    j["diverged_at_update"] = r.diverged ? Json(r.divergedAt) : Json(nullptr);
    j["interrupted"] = r.interrupted;
    j["failed"] = !r.failure.empty();
    if (!r.failure.empty())
        j["failure"] = r.failure;
    return j;
}

} // namespace sgdscope
