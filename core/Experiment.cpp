#include "core/Experiment.h"

#include "core/AsyncTrainer.h"
#include "core/Error.h"
#include "core/MemoryBudget.h"
#include "core/ReductionPlan.h"
#include "core/Safetensors.h"
#include "core/SyncTrainer.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace sgdscope {

namespace {
constexpr std::int64_t defaultParabolaPoints = 50;
constexpr std::int64_t defaultBlobsSamples = 16384;
constexpr int blobsFeatures = 64;
constexpr int blobsClasses = 10;
constexpr double blobsSpread = 1.5;
constexpr std::int64_t maxEvaluationsPerRun = 200;
} // namespace

DataSplit loadData(const RunConfig& c)
{
    DataSplit split;
    const bool classification = c.loss == LossKind::SoftmaxCrossEntropy;
    if (c.dataset == "parabola") {
        requireMemory(8.0 * static_cast<double>(c.samples), "--samples",
            "the parabola of " + std::to_string(c.samples) + " points", "Use fewer points.");
        split.train = makeParabola(c.samples > 0 ? c.samples : defaultParabolaPoints);
    } else if (c.dataset == "blobs") {
        requireMemory(
            4.0 * 1.2 * static_cast<double>(c.samples > 0 ? c.samples : defaultBlobsSamples) * (blobsFeatures + 1),
            "--samples",
            "the blobs data set of " + std::to_string(c.samples > 0 ? c.samples : defaultBlobsSamples) + " samples",
            "Use fewer samples.");
        // One draw of n training and n/8 test samples around the same centres.
        const std::int64_t n = c.samples > 0 ? c.samples : defaultBlobsSamples;
        const std::int64_t testN = std::max<std::int64_t>(1, n / 8);
        Dataset all = makeBlobs(n + testN, blobsFeatures, blobsClasses, blobsSpread, c.seed);
        Dataset test = all;
        test.name = "blobs test";
        test.inputs = all.inputs.rightCols(testN).eval();
        test.labels.erase(test.labels.begin(), test.labels.begin() + n);
        all.truncate(n);
        split.train = std::move(all);
        split.test = std::move(test);
    } else if (c.dataset == "fashion-mnist" || c.dataset == "idx") {
        std::string folder = c.data;
        if (folder.empty() && c.dataset == "idx")
            throw SgdError("--data: dataset 'idx' needs --data FOLDER (a folder of MNIST-style IDX files)");
        if (folder.empty()) {
            const char* override = std::getenv("SGDSCOPE_FASHION_MNIST_DIR");
            folder = override && *override ? override : debianFashionMnistFolder;
            std::error_code ec;
            if (!std::filesystem::exists(std::filesystem::path(folder) / "train-images-idx3-ubyte.gz", ec))
                throw SgdError("--dataset fashion-mnist: the data set is not installed (no " + folder
                    + "/train-images-idx3-ubyte.gz); install Debian's package dataset-fashion-mnist "
                      "(apt-get install dataset-fashion-mnist) or give --data FOLDER");
        }
        split = loadIdxFolder(folder, c.dataset);
    } else if (c.dataset == "csv") {
        if (c.data.empty())
            throw SgdError("--data: dataset 'csv' needs --data FILE (a CSV file of numbers)");
        CsvOptions options;
        options.header = c.csvHeader == "yes" ? CsvOptions::Header::Yes
            : c.csvHeader == "no"             ? CsvOptions::Header::No
                                              : CsvOptions::Header::Auto;
        options.targets = c.targets;
        options.classification = classification;
        std::error_code ec;
        const auto fileSize = std::filesystem::file_size(c.data, ec);
        if (!ec)
            requireMemory(3.0 * static_cast<double>(fileSize), "--data",
                "CSV file '" + c.data + "' (" + formatBytes(static_cast<double>(fileSize)) + ")",
                "Use a smaller file.");
        split.train = loadCsv(c.data, options);
    } else {
        throw SgdError("--dataset: unknown data set '" + c.dataset + "'");
    }
    if (c.samples > 0 && c.dataset != "parabola" && c.dataset != "blobs") {
        if (c.samples > split.train.size())
            throw SgdError("--samples: " + std::to_string(c.samples) + " is more than the "
                + std::to_string(split.train.size()) + " training samples of " + c.dataset);
        split.train.truncate(c.samples);
    }
    return split;
}

