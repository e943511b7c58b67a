// libFuzzer target: the safetensors reader, against the seed example's model and a two-layer one.
#include "core/common/Error.h"
#include "core/io/Safetensors.h"
#include "core/nn/ParameterLayout.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using sgdscope::NetworkSpec;
    static const sgdscope::ParameterLayout seed(
        NetworkSpec::mlp({1, 5, 1}, sgdscope::Activation::Tanh, sgdscope::LossKind::MeanSquaredError));
    static const sgdscope::ParameterLayout wider(
        NetworkSpec::mlp({3, 4}, sgdscope::Activation::Tanh, sgdscope::LossKind::MeanSquaredError));
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    for (const auto* layout : {&seed, &wider}) {
        try {
            sgdscope::decodeSafetensors(bytes, "fuzz.safetensors", *layout);
        } catch (const sgdscope::SgdError&) {
        }
    }
    return 0;
}
