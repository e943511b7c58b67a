#include "core/data/IdxLoader.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/common/MemoryBudget.h"
#include "core/io/Files.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>

namespace sgdscope {

namespace {

/// Streams bytes from memory, inflating gzip when the data starts with the gzip magic.
class ByteSource
{
public:
    ByteSource(const std::string& bytes, const std::string& what)
        : m_bytes(bytes)
        , m_what(what)
    {
        m_gzip = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f
            && static_cast<unsigned char>(bytes[1]) == 0x8b;
        if (m_gzip) {
            refill();
            if (inflateInit2(&m_stream, 16 + MAX_WBITS) != Z_OK)
                throw SgdError(m_what + ": cannot start gzip decompression");
            m_initialised = true;
        }
    }
    ~ByteSource()
    {
        if (m_initialised)
            inflateEnd(&m_stream);
    }
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    /// Reads up to n bytes into out; returns how many were read (fewer only at the end of the data).
    std::size_t read(std::uint8_t* out, std::size_t n)
    {
        if (!m_gzip) {
            const std::size_t take = std::min(n, m_bytes.size() - m_plainPos);
            std::copy_n(m_bytes.data() + m_plainPos, take, out);
            m_plainPos += take;
            m_offset += take;
            return take;
        }
        std::size_t done = 0;
        while (done < n && !m_ended) {
            throwIfCancelled("reading an IDX file");
            refill();
            m_stream.next_out = out + done;
            m_stream.avail_out = static_cast<uInt>(std::min<std::size_t>(n - done, 1U << 22)); // 4 MB at a time
            const int rc = inflate(&m_stream, Z_NO_FLUSH);
            done = static_cast<std::size_t>(m_stream.next_out - out);
            if (rc == Z_STREAM_END) {
                m_ended = true;
            } else if (rc == Z_BUF_ERROR && m_stream.avail_in == 0 && m_inPos == m_bytes.size()) {
                throw SgdError(m_what + ": gzip data is truncated (ends after " + std::to_string(m_offset + done)
                    + " decompressed bytes)");
            } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                throw SgdError(m_what + ": gzip data is corrupt after " + std::to_string(m_offset + done)
                    + " decompressed bytes (" + (m_stream.msg ? m_stream.msg : "zlib error") + ")");
            }
        }
        m_offset += done;
        return done;
    }

    /// True if there is no byte left (and, for gzip, the stream ended with a valid checksum and nothing
    /// follows it).
    bool atEnd()
    {
        std::uint8_t probe = 0;
        if (read(&probe, 1) != 0)
            return false;
        return !m_gzip || (m_stream.avail_in == 0 && m_inPos == m_bytes.size());
    }

    std::uint64_t offset() const { return m_offset; }
    bool gzip() const { return m_gzip; }

private:
    /// zlib takes at most 4 GiB of input per call: feed it in pieces.
    void refill()
    {
        if (m_stream.avail_in > 0 || m_inPos >= m_bytes.size())
            return;
        const std::size_t take = std::min<std::size_t>(m_bytes.size() - m_inPos, 1U << 30);
        m_stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(m_bytes.data() + m_inPos));
        m_stream.avail_in = static_cast<uInt>(take);
        m_inPos += take;
    }

    const std::string& m_bytes;
    const std::string& m_what;
    z_stream m_stream {};
    bool m_gzip = false;
    bool m_initialised = false;
    bool m_ended = false;
    std::size_t m_plainPos = 0;
    std::size_t m_inPos = 0;
    std::uint64_t m_offset = 0;
};

} // namespace

