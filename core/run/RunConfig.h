#pragma once

#include "core/io/Json.h"
#include "core/nn/ParameterLayout.h"
#include "core/train/TrainerSettings.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sgdscope {

enum class RunMode
{
    Sync,
    Async,
    Both
};

/// A fully resolved, validated run configuration: presets, --config files and command-line options all
/// end up here. Field names follow the options (--workers -> workers).
struct RunConfig
{
    std::string preset;
    RunMode mode = RunMode::Both;
    int workers = 1;
    int batch = 0; // 0: the whole training set
    int accum = 1;
    int chunk = 0; // 0: automatic (defaultChunkSize)
    std::int64_t steps = 0; // sync updates; 0: from epochs
    double epochs = 0; // alternative to steps
    double lr = 0.01;
    double momentum = 0.0;
    std::uint64_t seed = 0;
    std::vector<int> layers; // empty: inputs and outputs from the data, no hidden layer
    Activation activation = Activation::Tanh;
    LossKind loss = LossKind::MeanSquaredError;
    WeightInit weightInit = WeightInit::StandardNormal;
    std::string dataset = "parabola";
    std::int64_t samples = 0; // parabola: points; loaded sets: keep the first N (0: all)
    std::string data; // CSV file or IDX folder
    std::string csvHeader = "auto";
    std::vector<std::string> targets;
    std::vector<Straggler> slow;
    double jitter = 0.0;
    AsyncApply asyncApply = AsyncApply::Lock;
    AsyncLearningRate asyncLr = AsyncLearningRate::Constant;
    std::int64_t evalEvery = -1; // updates between whole-set losses; -1: automatic, 0: only at the end
    std::string init; // safetensors file with initial parameters
    std::string saveParams; // write final parameters here (sync run's when both)
    std::string out; // output folder (headless)
    std::string trace; // Chrome trace-event JSON of the worker timeline
};

/// One option of the run configuration, as documented by --help.
struct OptionInfo
{
    std::string name; // without dashes
    std::string valueName; // e.g. "P", "FILE"; empty for flags
    std::string help;
};
const std::vector<OptionInfo>& runOptions();

/// Collects settings from presets, config files and the command line, later ones overriding earlier ones,
/// remembering where each came from so that an error names it ("--workers" or "field \"workers\" of
/// config file 'run.json'").
class ConfigBuilder
{
public:
    /// Applies a preset by name (throws SgdError listing the presets if unknown).
    void applyPreset(const std::string& name, const std::string& origin);
    /// Applies a JSON object (a --config file or a preset); unknown keys are errors.
    void applyJson(const Json& object, const std::string& what);
    /// Applies one command-line option (name without dashes) with its text value.
    void applyOption(const std::string& name, const std::string& value);

    /// Validates and converts everything; throws SgdError naming the option or field.
    RunConfig resolve() const;

private:
    struct Setting
    {
        Json value;
        std::string origin;
    };
    void setValue(const std::string& key, Json value, const std::string& origin, bool append);
    std::map<std::string, Setting> m_settings;
    std::vector<std::string> m_order;
};

std::vector<std::string> presetNames();
/// Parses the --layers text "784,256,10".
std::vector<int> parseLayers(const std::string& text, const std::string& origin);
/// Parses a --slow value "W:F".
Straggler parseStraggler(const std::string& text, const std::string& origin);

std::string toString(RunMode m);
/// The configuration as JSON (keys as the options): echoed in summary.json.
Json toJson(const RunConfig& config);

} // namespace sgdscope
