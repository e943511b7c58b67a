#include "core/run/Options.h"

#include "core/common/Error.h"
#include "core/nn/ModelText.h"
#include "core/run/Presets.h"
#include "core/train/StragglerModel.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sgdscope {

namespace {

template<typename E, std::size_t N>
std::vector<std::string> namesOf(const NameTable<E, N>& table)
{
    std::vector<std::string> names;
    for (const auto& entry : table)
        names.emplace_back(entry.name);
    return names;
}

// ---- builders: one per kind of field, so that each option below is one declaration ----------------------

OptionSpec base(std::string name, std::string valueName, OptionType type, std::string help)
{
    OptionSpec o;
    o.name = std::move(name);
    o.valueName = std::move(valueName);
    o.type = type;
    o.help = std::move(help);
    return o;
}

template<typename T>
OptionSpec integer(
    std::string name, std::string valueName, double min, double max, T RunConfig::*field, std::string help)
{
    OptionSpec o = base(std::move(name), std::move(valueName), OptionType::Integer, std::move(help));
    o.min = min;
    o.max = max;
    o.store = [field](RunConfig& c, const OptionValue& v, const std::string&) { c.*field = static_cast<T>(v.number); };
    o.load = [field](const RunConfig& c) { return Json(c.*field); };
    return o;
}

OptionSpec number(std::string name, std::string valueName, double min, bool minExclusive, double max, bool maxExclusive,
    double RunConfig::*field, std::string help)
{
    OptionSpec o = base(std::move(name), std::move(valueName), OptionType::Number, std::move(help));
    o.min = min;
    o.max = max;
    o.minExclusive = minExclusive;
    o.maxExclusive = maxExclusive;
    o.store = [field](RunConfig& c, const OptionValue& v, const std::string&) { c.*field = v.number; };
    o.load = [field](const RunConfig& c) { return Json(c.*field); };
    return o;
}

template<typename E, std::size_t N>
OptionSpec choice(
    std::string name, std::string valueName, const NameTable<E, N>& table, E RunConfig::*field, std::string help)
{
    OptionSpec o = base(std::move(name), std::move(valueName), OptionType::Choice, std::move(help));
    o.choices = namesOf(table);
    o.store = [field, &table](
                  RunConfig& c, const OptionValue& v, const std::string&) { c.*field = *valueNamed(table, v.text); };
    o.load = [field, &table](const RunConfig& c) { return Json(nameOf(table, c.*field)); };
    return o;
}

OptionSpec path(std::string name, std::string valueName, std::string RunConfig::*field, std::string help)
{
    OptionSpec o = base(std::move(name), std::move(valueName), OptionType::Text, std::move(help));
    o.pathValue = true;
    o.store = [field](RunConfig& c, const OptionValue& v, const std::string&) { c.*field = v.text; };
    o.load = [field](const RunConfig& c) { return c.*field == "" ? Json() : Json(c.*field); };
    return o;
}

std::string onlyForCsv(const RunConfig& c)
{
    return c.dataset == DatasetKind::Csv
        ? std::string()
        : "applies to CSV data only (--dataset csv), but the data set is " + toString(c.dataset);
}

std::string onlyForAsync(const RunConfig& c)
{
    return c.runsAsync()
        ? std::string()
        : "applies to modes that push one by one (async, ssp, dc-asgd), but --mode is " + c.modesText();
}

std::string onlyForMode(const RunConfig& c, Mode m)
{
    return c.runs(m) ? std::string()
                     : "applies to the " + std::string(modeName(m)) + " mode only, but --mode is " + c.modesText();
}

std::vector<OptionSpec> makeTable()
{
    std::vector<OptionSpec> t;

    OptionSpec preset = base("preset", "NAME", OptionType::Choice,
        "start from a preset (default parabola); the options below override its settings");
    for (const auto& p : builtinPresetTexts())
        preset.choices.emplace_back(p.name);
    preset.store = [](RunConfig& c, const OptionValue& v, const std::string&) { c.preset = v.text; };
    preset.load = [](const RunConfig& c) { return c.preset.empty() ? Json() : Json(c.preset); };
    t.push_back(preset);

    OptionSpec mode = base("mode", "LIST", OptionType::List,
        "modes to run, one after another on the same data, seed and samples: a list of sync | async | ssp | "
        "backup | local-sgd | dc-asgd, or both (= sync,async; the default)");
    mode.choices = namesOf(modeNames);
    mode.choices.emplace_back("both");
    mode.store = [](RunConfig& c, const OptionValue& v, const std::string& origin) {
        std::vector<Mode> modes;
        for (const auto& item : v.items) {
            std::vector<Mode> named;
            if (item == "both")
                named = {Mode::Sync, Mode::Async};
            else if (const auto m = valueNamed(modeNames, item))
                named = {*m};
            else
                throw SgdError(origin + ": unknown mode '" + item.substr(0, 40) + "'; use a list of "
                    + joinedItems(namesOf(modeNames)) + ", or both (sync,async)");
            for (const Mode m : named) {
                if (std::find(modes.begin(), modes.end(), m) != modes.end())
                    throw SgdError(origin + ": mode " + modeName(m) + " is listed twice; give each mode once");
                modes.push_back(m);
            }
        }
        c.modes = modes;
    };
    mode.load = [](const RunConfig& c) {
        return c.modes == std::vector<Mode> {Mode::Sync, Mode::Async} ? Json("both") : Json(c.modesText());
    };
    t.push_back(mode);
    t.push_back(choice("engine", "E", engineNames, &RunConfig::engine,
        "threads (OpenMP workers here; default) | sim (a simulated cluster in virtual time) | mpi (processes under "
        "mpirun)"));
    OptionSpec cluster = choice("cluster", "C", clusterNames, &RunConfig::cluster,
        "sim only: ideal | local | local-mpi | datacenter (default) | wan; see README for their figures");
    cluster.whyInapplicable = [](const RunConfig& c) {
        if (c.engine != EngineKind::Sim)
            return std::string("applies to the simulated cluster only (--engine sim)");
        return c.platform.empty() ? std::string()
                                  : std::string("cannot be combined with --platform; give one of the two");
    };
    t.push_back(cluster);
    OptionSpec platform = path("platform", "FILE", &RunConfig::platform,
        "sim only: a SimGrid platform file (XML) instead of a built-in cluster; workers use its hosts in the order "
        "of their names (see --placement)");
    platform.whyInapplicable = [](const RunConfig& c) {
        return c.engine == EngineKind::Sim ? std::string()
                                           : std::string("applies to the simulated cluster only (--engine sim)");
    };
    t.push_back(platform);
    OptionSpec placement = choice("placement", "HOW", placementNames, &RunConfig::placement,
        "sim only: spread (default: one worker per host, hosts sorted by name as SimGrid lists them, async's server "
        "on the next) | pack (workers fill each host's cores in that order, a core each, the server the next free "
        "core; the built-in clusters' hosts have one core, so it changes nothing there)");
    placement.whyInapplicable = [](const RunConfig& c) {
        return c.engine == EngineKind::Sim ? std::string()
                                           : std::string("applies to the simulated cluster only (--engine sim)");
    };
    t.push_back(placement);
    OptionSpec peerTimeout = number("peer-timeout", "S", 1, false, 86400, false, &RunConfig::peerTimeout,
        "mpi only: seconds of silence after which a process is given up as dead or hung and the job ends naming "
        "it (default 6). Silence, not slowness: every process sends a beat 10 times a second from a thread of its "
        "own, also while it loads data, evaluates or computes a long step; a process that ended on this host is "
        "seen at once");
    peerTimeout.whyInapplicable = [](const RunConfig& c) {
        return c.engine == EngineKind::Mpi ? std::string()
                                           : std::string("applies to MPI processes only (--engine mpi)");
    };
    t.push_back(peerTimeout);
    OptionSpec workers = integer(
        "workers", "P", 1, 4096, &RunConfig::workers, "workers: threads 1 to 256, simulated 1 to 4096 (default 1)");
    workers.windowMax = 32;
    t.push_back(workers);
    t.push_back(
        integer("batch", "B", 1, 1 << 30, &RunConfig::batch, "samples per update (default: the whole training set)"));
    OptionSpec perWorker = integer("batch-per-worker", "B", 1, 1 << 30, &RunConfig::batchPerWorker,
        "samples per worker per update: the batch is P x B (weak scaling, as DDP; not with --batch)");
    perWorker.load = [](const RunConfig& c) { return c.batchPerWorker > 0 ? Json(c.batchPerWorker) : Json(); };
    perWorker.whyInapplicable = [](const RunConfig& c) {
        return c.engine == EngineKind::Mpi ? std::string("an MPI job's sync and async have different worker counts "
                                                         "(N and N - 1); give the batch with --batch")
                                           : std::string();
    };
    t.push_back(perWorker);
    OptionSpec accum = integer("accum", "K", 1, 4096, &RunConfig::accum,
        "micro-batches per worker per update, 1 to 4096 (default 1); each is a run of whole chunks");
    accum.windowMax = 16;
    t.push_back(accum);
    t.push_back(integer("chunk", "C", 1, 1 << 30, &RunConfig::chunk,
        "samples per chunk of the fixed reduction (default: automatic, see README)"));
    OptionSpec steps = integer("steps", "S", 1, 1e12, &RunConfig::steps,
        "sync updates; async trains on the same S x B samples (not with --epochs)");
    steps.load = [](const RunConfig& c) { return c.steps > 0 ? Json(c.steps) : Json(); };
    t.push_back(steps);
    OptionSpec epochs = number(
        "epochs", "E", 0, true, 1e6, false, &RunConfig::epochs, "alternative to --steps: passes over the training set");
    epochs.load = [](const RunConfig& c) { return c.epochs > 0 ? Json(c.epochs) : Json(); };
    t.push_back(epochs);
    OptionSpec lr = number("lr", "X", 0, true, 1e6, false, &RunConfig::lr, "learning rate, above 0");
    lr.windowLow = 1e-4; // the window's slider: four decades, log scale
    lr.windowHigh = 1.0;
    t.push_back(lr);
    t.push_back(number("momentum", "M", 0, false, 1, true, &RunConfig::momentum,
        "SGD momentum, 0 <= M < 1 (default 0), as torch.optim.SGD"));
    OptionSpec seed = integer("seed", "N", 0, 9007199254740991.0, &RunConfig::seed,
        "seed for the initial weights, data order and jitter (default 0)");
    seed.windowHigh = 1e6; // the window's seed box
    t.push_back(seed);

    OptionSpec layers = base("layers", "LIST", OptionType::List,
        "layer widths, e.g. 1,5,1 (first = input features, last = outputs; default: no hidden layer)");
    layers.store = [](RunConfig& c, const OptionValue& v, const std::string& origin) {
        c.layers = parseLayers(joinedItems(v.items, ","), origin);
    };
    layers.load = [](const RunConfig& c) { return c.layers.empty() ? Json() : Json(widthsText(c.layers)); };
    t.push_back(layers);
    OptionSpec model = base("model", "LIST", OptionType::List,
        "the network's layers, e.g. conv6x5x5p2,maxpool2,conv16x5x5,maxpool2,dense120,dense84,dense10: denseN, "
        "convCxK[xK][sS][pP] (C channels, K x K kernel, stride S, padding P), maxpoolK, avgpoolK, flatten, relu | "
        "tanh | sigmoid | identity, and first inputCxHxW (the features as an image; default: the data's own); "
        "--activation follows every dense and conv layer but the last unless the list names one (not with --layers)");
    model.store = [](RunConfig& c, const OptionValue& v, const std::string& origin) {
        try {
            c.model = parseModelText(joinedItems(v.items, ","));
        } catch (const SgdError& e) {
            throw SgdError(origin + ": " + e.what());
        }
    };
    model.load = [](const RunConfig& c) { return c.model.empty() ? Json() : Json(modelText(c.model)); };
    t.push_back(model);
    OptionSpec activation = choice("activation", "A", activationNames, &RunConfig::activation,
        "activation after every layer with weights but the last (an MLP's hidden layers): tanh | relu | sigmoid | "
        "identity");
    activation.whyInapplicable = [](const RunConfig& c) {
        if (!c.model.empty()) {
            if (namesActivations(c.model))
                return std::string("the model line names its own activations (") + modelText(c.model) + ")";
            int weighted = 0;
            for (const LayerSpec& l : c.model)
                weighted += l.weighted() ? 1 : 0;
            return weighted > 1 ? std::string()
                                : std::string("the model has one layer with weights, so no activation is applied");
        }
        return c.layers.size() > 2
            ? std::string()
            : "the model has no hidden layer, so no activation is applied; give --layers with a hidden layer "
              "(e.g. --layers 1,5,1)";
    };
    t.push_back(activation);
    t.push_back(choice("loss", "L", lossNames, &RunConfig::loss, "mse | cross-entropy"));
    OptionSpec init = choice("weight-init", "I", weightInitNames, &RunConfig::weightInit,
        "normal (standard normal, as the seed example) | he | glorot (not with --init)");
    init.whyInapplicable = [](const RunConfig& c) {
        return c.init.empty() ? std::string()
                              : "the initial parameters come from --init '" + c.init + "'; give one of the two";
    };
    t.push_back(init);

    t.push_back(choice("dataset", "NAME", datasetNames, &RunConfig::dataset,
        "parabola | blobs | fashion-mnist | idx (MNIST-style folder) | csv (default: from --data if given)"));
    t.push_back(integer("samples", "N", 1, 4294967296.0, &RunConfig::samples,
        "parabola/blobs: number of points; loaded sets: use the first N training samples"));
    OptionSpec data = path("data", "PATH", &RunConfig::data,
        "CSV file, or a folder of MNIST-style IDX files (train-*, t10k-*); without --dataset: csv or idx");
    data.whyInapplicable = [](const RunConfig& c) {
        return isGenerated(c.dataset) ? "the data set " + toString(c.dataset)
                + " is generated and reads no file; use --dataset csv or idx (or leave --dataset out)"
                                      : std::string();
    };
    t.push_back(data);
    OptionSpec header = choice("csv-header", "H", csvHeaderNames, &RunConfig::csvHeader,
        "CSV only: auto | yes | no (default auto: a first line that is not all numbers is a header)");
    header.whyInapplicable = onlyForCsv;
    t.push_back(header);
    OptionSpec targets = base("targets", "LIST", OptionType::List,
        "CSV only: target columns, by 0-based index or header name (default: the last column)");
    targets.store = [](RunConfig& c, const OptionValue& v, const std::string& origin) {
        for (const auto& item : v.items) {
            if (item.empty())
                throw SgdError(origin + ": an empty column name is not allowed");
        }
        c.targets = v.items;
    };
    targets.load = [](const RunConfig& c) { return c.targets.empty() ? Json() : Json(c.targets); };
    targets.whyInapplicable = onlyForCsv;
    t.push_back(targets);

    OptionSpec slow = base("slow", "W:F", OptionType::List, "worker W is F times slower (repeatable)");
    slow.repeatable = true;
    slow.max = maxStragglerFactor;
    slow.windowLow = 1.0; // the window's straggler factor, in half steps
    slow.windowHigh = 10.0;
    slow.store = [](RunConfig& c, const OptionValue& v, const std::string& origin) {
        c.slow.clear();
        for (const auto& item : v.items)
            c.slow.push_back(parseStraggler(item, origin));
    };
    slow.load = [](const RunConfig& c) {
        Json list = Json::array();
        for (const auto& s : c.slow)
            list.push_back(std::to_string(s.worker) + ":" + formatNumber(s.factor));
        return list;
    };
    t.push_back(slow);
    OptionSpec fraction = base("slow-fraction", "F:X", OptionType::Text,
        "a fraction F of the workers (a seeded choice) is X times slower, e.g. 0.1:4");
    fraction.store = [](RunConfig& c, const OptionValue& v, const std::string& origin) {
        const std::size_t colon = v.text.find(':');
        OptionSpec share = base("slow-fraction", "", OptionType::Number, "");
        share.min = 0;
        share.minExclusive = true;
        share.max = 1;
        OptionSpec factor = base("slow-fraction", "", OptionType::Number, "");
        factor.min = 1;
        factor.max = maxStragglerFactor;
        if (colon == std::string::npos)
            throw SgdError(
                origin + ": '" + v.text + "' is not F:X (fraction of the workers, colon, slow-down), e.g. 0.1:4");
        c.slowFraction = share.parse(Json(v.text.substr(0, colon)), origin + " (fraction in '" + v.text + "')").number;
        c.slowFractionFactor
            = factor.parse(Json(v.text.substr(colon + 1)), origin + " (factor in '" + v.text + "')").number;
    };
    fraction.load = [](const RunConfig& c) {
        return c.slowFraction > 0 ? Json(formatNumber(c.slowFraction) + ":" + formatNumber(c.slowFractionFactor))
                                  : Json();
    };
    t.push_back(fraction);
    OptionSpec rotating = number("rotating-straggler", "X", 1, false, maxStragglerFactor, false,
        &RunConfig::rotatingStraggler, "at every step one worker (a seeded draw per step) is X times slower");
    rotating.load = [](const RunConfig& c) { return c.rotatingStraggler > 1 ? Json(c.rotatingStraggler) : Json(); };
    t.push_back(rotating);
    OptionSpec tail = number("heavy-tail", "A", 1, true, 100, false, &RunConfig::heavyTail,
        "compute times with a heavy tail: a seeded Pareto factor of shape A, at most 1000 (e.g. 1.5: rare, very slow "
        "steps)");
    tail.load = [](const RunConfig& c) { return c.heavyTail > 0 ? Json(c.heavyTail) : Json(); };
    t.push_back(tail);
    OptionSpec jitter = number("jitter", "SIGMA", 0, false, 4, false, &RunConfig::jitter,
        "random compute-time factor max(1, exp(SIGMA x z)), z standard normal, seeded (a worker is slowed, never "
        "sped up)");
    jitter.windowHigh = 1.0; // the window's slider, in steps of 0.05
    t.push_back(jitter);
    OptionSpec apply = choice("async-apply", "A", asyncApplyNames, &RunConfig::asyncApply,
        "async only: lock (a short critical section, as a parameter server; default) | lockfree (Hogwild!; "
        "its staleness counts the updates whose writes completed)");
    apply.whyInapplicable = [](const RunConfig& c) {
        if (!c.runsAsync())
            return onlyForAsync(c);
        if (c.runs(Mode::DcAsgd) && c.asyncApply == AsyncApply::LockFree)
            return std::string("dc-asgd compensates a push against the parameters it is applied to, under the lock; "
                               "lockfree is for --mode async only");
        if (c.engine == EngineKind::Sim && c.asyncApply == AsyncApply::LockFree)
            return std::string("the simulated cluster's async is a parameter server, which applies one push at a "
                               "time; lockfree applies to --engine threads");
        if (c.engine == EngineKind::Mpi && c.asyncApply == AsyncApply::LockFree)
            return std::string("async across MPI processes is a parameter server, which applies one push at a "
                               "time; lockfree applies to --engine threads");
        return std::string();
    };
    t.push_back(apply);
    OptionSpec asyncLr = choice("async-lr", "R", asyncLearningRateNames, &RunConfig::asyncLr,
        "modes that push one by one (async, ssp, dc-asgd), for a push of b samples: scaled (lr x b / B: sync's step "
        "per sample; default) | constant (lr: P times sync's step per sample) | staleness (lr x b / B / max(1, "
        "staleness), Zhang et al. 2016)");
    asyncLr.whyInapplicable = onlyForAsync;
    t.push_back(asyncLr);
    t.push_back(choice("lr-schedule", "S", lrScheduleNames, &RunConfig::lrSchedule,
        "the learning rate over a run of N samples (--steps x --batch): constant (default) | linear (lr x (1 - s / N) "
        "for an update after s samples: to 0 at the run's end). Every mode and engine; a push's rule (--async-lr) "
        "scales the scheduled rate. Headless runs only: the window trains until stopped"));
    OptionSpec topology = choice("topology", "T", topologyNames, &RunConfig::topology,
        "sim and mpi: the wires of the team-wide modes (sync, backup, local-sgd): ps (a parameter server, the wires "
        "every mode can use, pushing ones too; default) | tree (a binomial tree) | allreduce (reduce-scatter, then "
        "all-gather). Each sums the same fixed tree: the bits do not change, only the time. Across MPI processes: "
        "sync on tree (the default there, but ps beside backup: the same wires as backup's), allreduce (every process "
        "a worker) or ps (rank 0 as its server, N - 1 workers), local-sgd on tree or ps, backup on ps");
    topology.whyInapplicable = [](const RunConfig& c) {
        if (c.engine == EngineKind::Threads)
            return std::string("applies to the simulated cluster and MPI processes (--engine sim or mpi): the threads "
                               "engine's workers share memory");
        return c.runsSync()
            ? std::string()
            : "applies to the team-wide modes (sync, backup, local-sgd), but --mode is " + c.modesText();
    };
    t.push_back(topology);
    OptionSpec ssp = integer("ssp-bound", "S", 0, 1e9, &RunConfig::sspBound,
        "ssp mode: a worker starts its push n + 1 only when every worker has n - S pushes applied, so no worker is "
        "more than S pushes ahead of the slowest when it starts one (default 3; 0 waits like sync, a large S is "
        "async)");
    ssp.whyInapplicable = [](const RunConfig& c) { return onlyForMode(c, Mode::Ssp); };
    ssp.load = [](const RunConfig& c) { return c.runs(Mode::Ssp) ? Json(c.sspBound) : Json(); };
    ssp.windowMax = 1000; // the window's box (a large S is async already)
    t.push_back(ssp);
    OptionSpec backup = integer("backup-workers", "B", 0, 4095, &RunConfig::backupWorkers,
        "backup mode: each update applies the gradients of the first P - B workers to finish and drops the rest "
        "(default 1; 0 is sync)");
    backup.whyInapplicable = [](const RunConfig& c) { return onlyForMode(c, Mode::Backup); };
    backup.load = [](const RunConfig& c) { return c.runs(Mode::Backup) ? Json(c.backupWorkers) : Json(); };
    t.push_back(backup);
    OptionSpec local = integer("local-steps", "H", 1, 65536, &RunConfig::localSteps,
        "local-sgd mode: each worker takes H steps on its own model between averagings (default 8; 1 without "
        "momentum is sync up to rounding)");
    local.whyInapplicable = [](const RunConfig& c) { return onlyForMode(c, Mode::LocalSgd); };
    local.load = [](const RunConfig& c) { return c.runs(Mode::LocalSgd) ? Json(c.localSteps) : Json(); };
    local.windowMax = 1024; // the window's box
    t.push_back(local);
    OptionSpec lambda = number("dc-lambda", "L", 0, false, 1e6, false, &RunConfig::dcLambda,
        "dc-asgd mode: the delay compensation's lambda, g + L g*g*(w_now - w_read) (default 0.04; 0 is async)");
    lambda.whyInapplicable = [](const RunConfig& c) { return onlyForMode(c, Mode::DcAsgd); };
    lambda.load = [](const RunConfig& c) { return c.runs(Mode::DcAsgd) ? Json(c.dcLambda) : Json(); };
    lambda.windowHigh = 10.0; // the window's box (from 0)
    t.push_back(lambda);
    OptionSpec adaptive = base("dc-adaptive", "[on|off]", OptionType::Choice,
        "dc-asgd mode: alone or on gives DC-ASGD-a, lambda / sqrt(mean square of the gradient + 1e-7), a moving "
        "average "
        "with 0.95 (default off)");
    adaptive.choices = {"on", "off"};
    adaptive.flagValue = "on";
    adaptive.store = [](RunConfig& c, const OptionValue& v, const std::string&) { c.dcAdaptive = v.text == "on"; };
    adaptive.load
        = [](const RunConfig& c) { return c.runs(Mode::DcAsgd) ? Json(c.dcAdaptive ? "on" : "off") : Json(); };
    adaptive.whyInapplicable = [](const RunConfig& c) { return onlyForMode(c, Mode::DcAsgd); };
    t.push_back(adaptive);
    t.push_back(integer("eval-every", "N", 0, 1e12, &RunConfig::evalEvery,
        "loss on the whole training set every N sync updates (0: only at the end; default: automatic)"));
    OptionSpec targetAccuracy = number("target-accuracy", "X", 0, true, 1, false, &RunConfig::targetAccuracy,
        "stop when the test-set accuracy reaches X (classification with a test set); time to target");
    targetAccuracy.load = [](const RunConfig& c) { return c.targetAccuracy >= 0 ? Json(c.targetAccuracy) : Json(); };
    targetAccuracy.whyInapplicable = [](const RunConfig& c) {
        if (c.loss != LossKind::SoftmaxCrossEntropy)
            return std::string("needs a classification run (--loss cross-entropy); use --target-loss");
        return c.targetLoss >= 0 ? std::string("cannot be combined with --target-loss; give one target")
                                 : std::string();
    };
    t.push_back(targetAccuracy);
    OptionSpec targetLoss = number("target-loss", "X", 0, true, 1e6, false, &RunConfig::targetLoss,
        "stop when the loss on the whole training set falls to X; time to target");
    targetLoss.load = [](const RunConfig& c) { return c.targetLoss >= 0 ? Json(c.targetLoss) : Json(); };
    t.push_back(targetLoss);
    t.push_back(path(
        "init", "FILE", &RunConfig::init, "initial parameters from a safetensors file (PyTorch nn.Sequential names)"));
    t.push_back(path("save-params", "FILE", &RunConfig::saveParams,
        "write the final parameters (safetensors F32; the first mode's when several run)"));
    t.push_back(path("out", "DIR", &RunConfig::out, "output folder (headless)"));
    t.push_back(path("trace", "FILE", &RunConfig::trace,
        "write the worker timeline as Chrome trace-event JSON (Perfetto, chrome://tracing)"));
    OptionSpec progress = base("progress", "-", OptionType::Text,
        "- : stream what the window shows to standard output as it happens, one JSON object per line (how the "
        "window follows an MPI run)");
    progress.store = [](RunConfig& c, const OptionValue& v, const std::string& origin) {
        if (v.text != "-")
            throw SgdError(origin + ": '" + v.text + "' is not allowed; use - (standard output)");
        c.progress = true;
    };
    progress.load = [](const RunConfig& c) { return c.progress ? Json("-") : Json(); };
    t.push_back(progress);
    return t;
}

} // namespace