IdxArray parseIdx(const std::string& bytes, const std::string& what, std::uint64_t maxBytes)
{
    if (bytes.empty())
        throw SgdError(what + ": the file is empty");
    ByteSource source(bytes, what);
    std::uint8_t magic[4];
    if (source.read(magic, 4) != 4)
        throw SgdError(what + ": truncated at byte " + std::to_string(source.offset())
            + ": an IDX file starts with a 4-byte magic number");
    if (magic[0] != 0 || magic[1] != 0)
        throw SgdError(what + ": wrong magic number at byte 0: this is not an IDX file (expected bytes 00 00 08 nn)");
    if (magic[2] != 0x08) {
        static const char* hex = "0123456789abcdef";
        throw SgdError(what + ": byte 2 is data type 0x" + hex[magic[2] >> 4] + hex[magic[2] & 15]
            + "; only unsigned bytes (0x08) are supported");
    }
    const int ndims = magic[3];
    if (ndims < 1 || ndims > 4)
        throw SgdError(what + ": byte 3 says " + std::to_string(ndims) + " dimensions; 1 to 4 are supported");
    IdxArray array;
    std::uint64_t total = 1;
    for (int i = 0; i < ndims; ++i) {
        std::uint8_t b[4];
        if (source.read(b, 4) != 4)
            throw SgdError(what + ": truncated at byte " + std::to_string(source.offset())
                + " in the size of dimension " + std::to_string(i + 1) + " of " + std::to_string(ndims));
        const std::uint32_t dim = (static_cast<std::uint32_t>(b[0]) << 24) | (static_cast<std::uint32_t>(b[1]) << 16)
            | (static_cast<std::uint32_t>(b[2]) << 8) | static_cast<std::uint32_t>(b[3]);
        if (dim == 0)
            throw SgdError(what + ": dimension " + std::to_string(i + 1) + " (byte " + std::to_string(4 + 4 * i)
                + ") is 0; an IDX array needs at least one element");
        array.dims.push_back(dim);
        total *= dim;
        if (total > maxBytes)
            throw SgdError(what + ": the dimensions announce more than " + std::to_string(maxBytes)
                + " bytes of data, more than is allowed");
    }
    const std::uint64_t headerBytes = 4 + 4 * static_cast<std::uint64_t>(ndims);
    // For a plain file the size is known up front: say exactly how much is missing or extra.
    if (!source.gzip() && bytes.size() != headerBytes + total) {
        if (bytes.size() < headerBytes + total)
            throw SgdError(what + ": truncated: the header announces " + std::to_string(total)
                + " data bytes but the file ends at byte " + std::to_string(bytes.size()));
        throw SgdError(what + ": " + std::to_string(bytes.size() - headerBytes - total)
            + " unexpected bytes after the data, from byte " + std::to_string(headerBytes + total)
            + " (the header announces " + std::to_string(total) + " data bytes)");
    }
    array.data.resize(static_cast<std::size_t>(total));
    const std::size_t got = source.read(array.data.data(), array.data.size());
    if (got != array.data.size())
        throw SgdError(what + ": truncated: the header announces " + std::to_string(total)
            + " data bytes but the data ends at byte " + std::to_string(headerBytes + got) + " (decompressed)");
    if (!source.atEnd())
        throw SgdError(what + ": unexpected data after byte " + std::to_string(headerBytes + total)
            + " (the header announces " + std::to_string(total) + " data bytes)");
    return array;
}

std::vector<std::uint32_t> peekIdxDims(const std::string& path)
{
    // zlib reads gzip and plain files alike; only the header is read.
    gzFile file = gzopen(path.c_str(), "rb");
    if (!file)
        return {};
    unsigned char header[4 + 4 * 4] = {};
    const int got = gzread(file, header, sizeof header);
    gzclose(file);
    if (got < 8 || header[0] != 0 || header[1] != 0 || header[3] < 1 || header[3] > 4 || got < 4 + 4 * header[3])
        return {};
    std::vector<std::uint32_t> dims;
    for (int i = 0; i < header[3]; ++i) {
        const unsigned char* b = header + 4 + 4 * i;
        dims.push_back((static_cast<std::uint32_t>(b[0]) << 24) | (static_cast<std::uint32_t>(b[1]) << 16)
            | (static_cast<std::uint32_t>(b[2]) << 8) | static_cast<std::uint32_t>(b[3]));
    }
    return dims;
}

IdxArray readIdx(const std::string& path, std::uint64_t maxBytes)
{
    const std::string bytes = readFile(path, "IDX file", maxBytes + (1U << 20));
    return parseIdx(bytes, "IDX file '" + path + "'", maxBytes);
}

