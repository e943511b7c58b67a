#include "core/engines/mpi/MpiContext.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/engines/mpi/PeerWatch.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>

namespace sgdscope {

// The messages between ranks: point-to-point sends and receives, and the few collectives, each a wait that polls
// so that it never outlives a peer (see MpiContext).

namespace {
MPI_Request* requestAt(std::vector<char>& storage, std::size_t i)
{
    return reinterpret_cast<MPI_Request*>(storage.data()) + i;
}
} // namespace

template<typename Done>
bool MpiContext::pollUntil(Done&& done) const
{
    const double start = now();
    double lastTurn = start;
    for (int spins = 0;; ++spins) {
        // A turn long after the last (this process was stopped, or starved): the watch first looks at the peers,
        // so that no MPI progress is made on a message of a peer that ended meanwhile.
        const double turn = now();
        if (m_watch && turn - lastTurn > 0.5)
            m_watch->settle();
        lastTurn = turn;
        if (m_watch && m_watch->hasProblem()) {
            const auto problem = m_watch->problem();
            throw RunFailure(problem->describe(m_watch->silence()));
        }
        if (done())
            return true;
        const double waited = now() - start;
        if (!m_watch && waited > m_timeout)
            return false;
        // A tight loop first (messages here take microseconds), then short sleeps, so that a long wait leaves
        // the core to others; never longer than 200 us (a peer's large message advances only when this
        // rank polls).
        if (waited > 2e-3)
            std::this_thread::sleep_for(std::chrono::microseconds(waited > 0.1 ? 200 : 50));
        else if (spins % 64 == 63)
            std::this_thread::yield();
    }
}

void MpiContext::wait(void* request, int peer, const char* what)
{
    auto* r = static_cast<MPI_Request*>(request);
    int done = 0;
    bool ok = false;
    try {
        ok = pollUntil([&] {
            if (MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                throw RunFailure("the MPI connection with rank " + std::to_string(peer) + " failed");
            return done != 0;
        });
    } catch (...) {
        // The send is left to MPI: its receiver may still read the data (MpiBytes keep it).
        markMpiSendAbandoned();
        throw;
    }
    if (!ok)
        abortForSilence(peer, what);
}

void MpiContext::abortForSilence(int peer, const char* what) const
{
    abort("rank " + std::to_string(peer) + " did not answer within " + formatNumber(m_timeout) + " s (" + what
            + " it, before the run began); it is dead or hung, so the job ends",
        1);
}

void MpiContext::checkSize(std::size_t bytes, int peer) const
{
    if (bytes > maxMessageBytes)
        throw RunFailure("a message of " + std::to_string(bytes) + " bytes for rank " + std::to_string(peer)
            + " is larger than MPI takes in one call (2 GiB)");
}

void MpiContext::send(const void* data, std::size_t bytes, int to, int tag)
{
    checkSize(bytes, to);
    MPI_Request request;
    if (MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, to, tag, MPI_COMM_WORLD, &request) != MPI_SUCCESS)
        throw RunFailure("cannot send to rank " + std::to_string(to));
    wait(&request, to, "sending to");
}

MpiContext::PendingSend MpiContext::startSend(const void* data, std::size_t bytes, int to, int tag)
{
    checkSize(bytes, to);
    PendingSend pending;
    pending.request.assign(sizeof(MPI_Request), 0);
    pending.to = to;
    if (MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, to, tag, MPI_COMM_WORLD, requestAt(pending.request, 0))
        != MPI_SUCCESS)
        throw RunFailure("cannot send to rank " + std::to_string(to));
    return pending;
}

void MpiContext::complete(PendingSend& send)
{
    if (send.request.empty())
        return;
    wait(requestAt(send.request, 0), send.to, "sending to");
    send.request.clear();
}

