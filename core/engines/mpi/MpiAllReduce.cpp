#include "core/engines/mpi/MpiAllReduce.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiWorkerPart.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sgdscope {

namespace {
constexpr int scatterTag = 14;
constexpr int gatherTag = 15;
constexpr std::size_t lineFloats = 16; // a segment starts on a cache line (64 bytes)
constexpr std::size_t spanRoom = 64 * 1024; // a message's room for its sender's spans (rank 0's)
constexpr std::size_t headerBytes = sizeof(std::int64_t) + sizeof(double) + sizeof(std::uint64_t);
} // namespace

MpiAllReduce::MpiAllReduce(MpiContext& mpi, std::size_t floats)
    : m_mpi(mpi)
    , m_floats(floats)
{
    const auto ranks = static_cast<std::size_t>(mpi.size());
    const std::size_t share = (floats + ranks - 1) / ranks;
    m_segment = (share + lineFloats - 1) / lineFloats * lineFloats;
    for (int r = 0; r < mpi.size(); ++r) {
        if (r == mpi.rank())
            continue;
        m_scatterIn.from.push_back(r);
        m_gatherIn.from.push_back(r);
    }
    m_scatterIn.tag = scatterTag;
    m_gatherIn.tag = gatherTag;
    m_scatterIn.buffers.assign(m_scatterIn.from.size(), {});
    m_gatherIn.buffers.assign(m_gatherIn.from.size(), {});
    m_out.resize(m_scatterIn.from.size());
}

std::size_t MpiAllReduce::first(int rank) const
{
    return std::min(m_floats, static_cast<std::size_t>(rank) * m_segment);
}

std::size_t MpiAllReduce::last(int rank) const
{
    return std::min(m_floats, static_cast<std::size_t>(rank + 1) * m_segment);
}

void MpiAllReduce::post(const SyncReduction& reduction)
{
    const std::size_t mine = last(m_mpi.rank()) - first(m_mpi.rank());
    const std::size_t room = m_mpi.rank() == 0 ? spanRoom : 0;
    for (std::size_t k = 0; k < m_scatterIn.from.size(); ++k) {
        const int from = m_scatterIn.from[k];
        const WorkerReduction& part = reduction.plan.workers[static_cast<std::size_t>(from)];
        const auto roots = static_cast<std::size_t>(part.roots);
        m_scatterIn.buffers[k].resize(headerBytes + room + static_cast<std::size_t>(part.chunks.size()) * sizeof(double)
            + roots * mine * sizeof(float));
        m_gatherIn.buffers[k].resize(headerBytes + room + (last(from) - first(from)) * sizeof(float));
    }
    m_scatterIn.armed = false;
    m_scatterIn.arm();
    m_gatherIn.armed = false;
    m_gatherIn.arm();
}

template<class Put>
void MpiAllReduce::sendToAll(int tag, std::int64_t update, RankSpans& spans, Put&& put)
{
    const int rank = m_mpi.rank();
    const int ranks = m_mpi.size();
    const double sendStart = MpiContext::now();
    const double sentAt = m_mpi.toRoot(sendStart); // (its spans so far end there)
    for (MpiContext::PendingSend& send : m_sends) // (none left unless a step threw: its buffers are needed again)
        m_mpi.complete(send);
    m_sends.clear();
    for (int k = 1; k < ranks; ++k) {
        const int to = (rank + k) % ranks;
        MpiMessage& out = m_out[static_cast<std::size_t>(k - 1)];
        out.clear();
        out.put(update);
        out.put(sentAt);
        if (to == 0) {
            // (room for them in rank 0's receive: post())
            if (spans.spans.size() * sizeof(Span) + sizeof(std::uint64_t) > spanRoom)
                throw RunFailure("rank " + std::to_string(rank) + " has " + std::to_string(spans.spans.size())
                    + " spans to send rank 0, more than a message of the all-reduce holds");
            out.putSpans(spans.spans);
            spans.spans.clear();
        } else {
            out.putSpans({});
        }
        put(out, to);
        m_sends.push_back(m_mpi.startSend(out.bytes().data(), out.bytes().size(), to, tag));
    }
    spans.addRoot(SpanKind::Communicate, sentAt, m_mpi.toRoot(MpiContext::now())); // (from the time the messages say)
}

