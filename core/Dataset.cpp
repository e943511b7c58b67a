#include "core/Dataset.h"

#include "core/Cancellation.h"
#include "core/Error.h"
#include "core/FileUtil.h"
#include "core/MemoryBudget.h"
#include "core/Rng.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

namespace sgdscope {

void throwIfCancelled(const char* during)
{
    if (cancellationRequested())
        throw SgdError(std::string("interrupted while ") + during);
}

void Dataset::truncate(std::int64_t n)
{
    inputs.conservativeResize(Eigen::NoChange, n);
    if (targets.size() > 0)
        targets.conservativeResize(Eigen::NoChange, n);
    if (!labels.empty())
        labels.resize(static_cast<std::size_t>(n));
}

Dataset makeParabola(std::int64_t n)
{
    Dataset d;
    d.name = "parabola";
    d.inputs.resize(1, n);
    d.targets.resize(1, n);
    for (std::int64_t i = 0; i < n; ++i) {
        const double x = n == 1 ? 0.0 : -2.0 + 4.0 * static_cast<double>(i) / static_cast<double>(n - 1);
        const auto xf = static_cast<float>(x);
        d.inputs(0, i) = xf;
        d.targets(0, i) = xf * xf; // y = x^2 of the float input, as the seed example computes it
    }
    return d;
}

Dataset makeBlobs(std::int64_t n, int features, int classes, double spread, std::uint64_t seed)
{
    Rng rng(mixSeed(seed, 0xB10B5ULL));
    Eigen::MatrixXd centres(features, classes);
    for (Eigen::Index i = 0; i < centres.size(); ++i)
        centres.data()[i] = rng.normal();
    Dataset d;
    d.name = "blobs";
    d.classes = classes;
    d.inputs.resize(features, n);
    d.labels.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const auto label = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(classes)));
        d.labels[static_cast<std::size_t>(i)] = label;
        for (int f = 0; f < features; ++f)
            d.inputs(f, i) = static_cast<float>(centres(f, label) + spread * rng.normal());
    }
    return d;
}

// ------------------------------------------------------------------------------------------------ CSV

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

bool parseFloat(std::string_view s, double& value)
{
    if (!s.empty() && s.front() == '+')
        s.remove_prefix(1);
    if (s.empty())
        return false;
    const auto result = std::from_chars(s.data(), s.data() + s.size(), value);
    return result.ec == std::errc() && result.ptr == s.data() + s.size();
}

std::string quoted(std::string_view s)
{
    std::string out = "'";
    for (const char c : s.substr(0, 40)) {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 || u >= 0x7f) ? '?' : c;
    }
    if (s.size() > 40)
        out += "...";
    return out + "'";
}

} // namespace

namespace {

/// Calls f(lineNumber, fields) for every non-blank line; `fields` is reused, so memory stays at one line.
template<typename F>
void forEachCsvLine(const std::string& text, F&& f)
{
    std::vector<std::string_view> fields;
    std::size_t lineNumber = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        ++lineNumber;
        const std::string_view line = trim(std::string_view(text).substr(pos, end - pos));
        pos = end + 1;
        if (line.empty())
            continue;
        fields.clear();
        std::size_t start = 0;
        while (true) {
            const std::size_t comma = line.find(',', start);
            fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
            if (comma == std::string_view::npos)
                break;
            start = comma + 1;
        }
        if (lineNumber % 16384 == 0)
            throwIfCancelled("reading a CSV file");
        if (!f(lineNumber, fields))
            return;
    }
}

} // namespace

