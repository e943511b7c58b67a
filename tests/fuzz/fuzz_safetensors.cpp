// libFuzzer target: the safetensors reader, against the seed example's model and a two-layer one.
#include "core/common/Error.h"
#include "core/io/Safetensors.h"
#include "core/nn/ParameterLayout.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const sgdscope::ParameterLayout seed(sgdscope::MlpSpec {{1, 5, 1}});
    static const sgdscope::ParameterLayout wider(sgdscope::MlpSpec {{3, 4}});
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    for (const auto* layout : {&seed, &wider}) {
        try {
            sgdscope::decodeSafetensors(bytes, "fuzz.safetensors", *layout);
        } catch (const sgdscope::SgdError&) {
        }
    }
    return 0;
}