template<class Take>
void MpiAllReduce::takeFromAll(
    MpiContext::PostedReceives& in, std::int64_t update, RankSpans& spans, const SpansArrived& onSpans, Take&& take)
{
    const double waitStart = MpiContext::now();
    for (std::size_t n = 0; n < in.from.size(); ++n)
        m_mpi.receiveAny(in);
    const double allIn = MpiContext::now();
    double lastSent = -std::numeric_limits<double>::infinity(); // the sender that started last, and when
    int lastSender = -1;
    for (std::size_t k = 0; k < in.from.size(); ++k) {
        MpiMessageReader reader(in.buffers[k].data(), in.sizes[k]);
        if (reader.get<std::int64_t>() != update)
            throw RunFailure("rank " + std::to_string(in.from[k]) + " sent another update's segment than rank "
                + std::to_string(m_mpi.rank()) + " was at");
        const double sentAt = reader.get<double>();
        if (sentAt > lastSent) {
            lastSent = sentAt;
            lastSender = in.from[k];
        }
        const std::vector<Span> theirs = reader.getSpans();
        if (m_mpi.rank() == 0 && onSpans)
            onSpans(in.from[k], theirs, sentAt);
        take(reader, in.from[k]);
    }
    spans.addWait(SpanKind::WaitBarrier, waitStart, allIn, lastSent, lastSender);
    // The others have taken what this rank sent (each posted its receives before it sent), or take it now.
    const double completeStart = MpiContext::now();
    for (MpiContext::PendingSend& send : m_sends)
        m_mpi.complete(send);
    m_sends.clear();
    spans.add(SpanKind::Communicate, completeStart, MpiContext::now());
}

void MpiAllReduce::reduceScatter(
    SyncReduction& reduction, std::int64_t update, RankSpans& spans, const SpansArrived& onSpans)
{
    const int rank = m_mpi.rank();
    const std::vector<int> mine = mpiOutgoingBuffers(reduction.plan, rank);
    const IndexRange myChunks = reduction.plan.workers[static_cast<std::size_t>(rank)].chunks;
    sendToAll(scatterTag, update, spans, [&](MpiMessage& out, int to) {
        for (int c = myChunks.begin; c < myChunks.end; ++c)
            out.put(reduction.chunkLoss[static_cast<std::size_t>(c)]);
        for (const int id : mine)
            out.putFloats(reduction.buffers[static_cast<std::size_t>(id)].data() + first(to), last(to) - first(to));
    });
    const std::size_t begin = first(rank);
    const std::size_t count = last(rank) - begin;
    takeFromAll(m_scatterIn, update, spans, onSpans, [&](MpiMessageReader& in, int from) {
        const IndexRange chunks = reduction.plan.workers[static_cast<std::size_t>(from)].chunks;
        for (int c = chunks.begin; c < chunks.end; ++c)
            reduction.chunkLoss[static_cast<std::size_t>(c)] = in.get<double>();
        for (const int id : mpiOutgoingBuffers(reduction.plan, from))
            in.getFloats(reduction.buffers[static_cast<std::size_t>(id)].data() + begin, count);
    });
}

double MpiAllReduce::applySegment(
    SyncReduction& reduction, const MomentumSgd& rule, float lr, float* params, float* velocity)
{
    // As SyncReduction::applyKept with nothing dropped, on this rank's segment.
    const std::vector<char> none;
    const int kept = reduction.keptSamples(none);
    const double loss = reduction.keptLossSum(none) / kept;
    if (!std::isfinite(loss))
        return loss;
    const std::size_t begin = first(m_mpi.rank());
    const std::size_t end = last(m_mpi.rank());
    rule.update(params, velocity, reduction.combineKept(none, reduction.keptScale(kept), begin, end), lr, begin, end);
    return loss;
}

void MpiAllReduce::allGather(float* params, std::int64_t update, RankSpans& spans, const SpansArrived& onSpans)
{
    const int rank = m_mpi.rank();
    sendToAll(gatherTag, update, spans,
        [&](MpiMessage& out, int) { out.putFloats(params + first(rank), last(rank) - first(rank)); });
    takeFromAll(m_gatherIn, update, spans, onSpans,
        [&](MpiMessageReader& in, int from) { in.getFloats(params + first(from), last(from) - first(from)); });
}

} // namespace sgdscope
