#include "core/engines/mpi/MpiContext.h"

#include "core/engines/mpi/PeerWatch.h"

#include <algorithm>

namespace sgdscope {

// Every rank's clock against rank 0's: estimated at start by ping-pongs, then re-estimated by the watch.

namespace {
constexpr int clockTag = 9001;
constexpr int clockRounds = 50;
} // namespace

double MpiContext::toRoot(double localSeconds) const
{
    return localSeconds + (m_watch ? m_watch->offsetToRoot() : m_offsetToRoot);
}

std::vector<double> MpiContext::offsets() const
{
    if (!m_watch || m_rank != 0)
        return m_offsets;
    std::vector<double> latest = m_watch->offsets();
    latest[0] = 0.0;
    return latest;
}

std::vector<int> MpiContext::offsetReestimates() const
{
    if (!m_watch || m_rank != 0)
        return std::vector<int>(static_cast<std::size_t>(m_size), 0);
    return m_watch->allReestimates();
}

void MpiContext::estimateClockOffsets()
{
    m_offsets.assign(static_cast<std::size_t>(m_size), 0.0);
    m_roundTrips.assign(static_cast<std::size_t>(m_size), 0.0);
    for (int r = 1; r < m_size; ++r) {
        if (m_rank == 0) {
            double bestTrip = 1e300;
            double bestOffset = 0.0;
            for (int k = 0; k < clockRounds; ++k) {
                const double t0 = now();
                send(&t0, sizeof t0, r, clockTag);
                double remote = 0.0;
                receive(&remote, sizeof remote, r, clockTag);
                const double t1 = now();
                if (t1 - t0 < bestTrip) {
                    bestTrip = t1 - t0;
                    bestOffset = (t0 + t1) / 2 - remote; // add to rank r's time to get rank 0's
                }
            }
            m_offsets[static_cast<std::size_t>(r)] = bestOffset;
            m_roundTrips[static_cast<std::size_t>(r)] = bestTrip;
            send(&bestOffset, sizeof bestOffset, r, clockTag);
        } else if (m_rank == r) {
            for (int k = 0; k < clockRounds; ++k) {
                double ping = 0.0;
                receive(&ping, sizeof ping, 0, clockTag);
                const double t = now();
                send(&t, sizeof t, 0, clockTag);
            }
            receive(&m_offsetToRoot, sizeof m_offsetToRoot, 0, clockTag);
            m_roundTrips.assign(static_cast<std::size_t>(m_size), 0.0);
            receive(m_roundTrips.data(), m_roundTrips.size() * sizeof(double), 0, clockTag);
        }
    }
    if (m_rank == 0) {
        for (int r = 1; r < m_size; ++r)
            send(m_roundTrips.data(), m_roundTrips.size() * sizeof(double), r, clockTag);
    }
    // The watch re-estimates the offset from its beats, taking only exchanges about as quick as this one's.
    if (m_watch && m_rank != 0)
        m_watch->setOffset(m_offsetToRoot, std::max(2 * m_roundTrips[static_cast<std::size_t>(m_rank)], 1e-4));
}

} // namespace sgdscope
