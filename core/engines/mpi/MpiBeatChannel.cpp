#include "core/engines/mpi/MpiBeatChannel.h"

#include "core/engines/mpi/MpiContext.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <thread>

namespace sgdscope {

namespace {
constexpr int beatTag = 9100;

/// The watch's beats on a communicator of their own (no match with the training's messages): sends without
/// waiting, at most a few under way per peer (a peer that takes none gets no more), receives what arrived.
class MpiBeatChannel final : public BeatChannel
{
public:
    explicit MpiBeatChannel(MPI_Comm comm)
        : m_comm(comm)
    {
    }
    void send(int to, std::span<const char> bytes) override
    {
        reap();
        int underWay = 0;
        for (const Pending& p : m_pending)
            underWay += p.to == to ? 1 : 0;
        if (underWay >= 16)
            return;
        m_pending.push_back({MPI_REQUEST_NULL, MpiBytes(bytes.data(), bytes.data() + bytes.size()), to});
        Pending& p = m_pending.back();
        if (MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, to, beatTag, m_comm, &p.request)
            != MPI_SUCCESS)
            m_pending.pop_back();
    }
    bool receive(int& from, std::vector<char>& bytes) override
    {
        int arrived = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, beatTag, m_comm, &arrived, &status) != MPI_SUCCESS || !arrived)
            return false;
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        bytes.resize(static_cast<std::size_t>(std::max(count, 0)));
        from = status.MPI_SOURCE;
        MPI_Recv(bytes.data(), count, MPI_BYTE, from, beatTag, m_comm, MPI_STATUS_IGNORE);
        return true;
    }
    void flush() override
    {
        const double start = MpiContext::now();
        while (!m_pending.empty() && MpiContext::now() - start < 0.2) {
            reap();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        if (!m_pending.empty())
            markMpiSendAbandoned(); // a cancel may fail: their buffers are kept (MpiBytes)
        for (Pending& p : m_pending) {
            // A peer that takes nothing more (gone, or already leaving): its beats are dropped.
            MPI_Cancel(&p.request);
            MPI_Request_free(&p.request);
        }
        m_pending.clear();
    }

private:
    struct Pending
    {
        MPI_Request request;
        MpiBytes bytes;
        int to;
    };
    void reap()
    {
        for (auto it = m_pending.begin(); it != m_pending.end();) {
            int done = 0;
            MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
            it = done ? m_pending.erase(it) : it + 1;
        }
    }
    MPI_Comm m_comm;
    std::deque<Pending> m_pending;
};
} // namespace

std::unique_ptr<BeatChannel> makeMpiBeatChannel(MPI_Comm comm)
{
    return std::make_unique<MpiBeatChannel>(comm);
}

} // namespace sgdscope
