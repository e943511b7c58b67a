#include "core/engines/mpi/MpiContext.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/engines/mpi/PeerWatch.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <thread>

namespace sgdscope {

namespace {
MpiContext* g_context = nullptr;
constexpr int clockTag = 9001;
constexpr int clockRounds = 50;

MPI_Request* requestAt(std::vector<char>& storage, std::size_t i)
{
    return reinterpret_cast<MPI_Request*>(storage.data()) + i;
}

constexpr int beatTag = 9100;

MPI_Comm& commAt(std::vector<char>& storage)
{
    return *reinterpret_cast<MPI_Comm*>(storage.data());
}

/// This host, as one string: its name, its boot and this process's pid namespace (processes with the same
/// string see each other's process ids; containers that share a host name do not).
std::string hostIdentity()
{
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    std::string boot;
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::getline(in, boot);
    char pidNamespace[128] = {};
    const ssize_t n = readlink("/proc/self/ns/pid", pidNamespace, sizeof pidNamespace - 1);
    return std::string(name) + "/" + boot + "/"
        + (n > 0 ? std::string(pidNamespace, static_cast<std::size_t>(n)) : "?");
}

/// The watch's beats on a communicator of their own (no match with the training's messages): sends without
/// waiting, at most a few under way per peer (a peer that takes none gets no more), receives what arrived.
class MpiBeatChannel final : public BeatChannel
{
public:
    explicit MpiBeatChannel(MPI_Comm comm)
        : m_comm(comm)
    {
    }
    void send(int to, const std::vector<char>& bytes) override
    {
        reap();
        int underWay = 0;
        for (const Pending& p : m_pending)
            underWay += p.to == to ? 1 : 0;
        if (underWay >= 16)
            return;
        m_pending.push_back({MPI_REQUEST_NULL, bytes, to});
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
        std::vector<char> bytes;
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

int MpiContext::environmentRank()
{
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
        if (const char* v = std::getenv(name); v && *v)
            return std::atoi(v);
    }
    return 0;
}

int MpiContext::environmentSize()
{
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
        if (const char* v = std::getenv(name); v && *v)
            return std::max(1, std::atoi(v));
    }
    return 1;
}

MpiContext& MpiContext::init()
{
    if (g_context)
        return *g_context;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    g_context = new MpiContext();
    MpiContext& c = *g_context;
    c.m_threadLevel = provided;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.m_size);
    // A failed MPI call returns an error instead of ending the job silently: every call is checked.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    c.m_beatComm.assign(sizeof(MPI_Comm), 0);
    MPI_Comm_dup(MPI_COMM_WORLD, &commAt(c.m_beatComm));
    // Which ranks share this host (their process ids can be checked here): every rank's host and id.
    const std::string host = hostIdentity();
    char mine[320] = {};
    std::snprintf(mine, sizeof mine, "%ld %s", static_cast<long>(getpid()), host.c_str());
    std::vector<char> all(sizeof mine * static_cast<std::size_t>(c.m_size));
    MPI_Allgather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, MPI_COMM_WORLD);
    c.m_localPids.assign(static_cast<std::size_t>(c.m_size), 0);
    for (int r = 0; r < c.m_size; ++r) {
        const char* entry = all.data() + sizeof mine * static_cast<std::size_t>(r);
        char* rest = nullptr;
        const long pid = std::strtol(entry, &rest, 10);
        if (r != c.m_rank && rest && *rest == ' ' && host == rest + 1)
            c.m_localPids[static_cast<std::size_t>(r)] = pid;
    }
    return c;
}

bool MpiContext::threadsSupported() const
{
    return m_threadLevel >= MPI_THREAD_MULTIPLE;
}

std::string MpiContext::threadLevelName() const
{
    switch (m_threadLevel) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    default:
        return "MPI_THREAD_MULTIPLE";
    }
}

void MpiContext::startWatch(double silenceSeconds)
{
    if (m_watch)
        return;
    PeerWatch::Settings settings;
    settings.rank = m_rank;
    settings.size = m_size;
    settings.silence = silenceSeconds;
    settings.initialOffset = m_offsetToRoot;
    settings.localPids = m_localPids;
    settings.interrupted = [] { return cancellationRequested(); };
    // A problem stops the run at its next boundary, as a signal would (and cuts an evaluation short): the
    // job then ends at its next wait, with the problem as its failure.
    settings.onProblem = [] { requestCancellation(); };
    m_watch = std::make_unique<PeerWatch>(settings, std::make_unique<MpiBeatChannel>(commAt(m_beatComm)));
}

void MpiContext::stopWatch(bool flush)
{
    if (m_watch)
        m_watch->stop(flush);
}

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

template<typename Done>
bool MpiContext::pollUntil(Done&& done) const
{
    const double start = now();
    for (int spins = 0;; ++spins) {
        if (done())
            return true;
        if (m_watch && m_watch->hasProblem()) {
            const auto problem = m_watch->problem();
            throw RunFailure(problem->describe(m_watch->silence()));
        }
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

bool MpiContext::initialised()
{
    return g_context != nullptr;
}

MpiContext& MpiContext::get()
{
    if (!g_context)
        throw SgdError("MPI is not initialised (the MPI engine runs under mpirun)");
    return *g_context;
}

double MpiContext::now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

void MpiContext::wait(void* request, int peer, const char* what)
{
    auto* r = static_cast<MPI_Request*>(request);
    int done = 0;
    const bool ok = pollUntil([&] {
        if (MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            throw RunFailure("the MPI connection with rank " + std::to_string(peer) + " failed");
        return done != 0;
    });
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
    const bool ok = pollUntil([&] {
        if (MPI_Test(&request, &done, &status) != MPI_SUCCESS)
            throw RunFailure("the MPI connection with rank " + std::to_string(from) + " failed");
        return done != 0;
    });
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
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::vector<char> bytes(static_cast<std::size_t>(std::max(count, 0)));
    // The message is there: this receive takes it at once.
    if (MPI_Recv(bytes.data(), count, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        throw RunFailure("the MPI connection with rank " + std::to_string(from) + " failed");
    return bytes;
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
        const std::string t = text.substr(0, 1 << 20);
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

void MpiContext::abort(const std::string& message, int code) const
{
    std::fprintf(stderr, "sgdscope: rank %d: %s\n", m_rank, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}

void MpiContext::finalize()
{
    if (m_finalized)
        return;
    m_finalized = true;
    stopWatch();
    MPI_Comm_free(&commAt(m_beatComm));
    MPI_Finalize();
}

} // namespace sgdscope
