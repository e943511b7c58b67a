#pragma once

// The simulated cluster's async-like modes: a worker's state and a slice's, shared by the trainer's files
// (SimAsyncTrainer.cpp: the server's decisions, the math, the report; SimAsyncActors.cpp: the actors).

#include "core/engines/sim/SimAsyncTrainer.h"
#include "core/train/ChunkGradients.h"
#include "core/train/SspGate.h"

#include <simgrid/s4u.hpp>

#include <deque>
#include <exception>
#include <utility>
#include <vector>

namespace sgdscope {

/// A worker's state across slices, and its one push in flight.
struct SimAsyncTrainer::WorkerState
{
    explicit WorkerState(const DataOrder& order)
        : cursor(order)
    {
    }
    BatchCursor cursor;
    IndexRange slice; // its slice of every batch
    ParamVector velocity;
    std::int64_t pushes = 0;
    // The push in flight.
    bool assigned = false;
    bool computed = false;
    int count = 0;
    std::int64_t versionRead = 0;
    std::vector<std::uint32_t> indices;
    ParamVector snapshot;
    SliceReduction reduction; // of the push in flight (its buffers: a thread's scratch)
    double treeAdditions = 0.0; // of its plan: additions of one gradient into another
    ParamVector gradient; // of the push in flight, once computed
    double loss = 0.0;
    std::int64_t clockLead = -1; // ssp: of the push in flight
    double boundWait = -1.0; // ssp: how long the bound held it before the push in flight (virtual seconds)
};

struct SimAsyncTrainer::Slice
{
    int workers = 0;
    std::int64_t pushesLeft = 0;
    double deadline = 0.0; // virtual clock after which no push starts (a time-limited slice, the window's)
    bool stopped = false; // diverged, target reached or asked to stop: no new pushes
    std::int64_t samplesApplied = 0; // by the run, after the latest applied push
    double modeBase = 0.0; // the mode's clock = virtual clock + modeBase
    std::vector<std::pair<std::size_t, EvaluationRecord>> evaluations; // after push i (index into pushes)
    double sliceStart = 0.0;
    std::deque<std::pair<int, double>> ready; // gradients at the server: (worker, when its upload ended)
    simgrid::s4u::SemaphorePtr readySignal;
    std::vector<simgrid::s4u::SemaphorePtr> wake; // per worker: the server has answered
    std::vector<double> answered; // per worker: when the server started sending the parameters
    // ssp: the workers' clocks and those the bound holds back; per worker since when it is held and who released it.
    SspGate ssp;
    std::vector<double> heldFrom;
    std::vector<int> releasedBy;
    int active = 0; // workers with a push in flight
    std::int64_t version = 0; // updates applied so far (the run's), the server's version counter
    std::vector<UpdateEvent> pushes; // in apply order, each at the virtual time it was applied
    std::vector<std::vector<Span>> spans; // per worker
    std::vector<double> exitAt; // per worker: when it left the slice
    double end = 0.0;
    std::exception_ptr failure;
};

} // namespace sgdscope
