#include "core/run/study/StudyMpi.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/engines/mpi/PeerWatch.h"
#include "core/io/Files.h"
#include "core/run/HeadlessRun.h"
#include "core/run/study/LocalPointExecutor.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

namespace sgdscope {

namespace {

namespace fs = std::filesystem;

// Tags of the study's messages (the MPI engine's are below 100, MpiContext's own from 9000).
constexpr int pointTag = 200; // rank 0 -> a rank: a point to run (JSON)
constexpr int resultTag = 201; // a rank -> rank 0: how it ended, and its run folder's files
constexpr int stopTag = 202; // rank 0 -> a rank: no more points; end once yours have
constexpr int interruptTag = 203; // rank 0 -> a rank: stop your running points (a signal reached rank 0)
constexpr double watchSilence = 6.0; // seconds of silence after which a rank is given up (as --peer-timeout)
constexpr double sendLimit = 60.0; // seconds a message to a living rank may take to go
/// The study's exit code once a rank is lost: the study is incomplete (StudyRunner's runStudyPoints returns it).
constexpr int lostRankExitCode = 1;
/// The start of a rank's scratch folder's name in the temporary folder ("sgdscope-study-rank2-PID").
constexpr const char* scratchPrefix = "sgdscope-study-rank";

/// A message as bytes: the 8-byte length of a JSON header, the header, then the files' bytes one after another.
MpiBytes packMessage(const Json& header, const std::vector<std::string>& blobs)
{
    const std::string text = dumpJson(header, -1);
    const std::uint64_t length = text.size();
    MpiBytes bytes;
    bytes.append(&length, sizeof length);
    bytes.append(text.data(), text.size());
    for (const std::string& b : blobs)
        bytes.append(b.data(), b.size());
    return bytes;
}

Json unpackHeader(const std::vector<char>& bytes, std::size_t& bodyAt)
{
    std::uint64_t length = 0;
    if (bytes.size() < sizeof length)
        throw SgdError("a study message too short for its header");
    std::memcpy(&length, bytes.data(), sizeof length);
    if (length > bytes.size() - sizeof length)
        throw SgdError("a study message shorter than its header says");
    bodyAt = sizeof length + length;
    return parseJson(std::string_view(bytes.data() + sizeof length, length), "study message");
}

/// Sends without MpiContext::send's wait, which gives up on every peer once the watch has a problem with any.
/// Returns false if `to` could not take it in time, or has a problem (the send is then left to MPI, and `bytes` are
/// kept: MpiBytes).
bool sendTo(MpiContext& mpi, MpiBytes bytes, int to, int tag)
{
    MpiContext::PendingSend pending = mpi.startSend(bytes.data(), bytes.size(), to, tag);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(sendLimit);
    while (!mpi.done(pending)) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        const auto problem = mpi.watch() ? mpi.watch()->problem() : std::nullopt;
        if (problem && problem->rank == to)
            return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
}

/// Rank 0's executor: the points run on the other ranks.
///
/// A rank that dies ends the study. Open MPI 4.1's mpirun ends the whole job when one of its processes dies (it
/// sends the others SIGTERM, then SIGKILL a second later; orte_enable_recovery is off by default), so the living
/// ranks' points could not finish anyway. The executor then marks the dead rank's points lost, tells the living
/// ranks at once that rank 0 ends the job (PeerWatch::endJob: they stop their points and leave without a word),
/// makes no more MPI calls (MPI's progress on a dead peer's message can crash a process), and says ended(): the
/// study writes what it has and stops.
class RankExecutor : public PointExecutor
{
public:
    RankExecutor(MpiContext& mpi, int perRank, std::vector<long> pids)
        : m_mpi(mpi)
        , m_perRank(perRank)
        , m_pids(std::move(pids))
    {
        for (int r = 1; r < mpi.size(); ++r)
            m_living.insert(r);
    }

    int slots() const override { return m_ended ? 0 : static_cast<int>(m_living.size()) * m_perRank; }
    int running() const override { return static_cast<int>(m_running.size()); }
    bool ended() const override { return m_ended; }
    std::string endReason() const override { return m_endReason; }

