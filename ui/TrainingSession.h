#pragma once

#include "ui/SessionData.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sgdscope {
struct DataSplit;
struct RunConfig;
} // namespace sgdscope

namespace sgdscope::ui {

/// Data sets loaded by earlier runs, so Reset does not reload Fashion-MNIST.
struct DataCache
{
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<const DataSplit>> sets;
    std::vector<std::string> order; // keys, the one used last at the end
};

/// What the GUI and one run's training thread share. The GUI sets stop, paused and pending settings; the
/// training thread appends to the staging buffer, which the GUI swaps out ~30 times a second (Controller).
struct SessionShared
{
    std::atomic<bool> stop {false};
    std::atomic<bool> paused {false};
    std::atomic<bool> finished {false};
    std::mutex mutex; // guards staging and pending
    std::condition_variable wake;
    MetricsBatch staging;
    std::optional<SessionSettings> pending;
};

/// The data set `config` names, loaded once and kept in `cache` (loads it if needed; throws SgdError).
std::shared_ptr<const DataSplit> cachedData(DataCache& cache, const RunConfig& config);
/// The same if it is loaded already, else nullptr.
std::shared_ptr<const DataSplit> findCachedData(DataCache& cache, const RunConfig& config);

/// The run configuration a window session trains: the preset, then the session's run options, then the
/// seed, workers, the columns' modes (--mode) and their knobs, and the engine, then the panel's batch and
/// micro-batches. The same ConfigBuilder as headless runs, so the same checks and messages; throws SgdError naming
/// the option.
RunConfig sessionConfig(const SessionSettings& settings);
/// The same without the panel's batch and micro-batches (the preset's stay): what the model and data are.
RunConfig sessionOptionsConfig(const SessionSettings& settings);

/// The first look before Start: loads the data (or takes it from the cache), draws the initial parameters
/// and evaluates them on the whole training set (and the test set), as both modes' evaluation at 0. A
/// problem is the batch's error.
/// `asHeadless`: the micro-batches are checked as a headless run checks them (the window's command line).
MetricsBatch previewSession(std::shared_ptr<DataCache> cache, SessionSettings settings, bool asHeadless = false);

/// The most workers the window offers on an engine: "threads" (its slider's end in the option table), "sim"
/// (1,024) or "mpi" (processes started by mpirun).
int maxWindowWorkers(const QString& engine);

/// The training thread's whole life: loads the data (or takes it from the cache), builds a trainer for each
/// column's mode, then alternates 40 ms slices of the two (each on its own clock, so neither takes cores from
/// the other) until stopped, applying pending settings between slices and marking each change.
/// Errors end up in the staging buffer as a message. Runs at a lower priority than the GUI thread.
void runTrainingSession(
    std::shared_ptr<SessionShared> shared, std::shared_ptr<DataCache> cache, SessionSettings settings);

} // namespace sgdscope::ui