Dataset idxToDataset(const IdxArray& images, const IdxArray& labels, const std::string& name,
    const std::string& imagesWhat, const std::string& labelsWhat)
{
    if (images.dims.size() < 2)
        throw SgdError(imagesWhat + ": has " + std::to_string(images.dims.size())
            + " dimension; an images file needs at least 2 (count, pixels...)");
    if (labels.dims.size() != 1)
        throw SgdError(labelsWhat + ": has " + std::to_string(labels.dims.size())
            + " dimensions; a labels file has exactly 1 (count)");
    if (labels.dims[0] != images.dims[0])
        throw SgdError(labelsWhat + ": holds " + std::to_string(labels.dims[0]) + " labels but " + imagesWhat
            + " holds " + std::to_string(images.dims[0]) + " images; the counts must match");
    const std::size_t n = images.dims[0];
    const std::size_t pixels = images.data.size() / n;
    Dataset d;
    d.name = name;
    d.inputs.resize(static_cast<Eigen::Index>(pixels), static_cast<Eigen::Index>(n));
    constexpr float scale = 1.0f / 255.0f;
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 4096 == 0)
            throwIfCancelled("converting images");
        const std::uint8_t* src = images.data.data() + i * pixels;
        float* dst = d.inputs.col(static_cast<Eigen::Index>(i)).data();
        for (std::size_t p = 0; p < pixels; ++p)
            dst[p] = static_cast<float>(src[p]) * scale;
    }
    if (images.dims.size() == 3)
        d.imageShape = {1, static_cast<int>(images.dims[1]), static_cast<int>(images.dims[2])};
    d.labels.assign(labels.data.begin(), labels.data.end());
    const int maxLabel = *std::max_element(labels.data.begin(), labels.data.end());
    d.classes = std::max(2, maxLabel + 1);
    return d;
}

DataSplit loadIdxFolder(const std::string& folder, const std::string& name)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw SgdError("data folder '" + folder + "' does not exist or is not a folder");
    auto find = [&](const std::string& stem) -> std::string {
        for (const char* suffix : {".gz", ""}) {
            const fs::path p = fs::path(folder) / (stem + suffix);
            if (fs::exists(p, ec))
                return p.string();
        }
        return {};
    };
    const std::string trainImages = find("train-images-idx3-ubyte");
    const std::string trainLabels = find("train-labels-idx1-ubyte");
    if (trainImages.empty() || trainLabels.empty())
        throw SgdError("data folder '" + folder
            + "' has no train-images-idx3-ubyte[.gz] and train-labels-idx1-ubyte[.gz] (an MNIST-style set)");
    // Refuse a set larger than memory from its header, before reading it: the bytes and their floats.
    double needed = 0.0;
    for (const std::string& path : {trainImages, find("t10k-images-idx3-ubyte")}) {
        if (path.empty())
            continue;
        double elements = 1.0;
        for (const auto d : peekIdxDims(path))
            elements *= d;
        needed += 5.0 * elements + static_cast<double>(std::filesystem::file_size(path, ec));
    }
    requireMemory(needed, "--data", "the data set in '" + folder + "'", "Use a smaller data set.");
    DataSplit split;
    auto load = [&](const std::string& images, const std::string& labels, const std::string& part) {
        const IdxArray x = readIdx(images);
        const IdxArray y = readIdx(labels);
        return idxToDataset(x, y, name + " " + part, "IDX file '" + images + "'", "IDX file '" + labels + "'");
    };
    split.train = load(trainImages, trainLabels, "train");
    const std::string testImages = find("t10k-images-idx3-ubyte");
    const std::string testLabels = find("t10k-labels-idx1-ubyte");
    if (!testImages.empty() && !testLabels.empty()) {
        split.test = load(testImages, testLabels, "test");
        if (split.test->features() != split.train.features())
            throw SgdError("IDX file '" + testImages + "': images have " + std::to_string(split.test->features())
                + " pixels, the training images " + std::to_string(split.train.features()));
        split.test->classes = std::max(split.test->classes, split.train.classes);
        split.train.classes = split.test->classes;
    }
    return split;
}

} // namespace sgdscope
