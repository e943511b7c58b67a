#include "core/io/Safetensors.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/io/Files.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sgdscope {

namespace {
constexpr std::uint64_t maxHeaderBytes = 100U << 20; // the reference library's limit

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}
} // namespace

std::string encodeSafetensors(
    const ParameterLayout& layout, const float* params, const std::map<std::string, std::string>& metadata)
{
    Json header = Json::object();
    if (!metadata.empty()) {
        Json meta = Json::object();
        for (const auto& [key, value] : metadata)
            meta[key] = value;
        header["__metadata__"] = meta;
    }
    std::uint64_t offset = 0;
    for (const auto& t : layout.tensors()) {
        Json entry = Json::object();
        entry["dtype"] = "F32";
        entry["shape"] = t.shape;
        const std::uint64_t bytes = t.size * sizeof(float);
        entry["data_offsets"] = Json::array({offset, offset + bytes});
        offset += bytes;
        header[t.name] = entry;
    }
    std::string text = dumpJson(header, -1);
    while (text.size() % 8 != 0)
        text += ' ';
    std::string out;
    out.reserve(8 + text.size() + offset);
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i)
        out += static_cast<char>((n >> (8 * i)) & 0xff);
    out += text;
    for (const auto& t : layout.tensors())
        out.append(reinterpret_cast<const char*>(params + t.offset), t.size * sizeof(float));
    return out;
}

void writeSafetensors(const std::string& path, const ParameterLayout& layout, const float* params,
    const std::map<std::string, std::string>& metadata)
{
    writeFileAtomically(path, encodeSafetensors(layout, params, metadata));
}

