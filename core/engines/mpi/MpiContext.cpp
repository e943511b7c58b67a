#include "core/engines/mpi/MpiContext.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/engines/mpi/MpiBeatChannel.h"
#include "core/engines/mpi/PeerWatch.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace sgdscope {

namespace {
MpiContext* g_context = nullptr;

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

void MpiContext::startWatch(
    double silenceSeconds, std::function<int()> stopSignal, std::function<void(int rank, int signal)> onPeerSignal)
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
    settings.stopSignal = std::move(stopSignal);
    settings.onPeerSignal = std::move(onPeerSignal);
    m_watch = std::make_unique<PeerWatch>(settings, makeMpiBeatChannel(commAt(m_beatComm)));
}

void MpiContext::stopWatch(bool flush)
{
    if (m_watch)
        m_watch->stop(flush);
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
