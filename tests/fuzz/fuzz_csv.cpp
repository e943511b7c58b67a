// libFuzzer target: the CSV loader. The first byte picks the options (header mode, class labels, targets).
#include "core/common/Error.h"
#include "core/data/CsvLoader.h"
#include "core/data/Dataset.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    sgdscope::CsvOptions options;
    const std::uint8_t flags = data[0];
    options.header = flags % 3 == 0 ? sgdscope::CsvOptions::Header::Auto
        : flags % 3 == 1            ? sgdscope::CsvOptions::Header::Yes
                                    : sgdscope::CsvOptions::Header::No;
    options.classification = (flags & 8) != 0;
    if (flags & 16)
        options.targets = {"0"};
    if (flags & 32)
        options.targets.push_back("y");
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        sgdscope::parseCsv(text, "fuzz.csv", options);
    } catch (const sgdscope::SgdError&) {
    }
    return 0;
}
