// libFuzzer target: a --config JSON file, through the same path as the command line's --config.
#include "app/CommandLine.h"
#include "core/common/Error.h"
#include "core/common/Json.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    sgdscope::CommandLine commandLine;
    commandLine.configFile = "fuzz.json";
    try {
        sgdscope::buildRunConfig(commandLine, &text);
    } catch (const sgdscope::SgdError&) {
    }
    try {
        (void)sgdscope::dumpJson(sgdscope::parseJson(text, "fuzz.json"), 2);
    } catch (const sgdscope::SgdError&) {
    }
    return 0;
}
