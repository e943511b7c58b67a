#include "core/io/SummaryJson.h"

#include "core/engines/sim/SimWorld.h"
#include "core/nn/kernels/Isa.h"

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

Json summaryJson(const ModeResult& r)
{
    const RunMetrics& m = r.metrics;
    WorkerFigures all;
    for (const auto& w : m.workers())
        all.add(w);

    Json j = Json::object();
    j["mode"] = modeName(r.mode);
    j["engine"] = r.engine;
    j["workers"] = r.settings.workers;
    j["batch"] = r.settings.batch;
    j["accum"] = r.settings.accum;
    j["chunk"] = r.settings.chunk;
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
    const bool simulated = r.engineChoice.kind == EngineKind::Sim;
    j["clock"] = simulated ? "virtual" : "real";
    if (simulated) {
        j["cluster"] = r.engineChoice.sim.platformFile.empty() ? nameOf(clusterNames, r.engineChoice.sim.cluster)
                                                               : "platform " + r.engineChoice.sim.platformFile;
        if (r.engineChoice.sim.platformFile.empty())
            j["host_flops"] = r.engineChoice.sim.hostFlops;
        j["placement"] = nameOf(placementNames, r.engineChoice.sim.placement);
        j["network_model"] = networkModelOf(r.engineChoice.sim); // none, star (ours, as SimGrid's CM02) or simgrid
        if (r.engineChoice.sim.measuresThisMachine()) {
            const LocalCalibration& c = r.engineChoice.sim.calibration;
            j["local_calibration"] = Json {{"host_flops", c.hostFlops},
                {"median_seconds_per_sample", c.medianSecondsPerSample}, {"spread", c.spread},
                {"compute_spans", c.spans}, {"threads", c.threads}, {"memory_bytes_per_second", c.memoryBytesPerSecond},
                {"waited_for_a_core_share", c.waitedForACoreShare >= 0 ? Json(c.waitedForACoreShare) : Json(nullptr)},
                {"busy", c.busy()},
                {"note",
                    "measured at the start on this machine's threads engine: host_flops = the model's flops per "
                    "sample / the median seconds per sample of its compute spans; spread = (75th - 25th "
                    "percentile) / median; waited_for_a_core_share = of the time its threads wanted a core, the share "
                    "they waited for one (the kernel's run-queue delay; null where it does not say); busy (a share "
                    "above 0.2 or a spread above 0.5): the figures describe a loaded machine"}};
        }
        if (r.engineChoice.sim.measuresMpi()) {
            const MpiLinkCalibration& link = r.engineChoice.sim.mpiLink;
            j["mpi_link_calibration"] = Json {{"latency_seconds", link.latencySeconds},
                {"latency_spread", link.latencySpread}, {"latency_measured_at_bytes", link.smallBytes},
                {"bandwidth_bytes_per_second", link.bandwidthBytesPerSecond},
                {"bandwidth_spread", link.bandwidthSpread}, {"bandwidth_measured_at_bytes", link.messageBytes},
                {"one_way_seconds_at_those_bytes", link.messageSeconds}, {"round_trips", link.roundTrips},
                {"measure", link.fromShortest ? "shortest round trips" : "median round trips"},
                {"processes", link.processes}, {"cores", link.cores},
                {"core_share",
                    link.coreShare(r.settings.workers + (r.mode == Mode::Sync || r.mode == Mode::LocalSgd ? 0 : 1))},
                {"waited_for_a_core_share",
                    link.waitedForACoreShare >= 0 ? Json(link.waitedForACoreShare) : Json(nullptr)},
                {"busy", link.busy()},
                {"note",
                    "measured at the start by sgdscope-mpi-probe under mpirun (processes ranks, ranks 2 and up "
                    "polling): latency = half the median round trip of a small message; bandwidth = bytes / (half "
                    "the median round trip at bandwidth_measured_at_bytes - latency); spreads = (75th - 25th "
                    "percentile) / median of the round trips. A message of b bytes takes latency + b / bandwidth "
                    "(a star: each link half the latency), sharing a link with the others on it. core_share = "
                    "min(1, cores / this mode's processes (its workers, and a parameter server's: one more)): every "
                    "work is computed at host_flops times it; processes: of the probe's job (the largest mode's); "
                    "waited_for_a_core_share = of the time ranks 0 and 1 wanted a core while timing, the share they "
                    "waited for one (null where the kernel does not say); busy (that share above 0.2 in a job of no "
                    "more "
                    "processes than cores, a bandwidth spread above 0.5, or measure = shortest round trips, when the "
                    "medians gave no bandwidth): the figures describe a loaded machine"}};
        }
        if (r.simCost) {
            const bool momentum = r.settings.momentum != 0.0;
            Json cost {{"flops_per_sample", r.simCost->flopsPerSample}, {"tree_addition_flops", r.simCost->addFlops},
                {"apply_flops", r.simCost->applyFlops(momentum)}, {"message_bytes", r.simCost->messageBytes}};
            if (r.engineChoice.sim.measuresThisMachine()) {
                cost["apply_bytes"] = r.simCost->applyBytes(momentum);
                cost["tree_addition_bytes"] = r.simCost->addBytes();
                cost["copy_bytes"] = r.simCost->copyBytes();
                cost["note"] = std::string(r.engineChoice.sim.measuresMpi() ? "local-mpi" : "local")
                    + ": a worker's samples at the measured host_flops, its chunk additions included in that "
                      "measured step; applies, the reduction tree's additions and async's parameter copies priced "
                      "as their bytes at local_calibration.memory_bytes_per_second; "
                    + (r.engineChoice.sim.measuresMpi()
                            ? "messages of message_bytes timed by mpi_link_calibration's latency and bandwidth"
                            : "no messages (workers share memory)");
            } else {
                cost["note"] = "what the simulated hosts compute (flops at the host's speed: per sample, per tree "
                               "addition, per update; a straggler's factor multiplies a worker's samples and "
                               "additions) and what the links carry (bytes per message)";
            }
            j["cost_model"] = std::move(cost);
        }
    }
    j["seconds"] = r.seconds;
    j["samples_per_second"] = r.samplesPerSecond();
    j["wall_clock_seconds"] = r.wallSeconds; // the real time the training took, the final evaluation not counted
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
    const RunMetrics::ModeCosts& costs = m.costs();
    if (r.mode == Mode::Backup) {
        const std::int64_t gradients = r.updates * r.settings.workers;
        const std::int64_t applied = r.samples - costs.droppedSamples;
        j["backup"] = Json {{"backup_workers", r.settings.backupWorkers}, {"applied_samples", applied},
            {"applied_samples_per_second", r.seconds > 0 ? static_cast<double>(applied) / r.seconds : 0.0},
            {"dropped_gradients", costs.droppedGradients},
            {"dropped_gradient_share", gradients > 0 ? static_cast<double>(costs.droppedGradients) / gradients : 0.0},
            {"wasted_samples", costs.droppedSamples},
            {"wasted_sample_share", r.samples > 0 ? static_cast<double>(costs.droppedSamples) / r.samples : 0.0},
            {"note",
                "each update applied the gradients of the first workers - backup_workers workers to finish and dropped "
                "the rest (dropped_gradients is backup_workers per update by definition; what it cost is "
                "wasted_samples: computed, at least in part, or skipped, and not applied); the run's samples and "
                "samples_per_second count every sample the updates drew, applied_samples those that were applied. "
                "On threads and MPI processes which gradients come last depends on the machine's timing: without a "
                "clear straggler the run differs from run to run"}};
    }
    if (r.mode == Mode::LocalSgd)
        j["local_sgd"] = Json {{"local_steps", r.settings.localSteps}, {"averagings", costs.averagings},
            {"mean_model_spread", costs.averagings > 0 ? costs.modelSpreadSum / costs.averagings : 0.0},
            {"max_model_spread", costs.modelSpreadMax},
            {"note",
                "an update is a round: every worker's local steps (samples: steps x batch), then the averaging; "
                "model spread: the workers' models' mean Euclidean distance from their average, before each "
                "averaging"}};
    if (r.mode == Mode::DcAsgd)
        j["delay_compensation"]
            = Json {{"lambda", r.settings.dcLambda}, {"adaptive", r.settings.dcAdaptive}, {"pushes", costs.compensated},
                {"mean_relative_size", costs.compensated > 0 ? costs.compensationSum / costs.compensated : 0.0},
                {"max_relative_size", costs.compensationMax},
                {"note",
                    "relative size of a push's compensation: |lambda g*g*(w_now - w_read)| / |g| (Euclidean norms over "
                    "the parameters)"}};
    if (r.mode == Mode::Ssp)
        j["ssp"] = Json {{"bound", r.settings.sspBound},
            {"largest_clock_lead", costs.largestClockLead >= 0 ? Json(costs.largestClockLead) : Json(nullptr)},
            {"mean_clock_lead",
                costs.clockLeads > 0 ? static_cast<double>(costs.clockLeadSum) / costs.clockLeads : 0.0},
            {"note",
                "a worker's clock is its pushes applied; a push's clock lead is its worker's clock minus the slowest "
                "worker's when it started, at most the bound"}};
    if (!isSyncLike(r.mode) && costs.learningRates > 0)
        j["mean_learning_rate"] = costs.learningRateSum / costs.learningRates; // as applied (--async-lr staleness)
    if (r.settings.targetAccuracy >= 0 || r.settings.targetLoss >= 0) {
        j["target"] = r.settings.targetAccuracy >= 0 ? Json {{"test_accuracy", r.settings.targetAccuracy}}
                                                     : Json {{"train_loss", r.settings.targetLoss}};
        j["target_reached"] = r.target.reached;
        j["seconds_to_target"] = r.target.reached ? Json(r.target.seconds) : Json(nullptr);
        j["samples_to_target"] = r.target.reached ? Json(r.target.samples) : Json(nullptr);
        j["updates_to_target"] = r.target.reached ? Json(r.target.updates) : Json(nullptr);
    }
    j["params_digest"] = r.paramsDigest;
    // What the digest depends on besides the source, the data and the settings: the kernels' order of
    // operations; the path (instruction set) that computed it does not change the bits.
    j["kernels"] = Json {{"order", kernelOrderVersion}, {"path", r.kernelPath}};
    j["diverged"] = r.diverged;
    j["diverged_at_update"] = r.diverged ? Json(r.divergedAt) : Json(nullptr);
    j["interrupted"] = r.interrupted;
    j["failed"] = !r.failure.empty();
    if (!r.failure.empty())
        j["failure"] = r.failure;
    return j;
}

} // namespace sgdscope
