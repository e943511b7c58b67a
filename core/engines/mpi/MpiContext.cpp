#include "core/engines/mpi/MpiContext.h"

#include "core/common/Error.h"
#include "core/io/Json.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

/// Polls `done` until it is true or `timeout` seconds passed: a tight loop first (messages here take
/// microseconds), then short sleeps, so that a long wait leaves the core to others.
template<typename Done>
bool pollUntil(Done&& done, double timeout)
{
    const double start = MpiContext::now();
    for (int spins = 0;; ++spins) {
        if (done())
            return true;
        const double waited = MpiContext::now() - start;
        if (waited > timeout)
            return false;
        if (waited > 2e-3)
            std::this_thread::sleep_for(std::chrono::microseconds(waited > 0.1 ? 1000 : 50));
        else if (spins % 64 == 63)
            std::this_thread::yield();
    }
}
} // namespace

bool MpiContext::launchedByMpirun()
{
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

int MpiContext::environmentRank()
{
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
        if (const char* v = std::getenv(name); v && *v)
            return std::atoi(v);
    }
    return 0;
}

MpiContext& MpiContext::init()
{
    if (g_context)
        return *g_context;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    g_context = new MpiContext();
    MPI_Comm_rank(MPI_COMM_WORLD, &g_context->m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_context->m_size);
    // A failed MPI call returns an error instead of ending the job silently: every call is checked.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return *g_context;
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
        }
    }
}

void MpiContext::wait(void* request, int peer, const char* what)
{
    auto* r = static_cast<MPI_Request*>(request);
    int done = 0;
    const bool ok = pollUntil(
        [&] {
            if (MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                abort(std::string("the MPI connection with rank ") + std::to_string(peer) + " failed", 1);
            return done != 0;
        },
        m_timeout);
    if (!ok)
        abortForSilence(peer, what);
}

void MpiContext::abortForSilence(int peer, const char* what) const
{
    abort("rank " + std::to_string(peer) + " did not answer within " + formatNumber(m_timeout) + " s (" + what
            + " it; --peer-timeout); it is dead or hung, so the job ends",
        1);
}

void MpiContext::send(const void* data, std::size_t bytes, int to, int tag)
{
    MPI_Request request;
    if (MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, to, tag, MPI_COMM_WORLD, &request) != MPI_SUCCESS)
        abort("cannot send to rank " + std::to_string(to), 1);
    wait(&request, to, "sending to");
}

MpiContext::PendingSend MpiContext::startSend(const void* data, std::size_t bytes, int to, int tag)
{
    PendingSend pending;
    pending.request.assign(sizeof(MPI_Request), 0);
    pending.to = to;
    if (MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, to, tag, MPI_COMM_WORLD, requestAt(pending.request, 0))
        != MPI_SUCCESS)
        abort("cannot send to rank " + std::to_string(to), 1);
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
    MPI_Request request;
    if (MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, from, tag, MPI_COMM_WORLD, &request) != MPI_SUCCESS)
        abort("cannot receive from rank " + std::to_string(from), 1);
    MPI_Status status;
    int done = 0;
    const bool ok = pollUntil(
        [&] {
            if (MPI_Test(&request, &done, &status) != MPI_SUCCESS)
                abort("the MPI connection with rank " + std::to_string(from) + " failed", 1);
            return done != 0;
        },
        m_timeout);
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
    postedAt.assign(n, MpiContext::now());
    for (std::size_t i = 0; i < n; ++i)
        post(static_cast<int>(i));
    armed = true;
}

void MpiContext::PostedReceives::post(int i)
{
    const auto k = static_cast<std::size_t>(i);
    MPI_Irecv(buffers[k].data(), static_cast<int>(buffers[k].size()), MPI_BYTE, from[k], tag, MPI_COMM_WORLD,
        requestAt(requests, k));
    postedAt[k] = MpiContext::now();
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

int MpiContext::receiveAny(PostedReceives& posted)
{
    const std::size_t n = posted.from.size();
    posted.arm();
    int index = MPI_UNDEFINED;
    MPI_Status status;
    // Each poll tests the peers round robin from the one after the last served (MPI_Testany favours the
    // lowest index: a busy server would serve its first workers and starve the others).
    const bool ok = pollUntil(
        [&] {
            for (std::size_t k = 0; k < n; ++k) {
                const std::size_t i = (posted.next + k) % n;
                MPI_Request* request = requestAt(posted.requests, i);
                if (*request == MPI_REQUEST_NULL)
                    continue;
                int done = 0;
                if (MPI_Test(request, &done, &status) != MPI_SUCCESS)
                    abort("the MPI connection with rank " + std::to_string(posted.from[i]) + " failed", 1);
                if (done) {
                    index = static_cast<int>(i);
                    posted.next = (i + 1) % n;
                    return true;
                }
            }
            return false;
        },
        m_timeout);
    // The peer waited for longest is the one that does not answer, even while the others do.
    const auto oldest = static_cast<std::size_t>(
        std::min_element(posted.postedAt.begin(), posted.postedAt.end()) - posted.postedAt.begin());
    if (!ok || (static_cast<std::size_t>(index) != oldest && now() - posted.postedAt[oldest] > m_timeout))
        abortForSilence(posted.from[oldest], "receiving from");
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    posted.sizes[static_cast<std::size_t>(index)] = static_cast<std::size_t>(count);
    return index;
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
    MPI_Finalize();
}

} // namespace sgdscope
