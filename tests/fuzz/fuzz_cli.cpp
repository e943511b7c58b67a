// libFuzzer target: the command line. The input is split into arguments at newlines.
#include "app/CommandLine.h"
#include "core/common/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::vector<std::string> args;
    std::string current;
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == '\n') {
            args.push_back(current);
            current.clear();
        } else {
            current += static_cast<char>(data[i]);
        }
    }
    if (!current.empty())
        args.push_back(current);
    try {
        const sgdscope::CommandLine commandLine = sgdscope::parseCommandLine(args);
        if (commandLine.configFile.empty())
            sgdscope::buildRunConfig(commandLine, nullptr);
        sgdscope::helpText();
    } catch (const sgdscope::SgdError&) {
    }
    return 0;
}
