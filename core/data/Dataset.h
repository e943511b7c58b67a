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
    /// Each sample's features read as an image, {channels, height, width} channel-major (IDX image files:
    /// one channel of rows x columns); empty when the features are no image.
    std::vector<int> imageShape;

    std::int64_t size() const { return inputs.cols(); }
    int features() const { return static_cast<int>(inputs.rows()); }
    bool isClassification() const { return classes > 0; }
    /// Output width a model needs: number of classes, or target columns.
    int outputWidth() const { return isClassification() ? classes : static_cast<int>(targets.rows()); }
    /// Keeps the first n samples (n <= size()).
    void truncate(std::int64_t n);
};

/// Whether a regression set's one target column holds what class labels look like: whole numbers from 0 up (to at
/// most 255) of which at least 2, and at least half of 0 .. the largest, occur, each on several samples on average
/// (scikit-learn's digits: 10 classes 0 to 9 over 1,797 samples). Returns the class count (largest + 1), or 0 when
/// the column does not look like labels (real values, a few squares, a constant). `distinct` gets the count of values.
int classesInTargets(const Dataset& data, int* distinct = nullptr);
/// The same samples with their one target column as class labels 0 .. classes - 1 (classesInTargets said so).
Dataset withTargetsAsClasses(const Dataset& data, int classes);

struct DataSplit
{
    Dataset train;
    std::optional<Dataset> test;
};

} // namespace sgdscope