std::size_t MpiContext::receive(void* data, std::size_t bytes, int from, int tag)
{
    checkSize(bytes, from);
    MPI_Request request;
    if (MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, from, tag, MPI_COMM_WORLD, &request) != MPI_SUCCESS)
        throw RunFailure("cannot receive from rank " + std::to_string(from));
    MPI_Status status;
    int done = 0;
    bool ok = false;
    try {
        ok = pollUntil([&] {
            if (MPI_Test(&request, &done, &status) != MPI_SUCCESS)
                throw RunFailure("the MPI connection with rank " + std::to_string(from) + " failed");
            return done != 0;
        });
    } catch (...) {
        // Not left posted: a message matched later would be fetched into the caller's buffer, gone by then. A
        // message already matched is under way into that buffer and cannot be cancelled: it is waited for (a
        // bounded time: a shared-memory transfer ends, or fails, within the call that makes it progress) before the
        // caller's buffer may go; only a transfer still not done after that is left to MPI.
        if (!done) {
            MPI_Cancel(&request);
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            while (!done && std::chrono::steady_clock::now() < until) {
                if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    break;
                if (!done)
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            if (!done)
                MPI_Request_free(&request);
        }
        throw;
    }
    if (!ok)
        abortForSilence(from, "receiving from");
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    return static_cast<std::size_t>(count);
}

void MpiContext::PostedReceives::arm()
{
    if (armed)
        return;
    const std::size_t n = from.size();
    requests.assign(n * sizeof(MPI_Request), 0);
    sizes.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
        post(static_cast<int>(i));
    armed = true;
}

void MpiContext::PostedReceives::post(int i)
{
    const auto k = static_cast<std::size_t>(i);
    MPI_Irecv(buffers[k].data(), static_cast<int>(buffers[k].size()), MPI_BYTE, from[k], tag, MPI_COMM_WORLD,
        requestAt(requests, k));
}

MpiContext::PostedReceives::~PostedReceives()
{
    abandon();
}

void MpiContext::PostedReceives::abandon()
{
    if (!armed)
        return;
    armed = false;
    const std::size_t n = std::min(from.size(), requests.size() / sizeof(MPI_Request));
    // Every receive is cancelled before any is tested: a test makes progress, and a peer's message that arrives
    // then finds no receive of ours (it waits, unread, as an unexpected message).
    for (std::size_t i = 0; i < n; ++i) {
        MPI_Request* r = requestAt(requests, i);
        if (*r != MPI_REQUEST_NULL)
            MPI_Cancel(r);
    }
    bool matched = false;
    for (std::size_t i = 0; i < n; ++i) {
        MPI_Request* r = requestAt(requests, i);
        if (*r == MPI_REQUEST_NULL)
            continue;
        int done = 0;
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
        if (!done) {
            MPI_Request_free(r); // matched, and under way: MPI completes it on its own
            matched = true;
        }
    }
    if (matched) {
        // MPI may still write into them: kept, never freed (the process is ending the job). Keeping them must not
        // allocate (this runs in a destructor, perhaps out of memory): a fixed set of slots, and past them storage
        // that is never given back; where even that is refused, the process cannot keep its promise to MPI and ends.
        // (The slots are never destroyed either: at the process's exit MPI may not have let go of them.)
        using Slots = std::array<std::vector<std::vector<char>>, 64>;
        static std::mutex keptMutex;
        alignas(Slots) static unsigned char storage[sizeof(Slots)];
        static Slots* const kept = new (storage) Slots();
        static std::size_t used = 0;
        const std::lock_guard lock(keptMutex);
        if (used < kept->size()) {
            (*kept)[used++] = std::move(buffers);
        } else if (void* more = std::malloc(sizeof buffers)) {
            new (more) std::vector<std::vector<char>>(std::move(buffers));
        } else {
            std::fputs("sgdscope: out of memory keeping the buffers of receives MPI may still write into\n", stderr);
            std::abort();
        }
    }
}

void MpiContext::PostedReceives::cancel()
{
    if (!armed)
        return;
    for (std::size_t i = 0; i < from.size(); ++i) {
        MPI_Request* r = requestAt(requests, i);
        if (*r == MPI_REQUEST_NULL)
            continue;
        MPI_Cancel(r);
        MPI_Wait(r, MPI_STATUS_IGNORE);
    }
    armed = false;
}

int MpiContext::testAny(PostedReceives& posted)
{
    const std::size_t n = posted.from.size();
    posted.arm();
    MPI_Status status;
    // Each poll tests the peers round robin from the one after the last served (MPI_Testany favours the
    // lowest index: a busy server would serve its first workers and starve the others).
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = (posted.next + k) % n;
        MPI_Request* request = requestAt(posted.requests, i);
        if (*request == MPI_REQUEST_NULL)
            continue;
        int done = 0;
        if (MPI_Test(request, &done, &status) != MPI_SUCCESS)
            throw RunFailure("the MPI connection with rank " + std::to_string(posted.from[i]) + " failed");
        if (done) {
            posted.next = (i + 1) % n;
            int count = 0;
            MPI_Get_count(&status, MPI_BYTE, &count);
            posted.sizes[i] = static_cast<std::size_t>(count);
            return static_cast<int>(i);
        }
    }
    return -1;
}

