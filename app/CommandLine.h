#pragma once

#include "core/run/RunConfig.h"

#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// The command line, split into what the program does (window or headless, help) and the run options.
/// Plain C++ (no Qt), so that the fuzzer can drive it.
struct CommandLine
{
    bool headless = false;
    bool help = false;
    bool version = false;
    bool listPresets = false;
    bool sessionChild = false; // the window's simulated-cluster process (app/SessionChild.h)
    bool modeChild = false; // a simulated mode's own process (core/run/ModeChild.h)
    std::string configFile;
    std::vector<std::pair<std::string, std::string>> options; // run options in order, names without dashes
    /// Arguments that are not options: the window opens a run folder or data set named so (`sgdscope RUN_DIR`);
    /// a headless run refuses them.
    std::vector<std::string> paths;
};

/// Parses arguments (without the program name): "--name value" or "--name=value". Throws SgdError naming
/// the option on anything unknown or malformed.
CommandLine parseCommandLine(const std::vector<std::string>& args);

/// Builds the run configuration: preset (from --preset, else the config file's, else parabola), then the
/// --config file, then the other options. Throws SgdError naming the option, field or file.
RunConfig buildRunConfig(const CommandLine& commandLine);
/// The same with the config file's text given (for tests and the fuzzer).
RunConfig buildRunConfig(const CommandLine& commandLine, const std::string* configText);

std::string helpText();

} // namespace sgdscope
