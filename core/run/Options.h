#pragma once

#include "core/common/Json.h"
#include "core/run/OptionSpec.h"
#include "core/run/RunConfig.h"

#include <string>
#include <string_view>
#include <vector>

namespace sgdscope {

/// Every run option, in --help order.
const std::vector<OptionSpec>& optionTable();
/// The option called `name` (without dashes), or nullptr.
const OptionSpec* findOption(std::string_view name);
/// The option called `name`; throws std::logic_error if there is none (for names written in our code).
const OptionSpec& option(std::string_view name);

/// Parses the --layers text "784,256,10".
std::vector<int> parseLayers(const std::string& text, const std::string& origin);
/// Parses a --slow value "W:F".
Straggler parseStraggler(const std::string& text, const std::string& origin);

/// The configuration as JSON, with the options' names as keys: echoed in summary.json.
Json configJson(const RunConfig& config);

} // namespace sgdscope
