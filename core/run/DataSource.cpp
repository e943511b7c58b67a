#include "core/run/DataSource.h"

#include "core/common/Error.h"
#include "core/common/MemoryBudget.h"
#include "core/data/CsvLoader.h"
#include "core/data/GeneratedData.h"
#include "core/data/IdxLoader.h"

#include <cstdlib>
#include <filesystem>

namespace sgdscope {

namespace {
constexpr std::int64_t defaultParabolaPoints = 50;
constexpr std::int64_t defaultBlobsSamples = 16384;
constexpr int blobsFeatures = 64;
constexpr int blobsClasses = 10;
constexpr double blobsSpread = 1.5;
} // namespace

DataSplit loadData(const RunConfig& c)
{
    DataSplit split;
    const bool classification = c.loss == LossKind::SoftmaxCrossEntropy;
    if (c.dataset == DatasetKind::Parabola) {
        requireMemory(8.0 * static_cast<double>(c.samples), "--samples",
            "the parabola of " + std::to_string(c.samples) + " points", "Use fewer points.");
        split.train = makeParabola(c.samples > 0 ? c.samples : defaultParabolaPoints);
    } else if (c.dataset == DatasetKind::Blobs) {
        requireMemory(
            4.0 * 1.2 * static_cast<double>(c.samples > 0 ? c.samples : defaultBlobsSamples) * (blobsFeatures + 1),
            "--samples",
            "the blobs data set of " + std::to_string(c.samples > 0 ? c.samples : defaultBlobsSamples) + " samples",
            "Use fewer samples.");
        // One draw of n training and n/8 test samples around the same centres.
        const std::int64_t n = c.samples > 0 ? c.samples : defaultBlobsSamples;
        const std::int64_t testN = std::max<std::int64_t>(1, n / 8);
        Dataset all = makeBlobs(n + testN, blobsFeatures, blobsClasses, blobsSpread, c.seed);
        Dataset test = all;
        test.name = "blobs test";
        test.inputs = all.inputs.rightCols(testN).eval();
        test.labels.erase(test.labels.begin(), test.labels.begin() + n);
        all.truncate(n);
        split.train = std::move(all);
        split.test = std::move(test);
    } else if (c.dataset == DatasetKind::FashionMnist || c.dataset == DatasetKind::Idx) {
        std::string folder = c.data;
        if (folder.empty() && c.dataset == DatasetKind::Idx)
            throw SgdError("--data: dataset 'idx' needs --data FOLDER (a folder of MNIST-style IDX files)");
        if (folder.empty()) {
            const char* override = std::getenv("SGDSCOPE_FASHION_MNIST_DIR");
            folder = override && *override ? override : debianFashionMnistFolder;
            std::error_code ec;
            if (!std::filesystem::exists(std::filesystem::path(folder) / "train-images-idx3-ubyte.gz", ec))
                throw SgdError("--dataset fashion-mnist: the data set is not installed (no " + folder
                    + "/train-images-idx3-ubyte.gz); install Debian's package dataset-fashion-mnist "
                      "(apt-get install dataset-fashion-mnist) or give --data FOLDER");
        }
        split = loadIdxFolder(folder, toString(c.dataset));
    } else if (c.dataset == DatasetKind::Csv) {
        if (c.data.empty())
            throw SgdError("--data: dataset 'csv' needs --data FILE (a CSV file of numbers)");
        CsvOptions options;
        options.header = c.csvHeader;
        options.targets = c.targets;
        options.classification = classification;
        std::error_code ec;
        const auto fileSize = std::filesystem::file_size(c.data, ec);
        if (!ec)
            requireMemory(3.0 * static_cast<double>(fileSize), "--data",
                "CSV file '" + c.data + "' (" + formatBytes(static_cast<double>(fileSize)) + ")",
                "Use a smaller file.");
        split.train = loadCsv(c.data, options);
    }
    if (c.samples > 0 && !isGenerated(c.dataset)) {
        if (c.samples > split.train.size())
            throw SgdError("--samples: " + std::to_string(c.samples) + " is more than the "
                + std::to_string(split.train.size()) + " training samples of " + toString(c.dataset));
        split.train.truncate(c.samples);
    }
    return split;
}

std::int64_t trainingSetSize(const RunConfig& c)
{
    std::int64_t n = 0;
    if (c.dataset == DatasetKind::Parabola) {
        n = c.samples > 0 ? c.samples : defaultParabolaPoints;
    } else if (c.dataset == DatasetKind::Blobs) {
        n = c.samples > 0 ? c.samples : defaultBlobsSamples;
    } else if (c.dataset == DatasetKind::FashionMnist || c.dataset == DatasetKind::Idx) {
        const std::string folder = c.data.empty() ? std::string(debianFashionMnistFolder) : c.data;
        for (const char* name : {"train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte"}) {
            const std::string path = (std::filesystem::path(folder) / name).string();
            std::error_code ec;
            if (!std::filesystem::exists(path, ec))
                continue;
            try {
                n = static_cast<std::int64_t>(readIdx(path, 1 << 24).dims.front()); // a labels file is small
            } catch (const SgdError&) {
                n = 0;
            }
            break;
        }
        if (c.samples > 0 && n > 0)
            n = std::min(n, c.samples);
    }
    return n;
}

} // namespace sgdscope