    PointStart start(const PointLaunch& launch) override
    {
        // The living rank with the fewest points running (the lowest first).
        int rank = -1;
        int fewest = m_perRank;
        for (const int r : m_living) {
            const int n = static_cast<int>(
                std::count_if(m_running.begin(), m_running.end(), [&](const auto& p) { return p.second.rank == r; }));
            if (n < fewest) {
                fewest = n;
                rank = r;
            }
        }
        if (rank < 0)
            throw SgdError("--study: no rank is free to run point " + launch.id);
        Json env = Json::array();
        for (const auto& [name, value] : launch.environment)
            env.push_back(Json::array({name, value}));
        const Json header {{"id", launch.id}, {"folder", launch.folder}, {"args", launch.args}, {"env", env}};
        if (!sendTo(m_mpi, packMessage(header, {}), rank, pointTag)) {
            // A rank that died as it was handed the point: the point is its, and lost with it (wait() says so).
            const auto problem = m_mpi.watch() ? m_mpi.watch()->problem() : std::nullopt;
            if (!problem || problem->rank != rank)
                throw SgdError("--study: rank " + std::to_string(rank) + " did not take point " + launch.id);
        }
        m_running[launch.id] = Running {rank, launch.folder, std::chrono::steady_clock::now()};
        return {rank, m_pids[static_cast<std::size_t>(rank)]};
    }

    std::vector<PointEnd> wait(double seconds) override
    {
        std::vector<PointEnd> ended;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (true) {
            lookForLostRanks(ended);
            if (m_ended)
                return ended;
            for (const int r : m_living) {
                while (std::optional<std::vector<char>> bytes = m_mpi.receiveArrived(r, resultTag))
                    takeResult(r, *bytes, ended);
            }
            if (!ended.empty() || std::chrono::steady_clock::now() >= deadline)
                return ended;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }

    void interrupt(int) override
    {
        if (m_ended)
            return;
        std::set<int> ranks;
        for (const auto& [id, p] : m_running)
            ranks.insert(p.rank);
        for (const int r : ranks)
            (void)sendTo(m_mpi, packMessage(Json::object(), {}), r, interruptTag);
    }

    void kill() override
    {
        // A rank that did not answer the stop in time: its points are given up.
        for (auto& [id, p] : m_running)
            m_abandoned.push_back(id);
    }

    /// Tells every living rank there are no more points (nothing once the job ended).
    void finish()
    {
        if (m_ended)
            return;
        for (const int r : m_living)
            (void)sendTo(m_mpi, packMessage(Json::object(), {}), r, stopTag);
    }

private:
    struct Running
    {
        int rank = 0;
        std::string folder;
        std::chrono::steady_clock::time_point started;
    };

    void takeResult(int rank, const std::vector<char>& bytes, std::vector<PointEnd>& ended)
    {
        std::size_t at = 0;
        const Json header = unpackHeader(bytes, at);
        const std::string id = header.at("id").get<std::string>();
        const auto it = m_running.find(id);
        if (it == m_running.end())
            return;
        PointEnd end;
        end.id = id;
        end.rank = rank;
        end.exitCode = header.at("exit").get<int>();
        end.wallSeconds = header.at("seconds").get<double>();
        end.problem = header.at("problem").get<std::string>();
        // The run folder's files, summary.json last: its presence means every file is there.
        std::error_code ec;
        fs::create_directories(it->second.folder, ec);
        std::string summary;
        for (const Json& f : header.at("files")) {
            const std::string name = f.at("name").get<std::string>();
            const std::size_t size = f.at("size").get<std::size_t>();
            if (at + size > bytes.size() || name.find('/') != std::string::npos)
                break;
            std::string content(bytes.data() + at, size);
            at += size;
            if (name == "summary.json")
                summary = std::move(content);
            else
                writeFileAtomically((fs::path(it->second.folder) / name).string(), content);
        }
        if (!summary.empty())
            writeFileAtomically((fs::path(it->second.folder) / "summary.json").string(), summary);
        m_running.erase(it);
        ended.push_back(std::move(end));
    }

    void lookForLostRanks(std::vector<PointEnd>& ended)
    {
        const auto problem = m_mpi.watch() ? m_mpi.watch()->problem() : std::nullopt;
        std::vector<std::pair<std::string, std::string>> lost; // (id, why)
        if (problem && !m_ended) {
            // Whatever the problem (a rank gone, silent or failed; this process stalled so long that the others gave
            // it up), the job cannot go on: it ends now, said once by the study (StudyRunner), the others silent.
            m_ended = true;
            m_mpi.watch()->endJob(lostRankExitCode);
            const std::string why = problem->describe(watchSilence);
            for (const auto& [id, p] : m_running) {
                if (p.rank == problem->rank)
                    lost.emplace_back(id, why);
            }
            m_endReason = why;
            m_living.clear();
        }
        for (const std::string& id : m_abandoned)
            lost.emplace_back(id, "its rank did not answer the stop");
        m_abandoned.clear();
        for (const auto& [id, why] : lost) {
            const auto it = m_running.find(id);
            if (it == m_running.end())
                continue;
            PointEnd end;
            end.id = id;
            end.rank = it->second.rank;
            end.lost = true;
            end.exitCode = 1;
            end.problem = why;
            end.wallSeconds
                = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.started).count();
            m_running.erase(it);
            ended.push_back(std::move(end));
        }
    }

