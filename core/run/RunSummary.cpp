#include "core/run/RunSummary.h"

#include "core/engines/sim/SimWorld.h"
#include "core/nn/kernels/Isa.h"

#include <cstdint>
#include <limits>

namespace sgdscope {

namespace {

/// Whether the mode's job has a parameter server beside its workers: the pushing modes, backup, and the team-wide
/// modes on --topology ps.
bool hasServer(const ModeResult& r)
{
    return !isSyncLike(r.mode) || r.mode == Mode::Backup || r.settings.topology == Topology::ParameterServer;
}

/// A simulated run's cluster: its name, hosts, calibrations and cost model (summary.json's members after
/// "clock").
Json clusterFields(const ModeResult& r)
{
    Json j = Json::object();
    j["cluster"] = r.engineChoice.sim.platformFile.empty() ? nameOf(clusterNames, r.engineChoice.sim.cluster)
                                                           : "platform " + r.engineChoice.sim.platformFile;
    if (r.engineChoice.sim.platformFile.empty())
        j["host_flops"] = r.engineChoice.sim.hostFlops;
    j["placement"] = nameOf(placementNames, r.engineChoice.sim.placement);
    j["network_model"] = networkModelOf(r.engineChoice.sim); // none, star (ours, as SimGrid's CM02) or simgrid
    if (r.engineChoice.sim.measuresThisMachine()) {
        const LocalCalibration& c = r.engineChoice.sim.calibration;
        j["local_calibration"] = Json {{"host_flops", c.hostFlops},
            {"median_seconds_per_sample", c.medianSecondsPerSample}, {"spread", c.spread}, {"compute_spans", c.spans},
            {"threads", c.threads}, {"memory_bytes_per_second", c.memoryBytesPerSecond},
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
            {"bandwidth_bytes_per_second", link.bandwidthBytesPerSecond}, {"bandwidth_spread", link.bandwidthSpread},
            {"bandwidth_measured_at_bytes", link.messageBytes}, {"one_way_seconds_at_those_bytes", link.messageSeconds},
            {"round_trips", link.roundTrips},
            {"measure", link.fromShortest ? "shortest round trips" : "median round trips"},
            {"processes", link.processes}, {"cores", link.cores},
            {"core_share", link.coreShare(r.settings.workers + (hasServer(r) ? 1 : 0))},
            {"waited_for_a_core_share", link.waitedForACoreShare >= 0 ? Json(link.waitedForACoreShare) : Json(nullptr)},
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
    return j;
}

/// The mode's own section: what its rule did and cost.
Json modeFields(const ModeResult& r)
{
    Json j = Json::object();
    const RunMetrics::ModeCosts& costs = r.metrics.costs();
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
    return j;
}

/// The learning rate: the rule that set it, as given, and as the updates or pushes applied it.
Json learningRateFields(const ModeResult& r)
{
    const RunMetrics::ModeCosts& costs = r.metrics.costs();
    const bool pushes = !isSyncLike(r.mode);
    Json j = Json::object();
    j["rule"] = pushes ? nameOf(asyncLearningRateNames, r.settings.asyncLearningRate) : std::string("batch");
    j["given"] = r.settings.learningRate;
    // The schedule the rates followed: a run without a sample budget (the window's) keeps lr constant.
    const bool scheduled = r.settings.sampleBudget != std::numeric_limits<std::int64_t>::max();
    j["schedule"] = nameOf(lrScheduleNames, scheduled ? r.settings.lrSchedule : LrSchedule::Constant);
    j["per_samples"] = r.settings.batch;
    j["mean"] = costs.learningRates > 0 ? Json(costs.learningRateSum / static_cast<double>(costs.learningRates))
                                        : Json(nullptr);
    j["min"] = costs.learningRates > 0 ? Json(costs.learningRateMin) : Json(nullptr);
    j["max"] = costs.learningRates > 0 ? Json(costs.learningRateMax) : Json(nullptr);
    j["note"] = pushes
        ? "given is the rate for a batch of per_samples samples; a push of b samples applies given x b / per_samples "
          "(rule scaled: the step per sample of sync), given (constant), or given x b / per_samples / max(1, "
          "staleness) (staleness); mean, min and max over the pushes applied"
        : (r.mode == Mode::LocalSgd
                ? "each worker's local step applies given to the mean gradient of its own samples, and the average of "
                  "the workers' models makes the round: with one local step and no momentum, sync's step (with a "
                  "schedule, each round records its first step's rate)"
                : "each update applies given to the mean gradient of its batch (backup: of the gradients kept)");
    return j;
}

} // namespace

ModeSummaryRecord summaryRecord(const ModeResult& r)
{
    ModeSummaryRecord s;
    s.mode = r.mode;
    s.engine = r.engine;
    if (isSyncLike(r.mode) && r.engineChoice.kind != EngineKind::Threads)
        s.topology = r.mode == Mode::Backup ? std::string("ps") : nameOf(topologyNames, r.settings.topology);
    s.workers = r.settings.workers;
    s.batch = r.settings.batch;
    s.accum = r.settings.accum;
    s.chunk = r.settings.chunk;
    s.updates = r.updates;
    s.samples = r.samples;
    s.final = r.final;
    s.finalIsLastEvaluation = r.finalIsLastEvaluation;
    s.virtualClock = r.engineChoice.kind == EngineKind::Sim;
    if (s.virtualClock)
        s.clusterFields = clusterFields(r);
    s.seconds = r.seconds;
    s.wallSeconds = r.wallSeconds;
    s.onCoreSeconds = r.onCoreSeconds;
    s.waitedForACoreSeconds = r.waitedForACoreSeconds;
    s.metrics = &r.metrics;
    s.modeFields = modeFields(r);
    s.learningRate = learningRateFields(r);
    s.targetAccuracy = r.settings.targetAccuracy;
    s.targetLoss = r.settings.targetLoss;
    s.targetReached = r.target.reached;
    s.secondsToTarget = r.target.seconds;
    s.samplesToTarget = r.target.samples;
    s.updatesToTarget = r.target.updates;
    s.paramsDigest = r.paramsDigest;
    s.kernelOrder = kernelOrderVersion;
    s.kernelPath = r.kernelPath;
    s.diverged = r.diverged;
    s.divergedAt = r.divergedAt;
    s.interrupted = r.interrupted;
    s.failure = r.failure;
    return s;
}

} // namespace sgdscope