PreparedRun prepareRun(const RunConfig& config)
{
    return prepareRun(config, std::make_shared<DataSplit>(loadData(config)));
}

PreparedRun prepareRun(const RunConfig& config, std::shared_ptr<const DataSplit> data)
{
    PreparedRun run;
    run.config = config;
    const Dataset& train = data->train;
    const bool classification = config.loss == LossKind::SoftmaxCrossEntropy;
    if (classification && !train.isClassification())
        throw SgdError("--loss: cross-entropy needs class labels, but " + config.dataset
            + " has real-valued targets; use --loss mse");
    if (!classification && train.isClassification())
        throw SgdError("--loss: mse needs real-valued targets, but " + config.dataset
            + " has class labels; use --loss cross-entropy");

    auto problem = std::make_shared<Problem>();
    problem->spec.activation = config.activation;
    problem->spec.loss = config.loss;
    problem->spec.layers = config.layers;
    if (problem->spec.layers.empty())
        problem->spec.layers = {train.features(), train.outputWidth()};
    if (problem->spec.layers.front() != train.features())
        throw SgdError("--layers: the first width is " + std::to_string(problem->spec.layers.front()) + " but "
            + config.dataset + " has " + std::to_string(train.features()) + " input features");
    if (problem->spec.layers.back() != train.outputWidth())
        throw SgdError("--layers: the last width is " + std::to_string(problem->spec.layers.back()) + " but "
            + config.dataset + " needs " + std::to_string(train.outputWidth())
            + (classification ? " outputs (one per class)" : " outputs (one per target)"));
    {
        // Refuse what cannot fit before allocating any of it.
        TrainerSettings sizing;
        sizing.workers = config.workers;
        sizing.batch
            = config.batch > 0 ? config.batch : static_cast<int>(std::min<std::int64_t>(train.size(), 1 << 30));
        const int chunk
            = config.chunk > 0 ? std::min(config.chunk, sizing.batch) : defaultChunkSize(sizing.batch, problem->spec);
        std::string layers;
        for (std::size_t i = 0; i < problem->spec.layers.size(); ++i)
            layers += (i ? "," : "") + std::to_string(problem->spec.layers[i]);
        requireMemory(modelMemoryBytes(problem->spec, sizing, chunk), "--layers",
            "an MLP " + layers + " trained by " + std::to_string(config.workers)
                + (config.workers == 1 ? " worker" : " workers") + " in both modes",
            "Use smaller layers or fewer workers.");
    }
    problem->layout = ParameterLayout(problem->spec);
    problem->data = data;
    if (!config.init.empty())
        problem->initialParameters = readSafetensors(config.init, problem->layout);
    else
        problem->initialParameters = initialParameters(problem->spec, problem->layout, config.weightInit, config.seed);

    TrainerSettings& s = run.settings;
    s.workers = config.workers;
    s.batch = config.batch > 0 ? config.batch : static_cast<int>(std::min<std::int64_t>(train.size(), 1 << 30));
    if (s.batch > train.size())
        throw SgdError("--batch: " + std::to_string(s.batch) + " is larger than the training set ("
            + std::to_string(train.size()) + " samples of " + config.dataset + ")");
    s.accum = config.accum;
    s.chunk = std::min(config.chunk, s.batch);
    s.learningRate = config.lr;
    s.momentum = config.momentum;
    s.seed = config.seed;
    s.stragglers = config.slow;
    s.jitter = config.jitter;
    s.asyncApply = config.asyncApply;
    s.asyncLearningRate = config.asyncLr;
    const std::int64_t perEpoch = std::max<std::int64_t>(1, DataOrder::batchesPerEpoch(train.size(), s.batch));
    run.steps = config.steps > 0 ? config.steps
        : config.epochs > 0 ? std::max<std::int64_t>(1, std::llround(config.epochs * static_cast<double>(perEpoch)))
                            : perEpoch;
    if (run.steps > (std::numeric_limits<std::int64_t>::max() / 2) / s.batch)
        throw SgdError("--steps: " + std::to_string(run.steps) + " updates of " + std::to_string(s.batch)
            + " samples is too many");
    s.sampleBudget = run.steps * s.batch;
    // Whole-set loss once per epoch, but no more than 200 times a run (it is not free on large sets).
    const std::int64_t evalEvery = config.evalEvery >= 0
        ? config.evalEvery
        : std::max(perEpoch, (run.steps + maxEvaluationsPerRun - 1) / maxEvaluationsPerRun);
    s.evalEverySamples = evalEvery * s.batch;
    validateSettings(s, *problem);
    run.problem = std::move(problem);
    return run;
}