    MpiContext& m_mpi;
    int m_perRank = 1;
    std::vector<long> m_pids;
    std::set<int> m_living;
    std::map<std::string, Running> m_running;
    std::vector<std::string> m_abandoned;
    bool m_ended = false;
    std::string m_endReason;
};

/// Removes the scratch folders (ScratchFolder) that ranks of earlier studies on this machine left behind: their
/// process is gone (killed before it could remove it, as mpirun's teardown does a second after a rank dies). This
/// user's only; a folder whose process still runs is kept.
void removeLeftScratch()
{
    std::error_code ec;
    const fs::path temp = fs::temp_directory_path(ec);
    if (ec)
        return;
    for (const auto& entry : fs::directory_iterator(temp, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(scratchPrefix, 0) != 0)
            continue;
        const std::size_t dash = name.rfind('-');
        const long pid = dash == std::string::npos ? 0 : std::strtol(name.c_str() + dash + 1, nullptr, 10);
        struct stat info
        {
        };
        if (pid <= 0 || ::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode)
            || info.st_uid != ::getuid())
            continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)
            continue; // (still running)
        std::error_code ignored;
        fs::remove_all(entry.path(), ignored);
    }
}

/// A rank's scratch folder: its points' run folders until their files are sent to rank 0, in the temporary folder
/// (the ranks may run on machines where the study's folder is not). Removed when the rank leaves, whichever way it
/// does short of being killed (then the next study on the machine removes it, removeLeftScratch).
class ScratchFolder
{
public:
    explicit ScratchFolder(int rank)
        : m_path(fs::temp_directory_path()
            / (scratchPrefix + std::to_string(rank) + "-" + std::to_string(static_cast<long>(::getpid()))))
    {
    }
    ~ScratchFolder() { remove(); }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    const fs::path& path() const { return m_path; }
    void remove() const
    {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }

private:
    fs::path m_path;
};

/// A rank other than 0: runs the points rank 0 sends, each into a folder of its own here, and sends back its files.
int servePoints(MpiContext& mpi, int perRank)
{
    removeLeftScratch();
    // (declared before the points' executor: removed once their processes have ended)
    const ScratchFolder scratch(mpi.rank());
    LocalPointExecutor local(perRank);
    std::map<std::string, std::string> folders; // id -> its folder here
    bool stopping = false;
    bool interrupted = false;
    while (true) {
        if (const int sig = interruptSignal(); sig != 0 && !interrupted) {
            interrupted = true;
            local.interrupt(sig == SIGUSR1 ? SIGTERM : sig);
        }
        if (mpi.receiveArrived(0, stopTag))
            stopping = true;
        if (stopping && local.running() == 0)
            break; // (rank 0 may have left already: a lost rank ends the job without MPI_Finalize)
        if (mpi.watch() && mpi.watch()->hasProblem()) {
            // Rank 0 ended the job (a rank was lost: it said so), or is gone: nobody will take the results.
            local.interrupt(SIGTERM);
            for (int i = 0; i < 100 && local.running() > 0; ++i)
                (void)local.wait(0.05);
            local.kill();
            (void)local.wait(0.1);
            scratch.remove();
            const auto problem = mpi.watch()->problem();
            if (problem && problem->kind == PeerProblem::Kind::Ended)
                return problem->exitCode;
            // Rank 0 cannot say it: the first other rank does.
            if (problem && problem->kind != PeerProblem::Kind::Stalled && mpi.rank() == 1)
                std::fprintf(stderr, "sgdscope: rank %d: %s; its points stop, and the study ends\n", mpi.rank(),
                    problem->describe(watchSilence).c_str());
            return 1;
        }
        while (std::optional<std::vector<char>> bytes = mpi.receiveArrived(0, pointTag)) {
            std::size_t at = 0;
            const Json header = unpackHeader(*bytes, at);
            PointLaunch launch;
            launch.id = header.at("id").get<std::string>();
            const std::string theirs = header.at("folder").get<std::string>();
            launch.folder = (scratch.path() / launch.id).string();
            for (const Json& a : header.at("args")) {
                const std::string arg = a.get<std::string>();
                launch.args.push_back(arg == theirs ? launch.folder : arg);
            }
            for (const Json& e : header.at("env"))
                launch.environment.emplace_back(e.at(0).get<std::string>(), e.at(1).get<std::string>());
            std::error_code ec;
            fs::remove_all(launch.folder, ec);
            folders[launch.id] = launch.folder;
            (void)local.start(launch);
        }
        if (mpi.receiveArrived(0, interruptTag))
            local.interrupt(SIGTERM);
        for (const PointEnd& end : local.wait(0.02)) {
            const std::string folder = folders[end.id];
            folders.erase(end.id);
            Json files = Json::array();
            std::vector<std::string> blobs;
            std::error_code ec;
            for (const auto& entry : fs::directory_iterator(folder, ec)) {
                if (!entry.is_regular_file())
                    continue;
                blobs.push_back(readFile(entry.path().string(), "point file"));
                files.push_back(Json {{"name", entry.path().filename().string()}, {"size", blobs.back().size()}});
            }
            const Json header {{"id", end.id}, {"exit", end.exitCode}, {"seconds", end.wallSeconds},
                {"problem", end.problem}, {"files", files}};
            (void)sendTo(mpi, packMessage(header, blobs), 0, resultTag);
            fs::remove_all(folder, ec);
        }
    }
    return 0;
}

