// sgdscope-mpi-probe: how this machine's Open MPI carries a message, for the simulated `local-mpi` cluster
// (core/run/MpiLinkCalibration.h starts it under mpirun and reads what it prints).
//
//   mpirun -np N sgdscope-mpi-probe SIZE... --round-trips R
//
// Ranks 0 and 1 time R round trips of each SIZE bytes (after a warm-up of a tenth of R, at least 3), each side
// polling with MPI_Test as the MPI engine's waits do (core/engines/mpi/MpiContext.cpp: a tight loop, a yield every
// 64 polls). Ranks 2 and up poll for a message the whole time, as the engine's idle ranks do, so that the cores are
// shared as in a job of N processes. Rank 0 prints one line per size, "round-trips SIZE SECONDS...", then
// "waited-for-a-core SHARE" (of the time ranks 0 and 1 wanted a core while timing, the share they waited for one:
// the kernel's run-queue delay of their threads, /proc/self/task/*/schedstat; -1 where it does not say), then "done".
// Only MPI: it starts in a fraction of a second.
#include "core/common/ThreadCoreTime.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr int pingTag = 1;
constexpr int stopTag = 2;

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Polls `request` until it completes, as the MPI engine's waits do.
void pollUntilDone(MPI_Request& request)
{
    int done = 0;
    for (int spins = 0;; ++spins) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (spins % 64 == 63)
            std::this_thread::yield();
    }
}

void sendAndPoll(std::vector<char>& buffer, std::size_t bytes, int to)
{
    MPI_Request request;
    MPI_Isend(buffer.data(), static_cast<int>(bytes), MPI_BYTE, to, pingTag, MPI_COMM_WORLD, &request);
    pollUntilDone(request);
}

void receiveAndPoll(std::vector<char>& buffer, std::size_t bytes, int from)
{
    MPI_Request request;
    MPI_Irecv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, from, pingTag, MPI_COMM_WORLD, &request);
    pollUntilDone(request);
}

int usage(int rank)
{
    if (rank == 0)
        std::fprintf(stderr,
            "usage: mpirun -np N sgdscope-mpi-probe SIZE... --round-trips R (N >= 2, sizes in "
            "bytes, 1 to 2^30)\n");
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<std::size_t> sizes;
    int roundTrips = 0;
    bool bad = size < 2;
    for (int i = 1; i < argc && !bad; ++i) {
        char* end = nullptr;
        if (std::strcmp(argv[i], "--round-trips") == 0 && i + 1 < argc) {
            roundTrips = static_cast<int>(std::strtol(argv[++i], &end, 10));
            bad = *end != '\0' || roundTrips < 1 || roundTrips > 100000;
        } else {
            const long long bytes = std::strtoll(argv[i], &end, 10);
            bad = *end != '\0' || bytes < 1 || bytes > (1LL << 30);
            sizes.push_back(static_cast<std::size_t>(bytes));
        }
    }
    if (bad || sizes.empty() || roundTrips == 0) {
        const int code = usage(rank);
        MPI_Finalize();
        return code;
    }
    std::size_t largest = 0;
    for (const std::size_t s : sizes)
        largest = std::max(largest, s);
    std::vector<char> buffer(largest, 1);

    if (rank >= 2) {
        // An idle rank of the job: it polls for a message, as the engine's waiting ranks do, until rank 0 is done.
        char stop = 0;
        MPI_Request request;
        MPI_Irecv(&stop, 1, MPI_BYTE, 0, stopTag, MPI_COMM_WORLD, &request);
        pollUntilDone(request);
        MPI_Finalize();
        return 0;
    }
    const int warmUp = std::max(3, roundTrips / 10);
    const std::pair<double, double> before = sgdscope::coreTimeOfThisProcess();
    for (const std::size_t bytes : sizes) {
        std::vector<double> seconds;
        seconds.reserve(static_cast<std::size_t>(roundTrips));
        for (int k = 0; k < warmUp + roundTrips; ++k) {
            if (rank == 0) {
                const double start = now();
                sendAndPoll(buffer, bytes, 1);
                receiveAndPoll(buffer, bytes, 1);
                if (k >= warmUp)
                    seconds.push_back(now() - start);
            } else {
                receiveAndPoll(buffer, bytes, 0);
                sendAndPoll(buffer, bytes, 0);
            }
        }
        if (rank == 0) {
            std::string line = "round-trips " + std::to_string(bytes);
            char number[32];
            for (const double s : seconds) {
                std::snprintf(number, sizeof number, " %.9e", s);
                line += number;
            }
            std::printf("%s\n", line.c_str());
        }
    }
    // Ranks 0 and 1's run-queue delay while they timed: rank 1 sends rank 0 its seconds run and waited.
    const std::pair<double, double> after = sgdscope::coreTimeOfThisProcess();
    double mine[2] = {after.first - before.first, after.second - before.second};
    if (before.first < 0 || after.first < 0)
        mine[0] = mine[1] = -1.0;
    if (rank == 1)
        MPI_Send(mine, 2, MPI_DOUBLE, 0, stopTag, MPI_COMM_WORLD);
    if (rank == 0) {
        double theirs[2] = {-1.0, -1.0};
        MPI_Recv(theirs, 2, MPI_DOUBLE, 1, stopTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double ran = mine[0] + theirs[0];
        const double waited = mine[1] + theirs[1];
        const bool known = mine[0] >= 0 && theirs[0] >= 0 && ran + waited > 0;
        std::printf("waited-for-a-core %.6f\n", known ? waited / (ran + waited) : -1.0);
        char stop = 1;
        for (int r = 2; r < size; ++r)
            MPI_Send(&stop, 1, MPI_BYTE, r, stopTag, MPI_COMM_WORLD);
        std::printf("done\n");
        std::fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
