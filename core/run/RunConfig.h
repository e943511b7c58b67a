#pragma once

#include "core/common/NamedValues.h"
#include "core/data/CsvLoader.h"
#include "core/engines/EngineKind.h"
#include "core/engines/sim/SimCluster.h"
#include "core/metrics/Events.h"
#include "core/nn/NetworkSpec.h"
#include "core/train/TrainerSettings.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sgdscope {

enum class DatasetKind
{
    Parabola,
    Blobs,
    FashionMnist,
    Idx,
    Csv
};
inline constexpr NameTable<DatasetKind, 5> datasetNames {
    {{"parabola", DatasetKind::Parabola}, {"blobs", DatasetKind::Blobs}, {"fashion-mnist", DatasetKind::FashionMnist},
        {"idx", DatasetKind::Idx}, {"csv", DatasetKind::Csv}}};
/// Generated data sets read no file.
inline bool isGenerated(DatasetKind d)
{
    return d == DatasetKind::Parabola || d == DatasetKind::Blobs;
}

/// A fully resolved run configuration: presets, --config files and command-line options all end up here
/// (run/ConfigBuilder.h), each option declared once in the option table (run/Options.h). Field names follow
/// the options (--workers -> workers).
struct RunConfig
{
    std::string preset;
    EngineKind engine = EngineKind::Threads;
    ClusterKind cluster = ClusterKind::Datacenter;
    std::string platform; // SimGrid platform file (instead of a built-in cluster)
    Placement placement = Placement::Spread; // workers on the simulated hosts
    std::vector<Mode> modes {Mode::Sync, Mode::Async}; // run one after another (--mode sync,backup; both = sync,async)
    std::int64_t sspBound = 3; // --ssp-bound S
    int backupWorkers = 1; // --backup-workers B
    int localSteps = 8; // --local-steps H
    double dcLambda = 0.04; // --dc-lambda L
    bool dcAdaptive = false; // --dc-adaptive
    int workers = 1;
    int batch = 0; // 0: the whole training set
    int batchPerWorker = 0; // > 0: --batch-per-worker B, and batch is workers x B
    int accum = 1;
    int chunk = 0; // 0: automatic (defaultChunkSize)
    std::int64_t steps = 0; // sync updates; 0: from epochs
    double epochs = 0; // alternative to steps
    double lr = 0.01;
    double momentum = 0.0;
    std::uint64_t seed = 0;
    std::vector<int> layers; // empty: inputs and outputs from the data, no hidden layer
    std::vector<LayerSpec> model; // --model: the layers as the model line lists them (instead of layers)
    Activation activation = Activation::Tanh;
    LossKind loss = LossKind::MeanSquaredError;
    WeightInit weightInit = WeightInit::StandardNormal;
    DatasetKind dataset = DatasetKind::Parabola;
    std::int64_t samples = 0; // parabola/blobs: points; loaded sets: keep the first N (0: all)
    std::string data; // CSV file or IDX folder
    CsvOptions::Header csvHeader = CsvOptions::Header::Auto;
    std::vector<std::string> targets;
    std::vector<Straggler> slow;
    double slowFraction = 0.0; // --slow-fraction F:X
    double slowFractionFactor = 1.0;
    double rotatingStraggler = 1.0;
    double heavyTail = 0.0;
    double jitter = 0.0;
    double peerTimeout = 6.0; // --engine mpi: seconds of silence after which a process is given up (PeerWatch)
    AsyncApply asyncApply = AsyncApply::Lock;
    AsyncLearningRate asyncLr = AsyncLearningRate::Scaled;
    LrSchedule lrSchedule = LrSchedule::Constant; // --lr-schedule: over the run's samples (headless)
    Topology topology = Topology::ParameterServer; // --topology: the team-wide modes' wires (sim, mpi)
    std::int64_t evalEvery = -1; // updates between whole-set losses; -1: automatic, 0: only at the end
    double targetAccuracy = -1.0; // stop when the test accuracy reaches it (< 0: no target)
    double targetLoss = -1.0; // stop when the training-set loss falls to it (< 0: no target)
    std::string init; // safetensors file with initial parameters
    std::string saveParams; // write final parameters here (sync run's when both)
    std::string out; // output folder (headless)
    std::string trace; // Chrome trace-event JSON of the worker timeline
    bool progress = false; // --progress -: JSON lines of what the window shows, on standard output
    bool modesSideBySide = false; // not an option: the window trains both modes at once, headless one after another

    /// Where each option's value came from, for messages about combinations found later (e.g. a preset's
    /// layers that do not fit the user's data): "--layers", "field \"layers\" of config file 'run.json'",
    /// "--layers (from preset 'parabola')".
    std::map<std::string, std::string> origins;
    std::string originOf(const std::string& option) const
    {
        const auto it = origins.find(option);
        return it == origins.end() ? "--" + option : it->second;
    }

    bool runs(Mode m) const { return std::find(modes.begin(), modes.end(), m) != modes.end(); }
    /// Whether a sync-like mode (team-wide updates) is among the modes, and whether an async-like one (pushes).
    bool runsSync() const { return std::any_of(modes.begin(), modes.end(), isSyncLike); }
    bool runsAsync() const
    {
        return std::any_of(modes.begin(), modes.end(), [](Mode m) { return !isSyncLike(m); });
    }
    /// "sync,async" (both), "backup", ...
    std::string modesText() const;
};
inline std::string RunConfig::modesText() const
{
    std::string text;
    for (const Mode m : modes)
        text += (text.empty() ? "" : ",") + std::string(modeName(m));
    return text;
}
inline std::string toString(DatasetKind d)
{
    return nameOf(datasetNames, d);
}

} // namespace sgdscope
