#include "core/run/MemoryEstimate.h"

#include "core/engines/sim/SimCluster.h"
#include "core/metrics/RunRecorder.h"
#include "core/train/ReductionPlan.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sgdscope {

namespace {
// The simulated cluster's own memory, measured on the parabola (datacenter, P = 256 to 4,096, 2 to 6,144 updates):
// 16 kB per worker (an actor and its state); 300 bytes per sync worker step of a slice; per async push, 80 bytes
// kept by the run and 360 bytes until its slice reports (spans). (Sync's per step figure is 110 bytes at
// P = 1,024 and 560 at 4,096: 300 is within 25% of both runs' resident memory.)
constexpr double simWorkerBytes = 16.0 * 1024;
constexpr double simSyncStepBytes = 300.0;
constexpr double simPushBytes = 80.0;
constexpr double simSlicePushBytes = 360.0;
} // namespace

double modelMemoryBytes(
    const NetworkSpec& spec, const TrainerSettings& settings, int chunkSize, const MemoryShape& shape)
{
    double params = 0.0;
    double perSample = 0.0; // floats of one sample in a workspace: every layer's values and two layers' deltas
    double largestLayer = 0.0; // a layer's packed weights or strips, and a convolution's tree entries
    const std::vector<TensorShape> shapes = spec.shapes();
    if (spec.isMlp()) {
        const std::vector<int> widths = spec.widths();
        double sum = 0.0;
        double widest = 0.0;
        for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
            const double in = widths[l];
            const double out = widths[l + 1];
            params += in * out + out + 32; // with alignment padding
            largestLayer = std::max(largestLayer, (in + 64) * (out + 64));
        }
        for (const int w : widths) {
            sum += w;
            widest = std::max(widest, static_cast<double>(w));
        }
        perSample = sum + 3 * widest + 17.0 * static_cast<double>(widths.size());
    } else {
        double widest = 0.0;
        for (const TensorShape& t : shapes) {
            perSample += static_cast<double>(t.size()) + 17.0;
            widest = std::max(widest, static_cast<double>(t.size()) + 17.0);
        }
        perSample += 2 * widest;
        for (std::size_t l = 0; l < spec.layers.size(); ++l) {
            const LayerSpec& layer = spec.layers[l];
            const double in = static_cast<double>(shapes[l].size());
            if (layer.kind == LayerKind::Dense) {
                params += in * layer.outputs + layer.outputs + 32;
                largestLayer = std::max(largestLayer, (in + 64) * (layer.outputs + 64));
            } else if (layer.kind == LayerKind::Conv) {
                const double taps = static_cast<double>(shapes[l].channels) * layer.kernelHeight * layer.kernelWidth;
                const double weights = taps * layer.outputs + layer.outputs;
                params += weights + 32;
                // packed strips (64 positions) and the transposed weights; the weight gradient's entries (a tree of
                // 12 levels, a subtree's nodes), a sample's padded image and output gradient
                const double entries = (taps + 1) * (layer.outputs + 16) * (12 + 1 + 32);
                const double sample
                    = static_cast<double>(shapes[l].size()) * 2 + static_cast<double>(shapes[l + 1].size()) * 2;
                largestLayer = std::max(largestLayer,
                    64 * std::max(taps, layer.outputs * 1.0 * layer.kernelHeight * layer.kernelWidth) + weights
                        + entries + sample);
            }
        }
    }
    const int workers = std::max(1, settings.workers);
    const double p = workers;
    const int batch = std::max(1, settings.batch);
    const int chunk = std::max(1, std::min(chunkSize, batch));
    const int microBatches = std::max(1, settings.accum);
    const int passSamples = passSamplesFor(spec);
    // The reduction buffers are those of the plans the engines build. Sync: one plan over every worker's chunks
    // (every engine holds the whole plan's buffers; MPI's rank 0 also a receive buffer per other rank).
    const ChunkLayout layout(batch, chunk);
    const ReductionPlan syncPlan = ReductionPlan::build(layout, workers, microBatches, passSamples);
    const double syncBuffers = syncPlan.bufferCount;
    double mostRoots = 0.0;
    for (const WorkerReduction& w : syncPlan.workers)
        mostRoots = std::max(mostRoots, static_cast<double>(w.roots));
    // Async: one plan per push, over the worker's slice of the batch (the largest one).
    const int slice = (batch + workers - 1) / workers;
    const double pushBuffers
        = ReductionPlan::build(ChunkLayout(slice, std::min(chunk, slice)), 1, microBatches, passSamples).bufferCount;
    // A workspace holds a pass (at most passSamplesFor the model) of every layer's values and two layers of
    // deltas, rows padded, and the packed weights of its largest layer; the evaluator's, 256 samples.
    const double pass = std::min<double>(passSamples, batch);
    const double workspace = perSample * pass + largestLayer + perSample * 256; // training + evaluation
    // Workspaces: one per worker thread here; per machine thread for the simulated cluster (it computes the
    // workers' parts on this machine's cores); one in an MPI process.
    const double machineThreads = std::max(1, shape.machineThreads);
    const double computing = shape.engine == EngineKind::Threads ? p
        : shape.engine == EngineKind::Sim                        ? std::min(p, machineThreads)
                                                                 : 1.0;
    // MPI's rank 0 receives from every other rank at once into buffers of 64 KiB and the largest rank's roots and
    // chunk losses (MpiSyncTrainer::trainSome), in floats here.
    const double mpiSyncReceives = shape.engine == EngineKind::Mpi
        ? (p - 1) * (64.0 * 1024 / 4 + mostRoots * params + 2.0 * layout.chunkCount)
        : 0.0;
    const double sync = params * (3 + syncBuffers) + computing * workspace + mpiSyncReceives;
    // Async. Threads: every worker thread keeps a snapshot, its momentum and its push's reduction buffers. Sim:
    // every worker a snapshot, its momentum and its finished gradient, and each thread of the math the buffers of
    // the one it computes. MPI: the server keeps every worker's momentum and a receive buffer of the parameters'
    // size and 1 MiB; a worker its push's buffers.
    const double async = shape.engine == EngineKind::Threads
        ? params * (1 + p * (2 + pushBuffers)) + computing * workspace
        : shape.engine == EngineKind::Sim ? params * (1 + 3 * p + computing * pushBuffers) + computing * workspace
                                          : params * (1 + 2 * p + pushBuffers) + p * 1024.0 * 1024 / 4 + workspace;
    // dc-asgd's adaptive lambda: the server's mean square of the gradient; across MPI processes, the parameters
    // the server sent each worker.
    const double adaptive
        = (settings.dcAdaptive ? params : 0.0) + (shape.dcAsgd && shape.engine == EngineKind::Mpi ? p * params : 0.0);
    // Backup across MPI processes: the server's parameters, one copy per update until every worker took it (a
    // worker busy computing takes it late: about two updates' copies).
    const double backupCopies = shape.backup && shape.engine == EngineKind::Mpi ? 2 * params : 0.0;
    // Local SGD (threads): every worker its model, its momentum and its slice's reduction buffers.
    const double local = shape.localSgd ? params * (1 + p * (2 + pushBuffers)) + computing * workspace : 0.0;
    // The simulated cluster: SimGrid's actor per worker (its context and the stack pages it touches) and the
    // worker's bookkeeping; what a slice records until it reports (spans, pushes), for at most a slice's worker
    // steps; and per async push what the run keeps, for at most the recorder's points.
    double simulated = 0.0;
    if (shape.engine == EngineKind::Sim) {
        // Pushes, for async; the window trains until it is stopped (the caps hold).
        const double workerSteps = shape.sideBySide ? std::numeric_limits<double>::infinity()
                                                    : static_cast<double>(settings.sampleBudget) / batch * p;
        const double syncRecorded
            = std::min(workerSteps, std::max(static_cast<double>(simSyncWorkerStepsPerSlice), p)) * simSyncStepBytes;
        const double asyncRecorded
            = std::min(workerSteps, static_cast<double>(RunRecorder::defaultCapacity)) * simPushBytes
            + std::min(workerSteps, static_cast<double>(simAsyncPushesPerSlice)) * simSlicePushBytes;
        const double recorded[2] = {shape.sync ? syncRecorded : 0.0, shape.async ? asyncRecorded : 0.0};
        simulated = p * simWorkerBytes * (shape.sideBySide && shape.sync && shape.async ? 2 : 1)
            + (shape.sideBySide ? recorded[0] + recorded[1] : std::max(recorded[0], recorded[1]));
    }
    // Headless runs one mode after the other (the first one's trainer is gone when the second starts); the window
    // both at once.
    const double trainers[2]
        = {shape.sync ? std::max(sync + backupCopies, local) : 0.0, shape.async ? async + adaptive : 0.0};
    const double training = shape.sideBySide ? trainers[0] + trainers[1] : std::max(trainers[0], trainers[1]);
    return 4.0 * (training + 2 * params) + simulated;
}

} // namespace sgdscope
