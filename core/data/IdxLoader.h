#pragma once

#include "core/data/Dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sgdscope {

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
/// [0, 1], classes = max label + 1 (at least 2); an array of N x rows x columns gives images of one channel.
Dataset idxToDataset(const IdxArray& images, const IdxArray& labels, const std::string& name,
    const std::string& imagesWhat, const std::string& labelsWhat);

/// Loads an MNIST-style folder: train-images-idx3-ubyte[.gz] and train-labels-idx1-ubyte[.gz], and the
/// t10k-* test files if present.
DataSplit loadIdxFolder(const std::string& folder, const std::string& name);

/// Where Debian's dataset-fashion-mnist package installs the data.
inline constexpr const char* debianFashionMnistFolder = "/usr/share/datasets/fashion-mnist";

} // namespace sgdscope