Dataset parseCsv(const std::string& text, const std::string& what, const CsvOptions& options)
{
    // First pass: the shape (and the header); the second parses the numbers straight into the matrix, so
    // memory is the text plus the data, never a copy of every field.
    std::size_t columns = 0;
    std::size_t firstLine = 0;
    std::size_t rows = 0;
    bool hasHeader = options.header == CsvOptions::Header::Yes;
    std::vector<std::string> names;
    forEachCsvLine(text, [&](std::size_t number, const std::vector<std::string_view>& fields) {
        if (columns == 0) {
            columns = fields.size();
            firstLine = number;
            if (options.header == CsvOptions::Header::Auto) {
                double ignored = 0;
                for (const auto field : fields)
                    hasHeader = hasHeader || !parseFloat(field, ignored);
            }
            if (hasHeader) {
                for (const auto field : fields)
                    names.emplace_back(field);
                return true;
            }
        }
        if (fields.size() != columns)
            throw SgdError(what + ", line " + std::to_string(number) + ": has " + std::to_string(fields.size())
                + " fields, expected " + std::to_string(columns) + " as on line " + std::to_string(firstLine));
        ++rows;
        return true;
    });
    if (columns == 0)
        throw SgdError(what + ": the file is empty (no data rows)");
    if (rows == 0)
        throw SgdError(what + ": has a header line but no data rows");
    if (columns < 2)
        throw SgdError(what + ", line " + std::to_string(firstLine) + ": found " + std::to_string(columns)
            + " column; at least 2 are needed (inputs and a target)");

    // Which columns are targets.
    std::vector<std::size_t> targetColumns;
    if (options.targets.empty()) {
        targetColumns.push_back(columns - 1);
    } else {
        for (const auto& t : options.targets) {
            std::size_t index = 0;
            const auto byName = std::find(names.begin(), names.end(), t);
            if (byName != names.end()) {
                index = static_cast<std::size_t>(byName - names.begin());
            } else {
                const auto result = std::from_chars(t.data(), t.data() + t.size(), index);
                if (result.ec != std::errc() || result.ptr != t.data() + t.size())
                    throw SgdError("--targets: '" + t + "' is neither a column name in the header of " + what
                        + " nor a column index");
                if (index >= columns)
                    throw SgdError("--targets: column " + t + " does not exist; " + what + " has columns 0 to "
                        + std::to_string(columns - 1));
            }
            if (std::find(targetColumns.begin(), targetColumns.end(), index) != targetColumns.end())
                throw SgdError("--targets: column '" + t + "' is named twice");
            targetColumns.push_back(index);
        }
    }
    if (targetColumns.size() >= columns)
        throw SgdError("--targets: every column is a target; at least one input column is needed");
    if (options.classification && targetColumns.size() != 1)
        throw SgdError("--targets: cross-entropy needs exactly one target column of class labels, got "
            + std::to_string(targetColumns.size()));

    std::vector<int> role(columns, -1); // -1: input; else the target's index
    for (std::size_t t = 0; t < targetColumns.size(); ++t)
        role[targetColumns[t]] = static_cast<int>(t);
    const auto features = static_cast<Eigen::Index>(columns - targetColumns.size());

    Dataset d;
    d.name = what;
    d.inputs.resize(features, static_cast<Eigen::Index>(rows));
    if (options.classification)
        d.labels.resize(rows);
    else
        d.targets.resize(static_cast<Eigen::Index>(targetColumns.size()), static_cast<Eigen::Index>(rows));

    std::int32_t maxLabel = 0;
    Eigen::Index row = 0;
    bool skippedHeader = !hasHeader;
    forEachCsvLine(text, [&](std::size_t number, const std::vector<std::string_view>& fields) {
        if (!skippedHeader) {
            skippedHeader = true;
            return true;
        }
        Eigen::Index feature = 0;
        for (std::size_t c = 0; c < columns; ++c) {
            double value = 0.0;
            if (!parseFloat(fields[c], value) || !std::isfinite(value)
                || std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max()))
                throw SgdError(what + ", line " + std::to_string(number) + ", column " + std::to_string(c + 1) + ": "
                    + quoted(fields[c]) + " is not a finite number");
            if (role[c] < 0) {
                d.inputs(feature++, row) = static_cast<float>(value);
            } else if (options.classification) {
                if (value < 0 || value != std::floor(value) || value > 100000)
                    throw SgdError(what + ", line " + std::to_string(number) + ", column " + std::to_string(c + 1)
                        + ": " + quoted(fields[c]) + " is not a class label (an integer from 0 to 100000)");
                const auto label = static_cast<std::int32_t>(value);
                d.labels[static_cast<std::size_t>(row)] = label;
                maxLabel = std::max(maxLabel, label);
            } else {
                d.targets(role[c], row) = static_cast<float>(value);
            }
        }
        ++row;
        return true;
    });
    if (options.classification)
        d.classes = std::max(2, maxLabel + 1);
    return d;
}

Dataset loadCsv(const std::string& path, const CsvOptions& options)
{
    const std::string text = readFile(path, "CSV file");
    return parseCsv(text, "CSV file '" + path + "'", options);
}

// ------------------------------------------------------------------------------------------------ IDX

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