/// Leaves at once (mpirun is tearing the job down, or a rank is gone: MPI_Finalize would wait for it).
[[noreturn]] void leave(MpiContext& mpi, int exitCode)
{
    mpi.stopWatch(false);
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(exitCode);
}

} // namespace

int runStudyOnRanks(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd)
{
    const double startedAt = studyClock();
    installInterruptHandlers();
    MpiContext& mpi = MpiContext::init();
    // 1. Rank 0 checks the study; its refusal ends every rank with exit code 2, said once.
    std::string problem;
    std::optional<StudyPlan> plan;
    if (mpi.isRoot()) {
        try {
            if (!mpi.threadsSupported())
                throw SgdError("--study under mpirun: Open MPI granted " + mpi.threadLevelName()
                    + ", but the ranks' watch needs MPI_THREAD_MULTIPLE");
            if (mpi.size() < 2)
                throw SgdError("--study under mpirun needs 2 processes or more (rank 0 hands out the points)");
            plan = StudyPlan::make(spec, configText);
            prepareStudyFolder(spec.dir, spec.identity(configText));
        } catch (const SgdError& e) {
            problem = e.what();
        }
    }
    const std::vector<std::string> pids = mpi.gatherText(std::to_string(static_cast<long>(::getpid())));
    if (mpi.broadcast(problem.empty() ? 0 : 1) != 0) {
        if (mpi.isRoot())
            std::fprintf(stderr, "sgdscope: %s\n", problem.c_str());
        mpi.finalize();
        if (!mpi.isRoot())
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return 2;
    }
    // 2. From here a rank is given up only when it is gone, silent or failed.
    mpi.startWatch(watchSilence);
    const int perRank = spec.jobsGiven ? spec.jobs : 1;
    int exitCode = 0;
    try {
        if (mpi.isRoot()) {
            std::vector<long> rankPids;
            for (const std::string& p : pids)
                rankPids.push_back(std::strtol(p.c_str(), nullptr, 10));
            RankExecutor executor(mpi, perRank, rankPids);
            exitCode = runStudyPoints(*plan, configText, executor, frontEnd,
                std::to_string(mpi.size() - 1) + " ranks under mpirun (rank 0 hands out the points), "
                    + std::to_string(perRank) + " point" + (perRank == 1 ? "" : "s") + " at once each",
                startedAt);
            executor.finish();
            if (executor.ended())
                leave(mpi, exitCode); // (the others were told at once: PeerWatch::endJob)
        } else {
            exitCode = servePoints(mpi, perRank);
        }
    } catch (const std::exception& e) {
        const auto seen = mpi.watch() ? mpi.watch()->problem() : std::nullopt;
        // A rank other than 0 whose job rank 0 ended (and said why), or that was given up, says nothing more.
        if (!mpi.isRoot() && seen
            && (seen->kind == PeerProblem::Kind::Ended || seen->kind == PeerProblem::Kind::Stalled))
            leave(mpi, seen->kind == PeerProblem::Kind::Ended ? seen->exitCode : 1);
        std::fprintf(stderr, "sgdscope: rank %d: %s\n", mpi.rank(), e.what());
        if (mpi.isRoot() && mpi.watch())
            mpi.watch()->endJob(1); // (the others leave without a word: this is the job's one message)
        leave(mpi, 1);
    }
    // Every rank ends with rank 0's exit code; after a signal or a lost rank, without MPI_Finalize.
    const int sig = interruptSignal();
    if (sig == SIGTERM || sig == SIGINT || (mpi.watch() && mpi.watch()->hasProblem()))
        leave(mpi, exitCode);
    try {
        exitCode = static_cast<int>(mpi.broadcast(exitCode));
    } catch (const std::exception&) {
        leave(mpi, exitCode);
    }
    mpi.stopWatch();
    mpi.finalize();
    return exitCode;
}

int startStudy(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd)
{
    if (MpiContext::environmentSize() > 1)
        return runStudyOnRanks(spec, configText, frontEnd);
    return runStudy(spec, configText, frontEnd);
}

} // namespace sgdscope