std::int64_t trainingSetSize(const RunConfig& c)
{
    std::int64_t n = 0;
    if (c.dataset == "parabola") {
        n = c.samples > 0 ? c.samples : defaultParabolaPoints;
    } else if (c.dataset == "blobs") {
        n = c.samples > 0 ? c.samples : defaultBlobsSamples;
    } else if (c.dataset == "fashion-mnist" || c.dataset == "idx") {
        const std::string folder = c.data.empty() ? std::string(debianFashionMnistFolder) : c.data;
        for (const char* name : {"train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte"}) {
            const std::string path = (std::filesystem::path(folder) / name).string();
            std::error_code ec;
            if (!std::filesystem::exists(path, ec))
                continue;
            try {
                n = static_cast<std::int64_t>(readIdx(path, 1 << 24).dims.front()); // a labels file is small
            } catch (const SgdError&) {
                n = 0;
            }
            break;
        }
        if (c.samples > 0 && n > 0)
            n = std::min(n, c.samples);
    }
    return n;
}

std::unique_ptr<Trainer> makeTrainer(Mode mode, std::shared_ptr<const Problem> problem, const TrainerSettings& settings)
{
    if (mode == Mode::Sync)
        return std::make_unique<SyncTrainer>(std::move(problem), settings);
    return std::make_unique<AsyncTrainer>(std::move(problem), settings);
}

double ModeResult::idleFraction() const
{
    double busy = 0.0;
    double idle = 0.0;
    for (const auto& w : workers) {
        busy += w.busySeconds;
        idle += w.idleSeconds;
    }
    return busy + idle > 0 ? idle / (busy + idle) : 0.0;
}

ModeResult runMode(const PreparedRun& run, Mode mode, TrainingObserver& observer)
{
    auto trainer = makeTrainer(mode, run.problem, run.settings);
    trainer->run(RunLimits {}, observer);
    ModeResult result;
    result.mode = mode;
    result.settings = run.settings;
    // Report the chunk size actually used (0 in the settings means "automatic").
    result.settings.chunk = run.settings.chunk > 0 ? std::min(run.settings.chunk, run.settings.batch)
                                                   : defaultChunkSize(run.settings.batch, run.problem->spec);
    result.updates = trainer->updates();
    result.samples = trainer->samples();
    result.seconds = trainer->seconds();
    const EvaluationRecord final = trainer->evaluateAndReport(observer);
    result.finalLoss = final.trainLoss;
    result.trainAccuracy = final.trainAccuracy;
    if (run.problem->data->test) {
        const EvalSums test = trainer->evaluate(*run.problem->data->test);
        result.testLoss = test.lossSum / static_cast<double>(std::max<std::int64_t>(1, test.samples));
        if (run.problem->data->test->isClassification())
            result.testAccuracy
                = static_cast<double>(test.correct) / static_cast<double>(std::max<std::int64_t>(1, test.samples));
    }
    result.workers = trainer->workerTotals();
    result.staleness = trainer->staleness();
    result.paramsDigest = parameterDigest(run.problem->layout, trainer->parameters().data());
    result.parameters = trainer->parameters();
    result.diverged = trainer->diverged();
    result.divergedAt = trainer->divergedAt();
    result.interrupted = trainer->stopped() && !trainer->diverged();
    return result;
}

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