const std::vector<OptionSpec>& optionTable()
{
    static const std::vector<OptionSpec> table = makeTable();
    return table;
}

const OptionSpec* findOption(std::string_view name)
{
    for (const auto& o : optionTable()) {
        if (o.name == name)
            return &o;
    }
    return nullptr;
}

const OptionSpec& option(std::string_view name)
{
    if (const OptionSpec* o = findOption(name))
        return *o;
    throw std::logic_error("no option named " + std::string(name));
}

std::vector<int> parseLayers(const std::string& text, const std::string& origin)
{
    std::vector<int> widths;
    OptionSpec width = base("layers", "", OptionType::Integer, "");
    width.min = 1;
    width.max = 1 << 20;
    for (const auto& item : splitList(text))
        widths.push_back(static_cast<int>(width.parse(Json(item), origin + " (layer width)").number));
    if (widths.size() < 2)
        throw SgdError(origin + ": '" + text + "' has " + std::to_string(widths.size())
            + " layer; give at least 2 widths (inputs and outputs), e.g. 1,5,1");
    if (widths.size() > 64)
        throw SgdError(origin + ": " + std::to_string(widths.size()) + " layers are too many; at most 64 are allowed");
    return widths;
}

Straggler parseStraggler(const std::string& text, const std::string& origin)
{
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos)
        throw SgdError(origin + ": '" + text + "' is not W:F (worker index, colon, slow-down factor), e.g. 0:4");
    OptionSpec worker = base("slow", "", OptionType::Integer, "");
    worker.max = option("workers").max - 1;
    OptionSpec factor = base("slow", "", OptionType::Number, "");
    factor.min = 1;
    factor.max = maxStragglerFactor;
    Straggler s;
    s.worker
        = static_cast<int>(worker.parse(Json(text.substr(0, colon)), origin + " (worker in '" + text + "')").number);
    try {
        s.factor = factor.parse(Json(text.substr(colon + 1)), origin).number;
    } catch (const SgdError&) {
        throw SgdError(origin + ": factor in '" + text + "' is not allowed; " + factor.allowedText());
    }
    return s;
}

Json configJson(const RunConfig& config)
{
    Json j = Json::object();
    for (const auto& o : optionTable()) {
        if ((o.pathValue && (o.name == "out" || o.name == "save-params" || o.name == "trace")) || o.name == "progress")
            continue; // where the results went is not part of what was run
        if (o.whyInapplicable && !o.whyInapplicable(config).empty())
            continue; // a default that took no part in this run (e.g. the cluster of a threads run)
        Json value = o.load(config);
        if (value.is_null())
            continue;
        // A number outside its option's range is a setting no one gave ("chunk": 0 is automatic): left out, so
        // that the object reads back as the same configuration (a --config file, a mode's own process).
        if ((o.type == OptionType::Integer || o.type == OptionType::Number) && value.is_number()) {
            const double v = value.get<double>();
            if (v < o.min || v > o.max || (o.minExclusive && v == o.min) || (o.maxExclusive && v == o.max))
                continue;
        }
        j[o.name] = std::move(value);
    }
    return j;
}

} // namespace sgdscope
