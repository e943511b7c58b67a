// libFuzzer target: the IDX reader, plain and gzipped (the corpus has both), and the images+labels pairing.
#include "core/common/Error.h"
#include "core/data/Dataset.h"
#include "core/data/IdxLoader.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        const sgdscope::IdxArray a = sgdscope::parseIdx(bytes, "fuzz.idx", 1 << 22);
        // Pair it with itself as labels, and with a matching labels array: exercises the checks there too.
        try {
            sgdscope::idxToDataset(a, a, "fuzz", "images", "labels");
        } catch (const sgdscope::SgdError&) {
        }
        if (a.dims.size() >= 2) {
            sgdscope::IdxArray labels;
            labels.dims = {a.dims[0]};
            labels.data.assign(a.dims[0], 1);
            sgdscope::idxToDataset(a, labels, "fuzz", "images", "labels");
        }
    } catch (const sgdscope::SgdError&) {
    }
    return 0;
}