int MpiContext::receiveAny(PostedReceives& posted)
{
    int index = -1;
    const bool ok = pollUntil([&] {
        index = testAny(posted);
        return index >= 0;
    });
    if (!ok) // (before the watch runs: during training the watch names a silent peer)
        abortForSilence(posted.from[posted.next], "receiving from");
    return index;
}

namespace {
/// Receives the whole message a probe found (`probed` its status).
std::vector<char> takeProbed(int from, int tag, const MPI_Status& probed)
{
    int count = 0;
    MPI_Get_count(&probed, MPI_BYTE, &count);
    std::vector<char> bytes(static_cast<std::size_t>(std::max(count, 0)));
    // The message is there: this receive takes it at once.
    if (MPI_Recv(bytes.data(), count, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        throw RunFailure("the MPI connection with rank " + std::to_string(from) + " failed");
    return bytes;
}
} // namespace

std::vector<char> MpiContext::receiveWhole(int from, int tag)
{
    MPI_Status status;
    int flag = 0;
    const bool ok = pollUntil([&] {
        if (MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, &status) != MPI_SUCCESS)
            throw RunFailure("the MPI connection with rank " + std::to_string(from) + " failed");
        return flag != 0;
    });
    if (!ok)
        abortForSilence(from, "receiving from");
    return takeProbed(from, tag, status);
}

std::optional<std::vector<char>> MpiContext::receiveArrived(int from, int tag)
{
    MPI_Status status;
    int flag = 0;
    if (MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, &status) != MPI_SUCCESS)
        throw RunFailure("the MPI connection with rank " + std::to_string(from) + " failed");
    if (!flag)
        return std::nullopt;
    return takeProbed(from, tag, status);
}

bool MpiContext::waiting(int from, int tag)
{
    int flag = 0;
    if (MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        throw RunFailure("the MPI connection with rank " + std::to_string(from) + " failed");
    return flag != 0;
}

bool MpiContext::done(PendingSend& send)
{
    if (send.request.empty())
        return true;
    int flag = 0;
    if (MPI_Test(requestAt(send.request, 0), &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        throw RunFailure("the MPI connection with rank " + std::to_string(send.to) + " failed");
    if (flag)
        send.request.clear();
    return flag != 0;
}

std::vector<std::string> MpiContext::gatherText(const std::string& text)
{
    constexpr int tag = 9004;
    std::vector<std::string> all;
    if (m_rank == 0) {
        all.push_back(text);
        for (int r = 1; r < m_size; ++r) {
            std::uint64_t n = 0;
            receive(&n, sizeof n, r, tag);
            std::string t(static_cast<std::size_t>(std::min<std::uint64_t>(n, 1 << 20)), '\0');
            if (!t.empty())
                receive(t.data(), t.size(), r, tag);
            all.push_back(std::move(t));
        }
    } else {
        const MpiBytes t(text.data(), text.data() + std::min<std::size_t>(text.size(), 1 << 20));
        const std::uint64_t n = t.size();
        send(&n, sizeof n, 0, tag);
        if (!t.empty())
            send(t.data(), t.size(), 0, tag);
    }
    return all;
}

std::int64_t MpiContext::broadcast(std::int64_t value)
{
    constexpr int tag = 9002;
    if (m_rank == 0) {
        for (int r = 1; r < m_size; ++r)
            send(&value, sizeof value, r, tag);
    } else {
        receive(&value, sizeof value, 0, tag);
    }
    return value;
}

std::vector<std::uint64_t> MpiContext::gather(std::uint64_t value)
{
    constexpr int tag = 9003;
    std::vector<std::uint64_t> all;
    if (m_rank == 0) {
        all.push_back(value);
        for (int r = 1; r < m_size; ++r) {
            std::uint64_t v = 0;
            receive(&v, sizeof v, r, tag);
            all.push_back(v);
        }
    } else {
        send(&value, sizeof value, 0, tag);
    }
    return all;
}

} // namespace sgdscope
