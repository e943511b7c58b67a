#pragma once

#include "core/common/Json.h"
#include "core/run/RunConfig.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// Collects settings from a preset, a --config file and the command line, later sources overriding earlier
/// ones (command line over file over preset), remembering where each came from so that an error names it
/// ("--workers" or "field \"workers\" of config file 'run.json'").
///
/// resolve() checks every value against the option table (run/Options.h) and then that every option the
/// user gave (command line or --config file, not the preset) takes effect: an option that would be ignored
/// by the rest of the configuration is refused with the reason ("--async-apply: applies to async runs only,
/// but --mode is sync"). --data without --dataset chooses the data set from what the path is: a folder is
/// read as IDX files, a file as CSV.
class ConfigBuilder
{
public:
    /// Applies a preset by name (throws SgdError listing the presets if unknown).
    void applyPreset(const std::string& name, const std::string& origin);
    /// Applies a JSON object of options (a --config file); unknown keys are errors.
    void applyJson(const Json& object, const std::string& what);
    /// Applies one command-line option (name without dashes) with its text value.
    void applyOption(const std::string& name, const std::string& value);

    /// Validates and converts everything; throws SgdError naming the option or field. With `withoutEffect`, an
    /// option the user gave that would take no effect is not refused but named there (a study leaves such a
    /// shared option out of the points it does not apply to).
    RunConfig resolve(std::vector<std::string>* withoutEffect = nullptr) const;

private:
    struct Setting
    {
        Json value;
        std::string origin;
        bool fromUser = true; // the command line or a --config file, not a preset
        std::string source; // "preset 'parabola'", "config file 'run.json'", "--workers"
    };
    void applyObject(const Json& object, const std::string& what, bool fromUser);
    std::map<std::string, Setting> m_settings;
    std::string m_presetDataset; // the data set the preset's own settings (e.g. its sample count) are for
};

/// A run's configuration from its sources, as every front end builds it (the headless command line, a study's
/// points): the preset (the options' --preset, else the config file's "preset", else parabola), then the --config
/// file's object (its text `configText`, named `configFile` in messages; none if null), then `options` (names
/// without dashes) in order. Throws SgdError naming the option, field or file. `withoutEffect`: as resolve's.
RunConfig configFromOptions(const std::vector<std::pair<std::string, std::string>>& options,
    const std::string* configText, const std::string& configFile, std::vector<std::string>* withoutEffect = nullptr);

std::vector<std::string> presetNames();

/// The text of a --config file (at most 16 MiB); throws SgdError "--config: file '<path>': <reason>".
std::string readConfigFile(const std::string& path);

} // namespace sgdscope