ParamVector decodeSafetensors(const std::string& bytes, const std::string& what, const ParameterLayout& layout)
{
    if (bytes.size() < 8)
        throw SgdError(what + ": " + std::to_string(bytes.size())
            + " bytes is too short for a safetensors file (it starts with an 8-byte header length)");
    std::uint64_t headerLength = 0;
    for (int i = 7; i >= 0; --i)
        headerLength = (headerLength << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    if (headerLength > maxHeaderBytes)
        throw SgdError(
            what + ": header length " + std::to_string(headerLength) + " (bytes 0-7) is over the 100 MB limit");
    if (headerLength > bytes.size() - 8)
        throw SgdError(what + ": header length " + std::to_string(headerLength)
            + " (bytes 0-7) runs past the end of the " + std::to_string(bytes.size()) + "-byte file");
    const Json header = parseJson(std::string_view(bytes).substr(8, headerLength), what + " header");
    if (!header.is_object())
        throw SgdError(what + ": the header is " + typeName(header) + ", not a JSON object");
    const std::uint64_t dataBytes = bytes.size() - 8 - headerLength;
    const char* data = bytes.data() + 8 + headerLength;

    struct Entry
    {
        std::string name;
        std::string dtype;
        std::vector<std::int64_t> shape;
        std::uint64_t begin = 0;
        std::uint64_t end = 0;
    };
    std::vector<Entry> entries;
    // A whole number in JSON (written as 5 or 5.0), or -1.
    auto wholeNumber = [](const Json& v, double limit) -> double {
        if (!v.is_number())
            return -1;
        const double d = v.get<double>();
        return d >= 0 && d == std::floor(d) && d <= limit ? d : -1;
    };
    for (const auto& [name, value] : header.items()) {
        if (name == "__metadata__") {
            if (!value.is_object())
                throw SgdError(what + ": __metadata__ is " + typeName(value) + ", not an object");
            for (const auto& [key, meta] : value.items()) {
                if (!meta.is_string())
                    throw SgdError(what + ": __metadata__ value of \"" + key + "\" is " + typeName(meta)
                        + "; metadata values must be strings");
            }
            continue;
        }
        if (!value.is_object())
            throw SgdError(what + ": tensor \"" + name + "\" is " + typeName(value) + ", not an object");
        Entry e;
        e.name = name;
        const Json* dtype = member(value, "dtype");
        const Json* shape = member(value, "shape");
        const Json* offsets = member(value, "data_offsets");
        if (!dtype || !dtype->is_string())
            throw SgdError(what + ": tensor \"" + name + "\" has no dtype string");
        e.dtype = dtype->get<std::string>();
        if (e.dtype != "F32" && e.dtype != "F64")
            throw SgdError(what + ": tensor \"" + name + "\" has dtype " + e.dtype + "; F32 and F64 are supported");
        if (!shape || !shape->is_array())
            throw SgdError(what + ": tensor \"" + name + "\" has no shape array");
        std::uint64_t elements = 1;
        for (const auto& d : *shape) {
            if (wholeNumber(d, 1e12) < 0)
                throw SgdError(what + ": tensor \"" + name + "\" has a shape entry that is not a non-negative integer");
            const auto dim = static_cast<std::uint64_t>(d.get<double>());
            e.shape.push_back(static_cast<std::int64_t>(dim));
            if (dim != 0 && elements > (1ULL << 40) / dim)
                throw SgdError(what + ": tensor \"" + name + "\" has an impossibly large shape");
            elements *= dim;
        }
        if (!offsets || !offsets->is_array() || offsets->size() != 2)
            throw SgdError(what + ": tensor \"" + name + "\" has no data_offsets [begin, end]");
        for (const auto& o : *offsets) {
            if (wholeNumber(o, 1e15) < 0)
                throw SgdError(what + ": tensor \"" + name + "\" has a data offset that is not a non-negative integer");
        }
        e.begin = static_cast<std::uint64_t>((*offsets)[0].get<double>());
        e.end = static_cast<std::uint64_t>((*offsets)[1].get<double>());
        if (e.end < e.begin)
            throw SgdError(what + ": tensor \"" + name + "\" has data_offsets [" + std::to_string(e.begin) + ", "
                + std::to_string(e.end) + "] that end before they begin");
        const std::uint64_t elementBytes = e.dtype == "F32" ? 4 : 8;
        if (elements * elementBytes != e.end - e.begin)
            throw SgdError(what + ": tensor \"" + name + "\" has shape " + shapeText(e.shape) + " ("
                + std::to_string(elements * elementBytes) + " bytes of " + e.dtype + ") but data_offsets cover "
                + std::to_string(e.end - e.begin) + " bytes");
        entries.push_back(std::move(e));
    }
    // The byte ranges must tile the data exactly: contiguous from 0, no overlaps or gaps, ending at the end.
    std::vector<const Entry*> byOffset;
    for (const auto& e : entries)
        byOffset.push_back(&e);
    std::sort(byOffset.begin(), byOffset.end(),
        [](const Entry* a, const Entry* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
    std::uint64_t expected = 0;
    for (const Entry* e : byOffset) {
        if (e->begin != expected)
            throw SgdError(what + ": tensor \"" + e->name + "\" starts at data byte " + std::to_string(e->begin)
                + " but the previous tensor ends at " + std::to_string(expected)
                + " (tensors must follow each other without gaps or overlaps)");
        expected = e->end;
    }
    if (expected != dataBytes)
        throw SgdError(what + ": the tensors cover " + std::to_string(expected) + " data bytes but the file holds "
            + std::to_string(dataBytes) + " after the header");

    ParamVector params(layout.paddedSize(), 0.0f);
    for (const auto& t : layout.tensors()) {
        const auto found
            = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == t.name; });
        if (found == entries.end())
            throw SgdError(what + ": has no tensor \"" + t.name + "\" (the model needs " + shapeText(t.shape) + ")");
        if (found->shape != t.shape)
            throw SgdError(what + ": tensor \"" + t.name + "\" has shape " + shapeText(found->shape)
                + "; the model needs " + shapeText(t.shape));
        const char* src = data + found->begin;
        for (std::size_t i = 0; i < t.size; ++i) {
            if (found->dtype == "F32") {
                float v = 0;
                std::memcpy(&v, src + 4 * i, 4);
                params[t.offset + i] = v;
            } else {
                double v = 0;
                std::memcpy(&v, src + 8 * i, 8);
                params[t.offset + i] = static_cast<float>(v);
            }
        }
    }
    for (const auto& e : entries) {
        const auto known = std::find_if(layout.tensors().begin(), layout.tensors().end(),
            [&](const ParameterLayout::Tensor& t) { return t.name == e.name; });
        if (known == layout.tensors().end())
            throw SgdError(what + ": has tensor \"" + e.name + "\", which this model does not have");
    }
    return params;
}

ParamVector readSafetensors(const std::string& path, const ParameterLayout& layout)
{
    const std::string bytes = readFile(path, "parameter file", 8ULL << 30);
    return decodeSafetensors(bytes, "parameter file '" + path + "'", layout);
}

} // namespace sgdscope
