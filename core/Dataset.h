#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sgdscope {

/// Samples in columns: inputs is features x N, so that one sample is one contiguous column.
/// Regression sets fill `targets` (outputs x N); classification sets fill `labels` (0 .. classes-1).
struct Dataset
{
    std::string name;
    Eigen::MatrixXf inputs;
    Eigen::MatrixXf targets;
    std::vector<std::int32_t> labels;
    int classes = 0;

    std::int64_t size() const { return inputs.cols(); }
    int features() const { return static_cast<int>(inputs.rows()); }
    bool isClassification() const { return classes > 0; }
    /// Output width a model needs: number of classes, or target columns.
    int outputWidth() const { return isClassification() ? classes : static_cast<int>(targets.rows()); }
    /// Keeps the first n samples (n <= size()).
    void truncate(std::int64_t n);
};

struct DataSplit
{
    Dataset train;
    std::optional<Dataset> test;
};

/// The seed example's data: y = x^2 at n points evenly spaced on [-2, 2] (computed in double, rounded to
/// float), one input and one target.
Dataset makeParabola(std::int64_t n);

/// Gaussian blobs: `classes` centres drawn from N(0, 1) in `features` dimensions, each sample its class
/// centre plus N(0, spread^2) noise; a seeded classification set with the work profile of a real one.
Dataset makeBlobs(std::int64_t n, int features, int classes, double spread, std::uint64_t seed);

struct CsvOptions
{
    enum class Header
    {
        Auto,
        Yes,
        No
    };
    Header header = Header::Auto;
    /// Target columns by 0-based index or by header name; empty means the last column.
    std::vector<std::string> targets;
    /// Cross-entropy: the one target column holds integer class labels 0..C-1.
    bool classification = false;
};

/// Loads a CSV file of numbers (comma separated; blank lines ignored). A malformed file is rejected with
/// SgdError naming the file, the line and column and what is wrong.
Dataset loadCsv(const std::string& path, const CsvOptions& options);
/// The same from text already in memory (`what` names it in messages).
Dataset parseCsv(const std::string& text, const std::string& what, const CsvOptions& options);

/// An IDX array (the MNIST file format): unsigned-byte data with its dimensions.
struct IdxArray
{
    std::vector<std::uint32_t> dims;
    std::vector<std::uint8_t> data;
};

/// Reads an IDX file of unsigned bytes, gzipped or plain (detected from the content). Rejects, with the
/// file name and byte offset, a wrong magic number, a type other than unsigned byte, a data size that does
/// not match the dimensions (truncated or trailing data), and gzip errors. `maxBytes` bounds the data.
IdxArray readIdx(const std::string& path, std::uint64_t maxBytes = 1ULL << 32);
/// The dimensions in an IDX file's header (gzipped or plain), reading nothing else; empty if unreadable.
std::vector<std::uint32_t> peekIdxDims(const std::string& path);
/// The same on bytes already in memory (plain or gzipped).
IdxArray parseIdx(const std::string& bytes, const std::string& what, std::uint64_t maxBytes = 1ULL << 32);

/// Builds a classification set from an images array (N x ...) and a labels array (N): pixels scaled to
/// [0, 1], classes = max label + 1 (at least 2).
Dataset idxToDataset(const IdxArray& images, const IdxArray& labels, const std::string& name,
    const std::string& imagesWhat, const std::string& labelsWhat);

/// Loads an MNIST-style folder: train-images-idx3-ubyte[.gz] and train-labels-idx1-ubyte[.gz], and the
/// t10k-* test files if present.
DataSplit loadIdxFolder(const std::string& folder, const std::string& name);

/// Where Debian's dataset-fashion-mnist package installs the data.
inline constexpr const char* debianFashionMnistFolder = "/usr/share/datasets/fashion-mnist";

} // namespace sgdscope
