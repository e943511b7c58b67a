#include "core/engines/sim/SimAsyncTrainer.h"

#include "core/engines/sim/SimAsyncState.h"
#include "core/train/UpdateRule.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sgdscope {

namespace sg4 = simgrid::s4u;

// The slice in virtual time: the parameter server and the workers as SimGrid actors on their hosts.

void SimAsyncTrainer::simulate(Slice& slice)
{
    const int workers = slice.workers;
    const std::vector<sg4::Host*> hosts = SimWorld::get().place(workers, true);
    sg4::Host* serverHost = hosts[static_cast<std::size_t>(workers)];
    slice.readySignal = sg4::Semaphore::create(0);
    for (int w = 0; w < workers; ++w)
        slice.wake.push_back(sg4::Semaphore::create(0));
    slice.answered.assign(static_cast<std::size_t>(workers), slice.sliceStart);
    slice.spans.resize(static_cast<std::size_t>(workers));
    for (auto& w : slice.spans)
        w.clear();
    // Room for what the slice records when the run's sample budget bounds it (the window's time-limited slices
    // make far fewer pushes than their cap): growing these vectors copied them over and over at thousands of
    // workers.
    if (m_settings.sampleBudget != std::numeric_limits<std::int64_t>::max()) {
        const std::int64_t perPush = std::max(1, m_settings.batch / workers);
        const std::int64_t budgetPushes = (m_settings.sampleBudget - m_claimedSamples) / perPush + workers;
        const auto expected
            = static_cast<std::size_t>(std::max<std::int64_t>(0, std::min(slice.pushesLeft, budgetPushes)));
        slice.pushes.reserve(expected);
        for (auto& spans : slice.spans) // read, network, compute, delay, upload
            spans.reserve(5 * (expected / static_cast<std::size_t>(workers) + 1));
    }
    slice.exitAt.assign(static_cast<std::size_t>(workers), slice.sliceStart);
    const bool momentum = m_settings.momentum != 0.0;
    // dc-asgd: the compensation, about 5 flops per parameter over the gradient, the parameters and the snapshot.
    const double parameters = static_cast<double>(m_params.size());
    const double compensationFlops = m_compensation.active() ? 5.0 * parameters : 0.0;
    const double compensationBytes = m_compensation.active() ? 16.0 * parameters : 0.0;
    // local-mpi: the server also copies the gradient out of its message and the parameters into its answer.
    const double applyFlops = SimWorld::get().memoryWork(m_cost.applyFlops(momentum) + compensationFlops,
                                  m_cost.applyBytes(momentum) + compensationBytes)
        + 2.0 * SimWorld::get().messageCopyWork(m_cost.copyBytes());
    const double packWork = SimWorld::get().messageCopyWork(m_cost.copyBytes()); // local-mpi: the push's message
    // local: a worker copies the parameters in memory (as the threads engine's do) instead of receiving them.
    const double copyWork = SimWorld::get().stepsMeasured() ? SimWorld::get().memoryWork(0.0, m_cost.copyBytes()) : 0.0;
    const double flopsPerSample = m_cost.flopsPerSample;
    const double addFlops = SimWorld::get().stepsMeasured() ? 0.0 : m_cost.addFlops; // local: in the measured step
    const std::uint64_t bytes = m_cost.messageBytes;

    // The server hands out everybody's first push of the slice at its start (ssp: to those the bound lets start).
    slice.ssp.reset(m_settings.sspBound, workers);
    slice.heldFrom.assign(static_cast<std::size_t>(workers), -1.0);
    slice.releasedBy.assign(static_cast<std::size_t>(workers), -1);
    if (mode() == Mode::Ssp) {
        for (int w = 0; w < workers; ++w) {
            const WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
            if (s.slice.size() > 0) {
                slice.ssp.join(w, s.pushes);
            }
        }
    }
    for (int w = 0; w < workers; ++w) {
        if (answer(slice, w, -1))
            ++slice.active;
    }

    sg4::Actor::create("parameter-server", serverHost, [this, &slice, applyFlops] {
        SimWorld::guarded(slice.failure, [this, &slice, applyFlops] {
            const PushRule rule(m_settings, m_compensation);
            const std::size_t size = m_params.size();
            while (slice.active > 0) {
                slice.readySignal->acquire();
                const int w = slice.ready.front().first;
                slice.ready.pop_front();
                WorkerState& s = *m_workers[static_cast<std::size_t>(w)];
                if (!s.computed)
                    computePending(slice); // the math, for real, for every gradient in flight
                UpdateEvent push;
                push.worker = w;
                push.versionRead = s.versionRead;
                push.versionApplied = slice.version;
                push.samples = s.count;
                push.batchLoss = s.loss;
                push.applied = std::isfinite(s.loss);
                push.clockLead = s.clockLead;
                push.boundWait = s.boundWait;
                if (push.applied) {
                    SimWorld::compute(applyFlops);
                    const AppliedPush applied = rule.apply(m_params.data(), s.gradient.data(), s.velocity.data(),
                        s.snapshot.data(), size, slice.version - s.versionRead, s.count, slice.samplesApplied);
                    push.compensation = applied.compensation;
                    push.learningRate = applied.learningRate;
                    ++slice.version;
                    slice.samplesApplied += s.count;
                } else {
                    slice.stopped = true; // diverged: nobody gets another push
                }
                push.seconds = SimWorld::clock();
                slice.pushes.push_back(push);
                // A whole-set evaluation due now is made now, in zero virtual time, on the server's parameters:
                // the workers carry on.
                if (push.applied && evaluationDue(slice.samplesApplied))
                    slice.evaluations.emplace_back(slice.pushes.size() - 1,
                        evaluateAt(slice.version, slice.samplesApplied, SimWorld::clock() + slice.modeBase));
                slice.ssp.advance(w); // ssp: its clock moves on, the slowest may have caught up
                ++s.pushes;
                --slice.active;
                if (answer(slice, w, -1))
                    ++slice.active;
                if (mode() == Mode::Ssp)
                    releaseHeld(slice, w);
            }
        });
    });
    for (int w = 0; w < workers; ++w) {
        sg4::Host* host = hosts[static_cast<std::size_t>(w)];
        sg4::Actor::create("async-worker-" + std::to_string(w), host,
            [this, &slice, host, serverHost, w, flopsPerSample, addFlops, copyWork, packWork, bytes] {
                SimWorld::guarded(slice.failure, [&] {
                    const auto me = static_cast<std::size_t>(w);
                    auto span = [&](SpanKind kind, double start, double end, int samples = 0) {
                        if (end > start)
                            slice.spans[me].push_back({w, kind, start, end, samples});
                    };
                    WorkerState& s = *m_workers[me];
                    double waitFrom = SimWorld::clock();
                    while (true) {
                        slice.wake[me]->acquire();
                        // Waiting for the server (its queue and applies), for the slowest worker (ssp: from the
                        // moment the bound held it back to the push that released it), then for the parameters on
                        // the wire.
                        const double answered = std::clamp(slice.answered[me], waitFrom, SimWorld::clock());
                        if (slice.heldFrom[me] >= 0) {
                            const double held = std::clamp(slice.heldFrom[me], waitFrom, answered);
                            span(SpanKind::WaitRead, waitFrom, held);
                            const int by = slice.releasedBy[me];
                            if (answered > held)
                                slice.spans[me].push_back(
                                    {w, SpanKind::WaitBarrier, held, answered, 0, by == w ? -1 : by});
                            slice.heldFrom[me] = -1.0;
                        } else {
                            span(SpanKind::WaitRead, waitFrom, answered);
                        }
                        if (!s.assigned || slice.failure)
                            break;
                        const double downloadStart = SimWorld::clock();
                        SimWorld::get().send(serverHost, host, bytes);
                        span(SpanKind::WaitNetwork, downloadStart, SimWorld::clock());
                        const double copyStart = SimWorld::clock();
                        SimWorld::compute(copyWork);
                        span(SpanKind::Communicate, copyStart, SimWorld::clock());
                        // The work at the host's speed; a straggler's factor is that much more work of the same kind.
                        const double flops = s.count * flopsPerSample + s.treeAdditions * addFlops;
                        const double start = SimWorld::clock();
                        const double computed = SimWorld::computeDelayed(flops, m_stragglers.slowdown(w, s.pushes));
                        span(SpanKind::Compute, start, computed, s.count);
                        span(SpanKind::Delay, computed, SimWorld::clock());
                        const double packStart = SimWorld::clock();
                        SimWorld::compute(packWork);
                        span(SpanKind::Communicate, packStart, SimWorld::clock());
                        const double uploadStart = SimWorld::clock();
                        SimWorld::get().send(host, serverHost, bytes);
                        span(SimWorld::get().uploadSpanKind(), uploadStart, SimWorld::clock());
                        slice.ready.emplace_back(w, SimWorld::clock());
                        slice.readySignal->release();
                        waitFrom = SimWorld::clock();
                    }
                    slice.exitAt[me] = SimWorld::clock();
                    slice.end = std::max(slice.end, SimWorld::clock());
                });
            });
    }
    SimWorld::get().run();
    slice.end = std::max(slice.end, SimWorld::clock());
}

} // namespace sgdscope
