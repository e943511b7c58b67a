#include "core/io/Safetensors.h"

#include "core/common/Error.h"
#include "core/io/Files.h"
#include "core/io/Json.h"

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
            meta.set(key, Json(value));
        header.set("__metadata__", meta);
    }
    std::uint64_t offset = 0;
    for (const auto& t : layout.tensors()) {
        Json entry = Json::object();
        entry.set("dtype", "F32");
        Json shape = Json::array();
        for (const auto d : t.shape)
            shape.push(Json(d));
        entry.set("shape", shape);
        const std::uint64_t bytes = t.size * sizeof(float);
        entry.set("data_offsets", Json(Json::Array {Json(offset), Json(offset + bytes)}));
        offset += bytes;
        header.set(t.name, entry);
    }
    std::string text = header.dump(-1);
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
    const Json header = Json::parse(std::string_view(bytes).substr(8, headerLength), what + " header");
    if (!header.isObject())
        throw SgdError(what + ": the header is " + header.typeName() + ", not a JSON object");
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
    for (const auto& [name, value] : header.asObject()) {
        if (name == "__metadata__") {
            if (!value.isObject())
                throw SgdError(what + ": __metadata__ is " + value.typeName() + ", not an object");
            for (const auto& [key, meta] : value.asObject()) {
                if (!meta.isString())
                    throw SgdError(what + ": __metadata__ value of \"" + key + "\" is " + meta.typeName()
                        + "; metadata values must be strings");
            }
            continue;
        }
        if (!value.isObject())
            throw SgdError(what + ": tensor \"" + name + "\" is " + value.typeName() + ", not an object");
        Entry e;
        e.name = name;
        const Json* dtype = value.find("dtype");
        const Json* shape = value.find("shape");
        const Json* offsets = value.find("data_offsets");
        if (!dtype || !dtype->isString())
            throw SgdError(what + ": tensor \"" + name + "\" has no dtype string");
        e.dtype = dtype->asString();
        if (e.dtype != "F32" && e.dtype != "F64")
            throw SgdError(what + ": tensor \"" + name + "\" has dtype " + e.dtype + "; F32 and F64 are supported");
        if (!shape || !shape->isArray())
            throw SgdError(what + ": tensor \"" + name + "\" has no shape array");
        std::uint64_t elements = 1;
        for (const auto& d : shape->asArray()) {
            if (!d.isNumber() || d.asNumber() < 0 || d.asNumber() != std::floor(d.asNumber()) || d.asNumber() > 1e12)
                throw SgdError(what + ": tensor \"" + name + "\" has a shape entry that is not a non-negative integer");
            const auto dim = static_cast<std::uint64_t>(d.asNumber());
            e.shape.push_back(static_cast<std::int64_t>(dim));
            if (dim != 0 && elements > (1ULL << 40) / dim)
                throw SgdError(what + ": tensor \"" + name + "\" has an impossibly large shape");
            elements *= dim;
        }
        if (!offsets || !offsets->isArray() || offsets->asArray().size() != 2)
            throw SgdError(what + ": tensor \"" + name + "\" has no data_offsets [begin, end]");
        for (const auto& o : offsets->asArray()) {
            if (!o.isNumber() || o.asNumber() < 0 || o.asNumber() != std::floor(o.asNumber()) || o.asNumber() > 1e15)
                throw SgdError(what + ": tensor \"" + name + "\" has a data offset that is not a non-negative integer");
        }
        e.begin = static_cast<std::uint64_t>(offsets->asArray()[0].asNumber());
        e.end = static_cast<std::uint64_t>(offsets->asArray()[1].asNumber());
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
