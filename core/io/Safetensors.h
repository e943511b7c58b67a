#pragma once

#include "core/nn/ParameterLayout.h"

#include <map>
#include <string>

namespace sgdscope {

/// Parameters in the safetensors format (https://github.com/huggingface/safetensors): an 8-byte
/// little-endian header length, a JSON header, then the little-endian tensor data. Tensor names and shapes
/// are PyTorch's nn.Sequential state_dict ("0.weight" [out, in], "0.bias" [out], "2.weight", ...), so a
/// file we write loads with torch's safetensors.torch.load_file() into the same model.

/// Writes the parameters as F32, atomically. Throws SgdError naming the path.
void writeSafetensors(const std::string& path, const ParameterLayout& layout, const float* params,
    const std::map<std::string, std::string>& metadata = {});
/// Serialises to bytes (what writeSafetensors writes).
std::string encodeSafetensors(
    const ParameterLayout& layout, const float* params, const std::map<std::string, std::string>& metadata = {});

/// Reads parameters for `layout` from a file (F32 or F64 tensors; F64 is rounded to float). Rejects, with
/// the file name and what is wrong, a header that lies about its length, offsets that overlap, leave gaps or
/// pass the end of the file, shapes that do not match their byte ranges or the model, and missing or extra
/// tensors.
ParamVector readSafetensors(const std::string& path, const ParameterLayout& layout);
ParamVector decodeSafetensors(const std::string& bytes, const std::string& what, const ParameterLayout& layout);

} // namespace sgdscope
