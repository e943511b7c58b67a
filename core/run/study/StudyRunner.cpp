#include "core/run/study/StudyRunner.h"

#include "core/common/Error.h"
#include "core/common/MemoryBudget.h"
#include "core/io/Files.h"
#include "core/run/HeadlessRun.h"
#include "core/run/study/LocalPointExecutor.h"
#include "core/run/study/StudyState.h"
#include "core/run/study/StudyTimeLeft.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

namespace sgdscope {

namespace {

namespace fs = std::filesystem;

constexpr double writeInterval = 1.0; // seconds between writes of study.json while points run
constexpr double stopGrace = 10.0; // seconds the points get to end after a stop signal before they are killed

std::string statusText(const StudyState& state, int signal, bool incomplete)
{
    if (incomplete)
        return "incomplete"; // (a lost rank's points, even when a signal then stopped the rest)
    if (signal != 0)
        return "interrupted";
    return state.quiet() ? "complete" : "running";
}

std::string secondsText(double s)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, s < 10 ? "%.2f" : "%.0f", s);
    return buffer;
}

/// One line on stderr about a point that settled.
void sayPoint(const StudyPlan& plan, const PointRecord& r, int settled, int total)
{
    std::string what = statusName(r.status);
    if (r.result && isFinished(r.status)) {
        char loss[64];
        std::snprintf(loss, sizeof loss, "%.6g", r.result->finalLoss);
        what += std::string(", loss ") + loss;
        if (r.result->targetSet)
            what += r.result->secondsToTarget >= 0 ? ", target after " + secondsText(r.result->secondsToTarget) + " "
                    + (r.result->clock == "virtual" ? "virtual s" : "s")
                                                   : ", target not reached";
        else
            what += ", " + secondsText(r.result->seconds) + (r.result->clock == "virtual" ? " virtual s" : " s");
    } else if (!r.message.empty()) {
        what += ": " + r.message;
    }
    if (r.reused)
        what += " (kept from an earlier run)";
    else if (r.wallSeconds >= 0)
        what
            += " (" + secondsText(r.wallSeconds) + " s" + (r.rank >= 0 ? ", rank " + std::to_string(r.rank) : "") + ")";
    std::fprintf(stderr, "[%d/%d] %s: %s\n", settled, total, plan.describe(r.point).c_str(), what.c_str());
}

/// The one line that says an MPI study's job ended (a rank died, mpirun ends the whole job): why, the points lost
/// with the rank, and what became of those still running elsewhere.
std::string jobEndLine(const std::string& why, const std::vector<std::string>& lost, int stillRunning)
{
    std::string line = why + "; ";
    if (lost.empty()) {
        line += "no point is lost with it";
    } else {
        line += lost.size() == 1 ? "its point " : "its points ";
        for (std::size_t i = 0; i < lost.size(); ++i)
            line += (i == 0 ? "" : i + 1 == lost.size() ? " and " : ", ") + lost[i];
        line += lost.size() == 1 ? " is lost" : " are lost";
    }
    line += ", and the study ends (mpirun ends the whole job when a process dies)";
    if (stillRunning > 0)
        line += "; " + std::to_string(stillRunning) + (stillRunning == 1 ? " point" : " points")
            + " still running on other ranks " + (stillRunning == 1 ? "is" : "are") + " marked interrupted";
    return line;
}

void progressLine(const Json& j)
{
    const std::string line = dumpJson(j, -1) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
}

} // namespace

int runStudyPoints(const StudyPlan& plan, const std::string* configText, PointExecutor& executor,
    const StudyFrontEnd& frontEnd, const std::string& where, double startedAt)
{
    const StudySpec& spec = plan.spec();
    StudyMeta meta;
    meta.command = frontEnd.command;
    meta.where = where;
    meta.identity = spec.identity(configText);
    meta.notes = plan.notes();
    meta.startedAt = startedAt;
    // Points whose figures time this machine's cores (the threads engine's seconds, a local cluster's calibration)
    // run alone: a point beside one would take the cores it measures.
    const bool coreTimersAlone = plan.hasPointsThatTimeTheCores() && !spec.shareCores;
    if (plan.hasPointsThatTimeTheCores() && executor.slots() > 1) {
        std::string which = "simulated points on a local cluster are calibrated on";
        if (plan.hasThreadsPoints())
            which = plan.hasCalibratedPoints()
                ? "threads-engine points and simulated points on a local cluster (calibrated here) time"
                : "threads-engine points time";
        if (coreTimersAlone)
            meta.notes.push_back(which
                + " this machine's cores: each runs alone, one at a time (--share-cores lets them run beside other "
                  "points)");
        else
            meta.notes.push_back("--share-cores: " + which
                + " this machine's cores, and run beside other points: their figures include that sharing");
    }
    StudyState state(plan);
    const std::string dir = spec.dir;
    std::fprintf(stderr, "study: %d points (%d combinations x %d candidates x %d seeds%s), %s; folder %s\n",
        state.total(), plan.groupCount(), plan.candidateCount(), plan.seedCount(),
        plan.halving().rungs() > 1
            ? (", successive halving in " + std::to_string(plan.halving().rungs()) + " rungs").c_str()
            : "",
        where.c_str(), dir.c_str());
    for (const std::string& note : meta.notes)
        std::fprintf(stderr, "note: %s\n", note.c_str());
    if (spec.progress)
        progressLine(Json {{"study", "start"}, {"dir", dir}, {"total", state.total()}, {"slots", executor.slots()}});

    std::map<std::string, PointRecord*> running;
    bool coreTimerRunning = false;
    std::string coreTimerId;
    bool stopping = false;
    int signal = 0;
    int lostPoints = 0;
    double stopDeadline = 0.0;
    double lastWrite = -1e300;
    double busyFrom = -1.0;
    bool changed = true;
    writeStudyFiles(dir, state, meta, "running");
    lastWrite = studyClock();

    const bool parallelSim = executor.slots() > 1;
    // Points at a time, for the time left: one where the points that time the cores run alone (in a plan that
    // mixes them with others, the others still run beside each other: an upper bound there).
    const int together = coreTimersAlone ? 1 : executor.slots();
    StudyTimeLeft timeLeft;
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    bool endSaid = false;
    auto finishPoint = [&](PointRecord& r, PointStatus status, bool say = true) {
        state.settle(r, status);
        if (meta.residentAfterFirst < 0)
            meta.residentAfterFirst = residentBytes();
        if (say)
            sayPoint(plan, r, state.settledCount(), state.total());
        if (spec.progress) {
            Json line {{"study", "point"}, {"id", r.point.id}, {"status", statusName(r.status)},
                {"settled", state.settledCount()}, {"total", state.total()}, {"running", state.runningCount()},
                {"reused", r.reused}};
            if (r.rank >= 0)
                line["rank"] = r.rank;
            const double left = timeLeft.seconds(
                state.total() - state.settledCount(), plan.totalSteps() - state.settledSteps(), together);
            line["eta_seconds"] = left >= 0 ? Json(left) : Json(nullptr);
            progressLine(line);
        }
        changed = true;
    };

    while (true) {
        if (const int sig = interruptSignal(); sig != 0 && !stopping) {
            stopping = true;
            signal = sig;
            executor.interrupt(sig == SIGUSR1 ? SIGTERM : sig);
            stopDeadline = studyClock() + stopGrace;
            std::fprintf(stderr, "study: stopping: %d point%s still running will be marked interrupted\n",
                executor.running(), executor.running() == 1 ? "" : "s");
            // Written at once: under mpirun the job may be torn down a second after the signal.
            writeStudyFiles(dir, state, meta, lostPoints > 0 ? "incomplete" : "interrupted");
            lastWrite = studyClock();
        }
        // Start what may start: points that time the cores wait for them and run alone.
        while (!stopping && !executor.ended() && executor.running() < executor.slots() && state.hasDue()) {
            if (coreTimersAlone && coreTimerRunning)
                break;
            const bool coreTimersAllowed = !coreTimersAlone || executor.running() == 0;
            PointRecord* r = state.takeNext(coreTimersAllowed);
            if (!r)
                break;
            const std::string folder = (fs::path(dir) / "points" / r->point.id).string();
            if (std::optional<PointResult> done = readFinishedPoint(folder)) {
                r->result = std::move(done);
                r->reused = true;
                ++meta.reused;
                finishPoint(*r, r->result->diverged ? PointStatus::Diverged : PointStatus::Done);
                continue;
            }
            std::error_code ec;
            fs::remove_all(folder, ec); // what an unfinished run left
            PointLaunch launch;
            launch.id = r->point.id;
            launch.folder = folder;
            launch.args = pointArguments(r->point.options, folder, spec.configFile);
            if (parallelSim && r->point.engine == EngineKind::Sim && !r->point.measuresThisMachine
                && !std::getenv("OMP_NUM_THREADS"))
                launch.environment.emplace_back(
                    "OMP_NUM_THREADS", std::to_string(std::max(1U, cores / static_cast<unsigned>(executor.slots()))));
            const bool wasIdle = executor.running() == 0;
            const PointStart started = executor.start(launch);
            r->startedAt = studyClock() - startedAt;
            if (wasIdle)
                busyFrom = studyClock();
            r->rank = started.rank;
            running[r->point.id] = r;
            if (r->point.timesTheCores()) {
                coreTimerRunning = true;
                coreTimerId = r->point.id;
            }
            if (spec.progress)
                progressLine(
                    Json {{"study", "started"}, {"id", r->point.id}, {"rank", started.rank}, {"pid", started.pid}});
        }
        if (executor.running() == 0 && (stopping || !state.hasDue() || executor.slots() == 0))
            break;
        if (executor.ended())
            break; // (what still runs will not be heard of again: marked interrupted)
        if (stopping && studyClock() > stopDeadline)
            executor.kill();
        std::vector<const PointRecord*> lostNow;
        for (PointEnd& end : executor.wait(0.25)) {
            const auto it = running.find(end.id);
            if (it == running.end())
                continue;
            PointRecord& r = *it->second;
            running.erase(it);
            if (end.id == coreTimerId)
                coreTimerRunning = false;
            r.wallSeconds = end.wallSeconds;
            r.endedAt = studyClock() - startedAt;
            r.rank = end.rank;
            ++meta.ran;
            meta.pointSeconds += end.wallSeconds;
            const std::string folder = (fs::path(dir) / "points" / r.point.id).string();
            PointStatus status = PointStatus::Failed;
            if (end.lost) {
                status = PointStatus::Lost;
                r.message = end.problem;
            } else if (end.exitCode == 0 || end.exitCode == 3) {
                r.result = readFinishedPoint(folder);
                if (r.result)
                    status = r.result->diverged ? PointStatus::Diverged : PointStatus::Done;
                else
                    r.message = stopping ? "stopped before it finished" : "it ended without a complete summary.json";
                if (!r.result && stopping)
                    status = PointStatus::Interrupted;
            } else if (end.exitCode == 2) {
                status = PointStatus::Refused;
                r.message = end.problem;
            } else if (stopping) {
                status = PointStatus::Interrupted;
                r.message = "stopped by " + std::string(signal == SIGINT ? "SIGINT" : "SIGTERM");
            } else {
                r.message = "exit code " + std::to_string(end.exitCode)
                    + (end.problem.empty() ? std::string() : ": " + end.problem);
            }
            // Only a point that ran to its result tells what the others will take (a failed or refused one
            // ended early).
            if (status == PointStatus::Done || status == PointStatus::Diverged)
                timeLeft.ran(end.wallSeconds, r.result->wallClockSeconds, static_cast<double>(r.point.steps));
            // (a point lost with its rank is said in the job's one line below)
            finishPoint(r, status, !(status == PointStatus::Lost && executor.ended()));
            if (status == PointStatus::Lost) {
                meta.problems.push_back("point " + plan.describe(r.point) + " lost: " + end.problem);
                ++lostPoints;
                lostNow.push_back(&r);
            }
        }
        if (executor.ended() && !endSaid) {
            // The job ends (mpirun ends it when one of its processes dies): said once, here, with the points lost.
            endSaid = true;
            std::vector<std::string> lostNames;
            for (const PointRecord* r : lostNow)
                lostNames.push_back(plan.describe(r->point));
            std::fprintf(stderr, "sgdscope: %s\n",
                jobEndLine(executor.endReason(), lostNames, static_cast<int>(running.size())).c_str());
            if (lostNow.empty())
                meta.problems.push_back("the job ended: " + executor.endReason());
            meta.problemsSaid = meta.problems.size();
        }
        if (!lostNow.empty() || executor.ended()) {
            // Written at once: mpirun ends the whole job when one of its processes dies.
            writeStudyFiles(dir, state, meta, "incomplete");
            lastWrite = studyClock();
        }
        if (busyFrom >= 0 && executor.running() == 0) {
            meta.busySeconds += studyClock() - busyFrom;
            busyFrom = -1.0;
        }
        if (changed && studyClock() - lastWrite >= writeInterval) {
            writeStudyFiles(dir, state, meta, "running");
            lastWrite = studyClock();
            changed = false;
        }
    }
    if (busyFrom >= 0)
        meta.busySeconds += studyClock() - busyFrom;
    meta.residentAfterLast = residentBytes();

    // What did not finish: failed, lost with a rank and refused (the study is incomplete), and the points the same
    // command runs again (all but the refused: those would be refused again).
    int failed = 0;
    int lost = 0;
    int refused = 0;
    int again = 0;
    for (const PointRecord* r : state.records()) {
        failed += r->status == PointStatus::Failed ? 1 : 0;
        lost += r->status == PointStatus::Lost ? 1 : 0;
        refused += r->status == PointStatus::Refused ? 1 : 0;
        again += r->status == PointStatus::Failed || r->status == PointStatus::Lost
                || r->status == PointStatus::Interrupted || r->status == PointStatus::Running
                || r->status == PointStatus::Pending
            ? 1
            : 0;
    }
    const bool incomplete = failed + lost + refused > 0 || executor.ended();
    const std::string status = statusText(state, signal, incomplete);
    writeStudyFiles(dir, state, meta, status);
    if (frontEnd.charts) {
        const double chartsFrom = studyClock();
        try {
            for (const std::string& problem : frontEnd.charts(dir, tableOf(state)))
                meta.problems.push_back("charts: " + problem);
        } catch (const std::exception& e) {
            meta.problems.push_back(std::string("charts: ") + e.what());
        }
        meta.chartSeconds = studyClock() - chartsFrom;
        writeStudyFiles(dir, state, meta, status);
    }
    const double wall = studyClock() - startedAt;
    std::string unfinished;
    for (const auto& [count, what] :
        {std::pair {failed, "failed"}, std::pair {lost, "lost"}, std::pair {refused, "refused"}})
        unfinished += count > 0 ? ", " + std::to_string(count) + " " + what : std::string();
    std::fprintf(stderr,
        "study %s: %d of %d points finished (%d run now, %d kept from an earlier run%s) in %s s, %.1f%% of it with "
        "no point running (the study's own work); %s\n",
        status.c_str(), state.finishedCount(), state.total(), meta.ran, meta.reused, unfinished.c_str(),
        secondsText(wall).c_str(), wall > 0 ? 100.0 * std::max(0.0, wall - meta.busySeconds) / wall : 0.0,
        (fs::path(dir) / "study.json").string().c_str());
    for (std::size_t i = meta.problemsSaid; i < meta.problems.size(); ++i)
        std::fprintf(stderr, "study: %s\n", meta.problems[i].c_str());
    if (refused > 0)
        std::fprintf(stderr,
            "study: %d point%s refused by %s own run (study.json says why): the same command would refuse %s again; "
            "change the options or leave %s out of the axes\n",
            refused, refused == 1 ? " was" : "s were", refused == 1 ? "its" : "their", refused == 1 ? "it" : "them",
            refused == 1 ? "it" : "them");
    if ((incomplete || signal != 0) && again > 0)
        std::fprintf(stderr,
            "study: %s; the same command runs the %d point%s that did not finish (failed, lost, interrupted or not "
            "started) and keeps the finished ones\n",
            status.c_str(), again, again == 1 ? "" : "s");
    if (spec.progress)
        progressLine(
            Json {{"study", "end"}, {"status", status}, {"finished", state.finishedCount()}, {"total", state.total()}});
    if (incomplete)
        return 1;
    if (signal != 0)
        return interruptedExitCode(signal) == 0 ? 0 : 128 + signal;
    return 0;
}

int runStudy(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd)
{
    const double startedAt = studyClock();
    installInterruptHandlers();
    std::optional<StudyPlan> plan;
    try {
        plan = StudyPlan::make(spec, configText);
        prepareStudyFolder(spec.dir, spec.identity(configText));
    } catch (const SgdError& e) {
        std::fprintf(stderr, "sgdscope: %s\n", e.what());
        return 2;
    }
    LocalPointExecutor executor(spec.jobs);
    try {
        return runStudyPoints(
            *plan, configText, executor, frontEnd, "-j " + std::to_string(spec.jobs) + " on this machine", startedAt);
    } catch (const SgdError& e) {
        std::fprintf(stderr, "sgdscope: %s\n", e.what());
        return 1;
    }
}

} // namespace sgdscope
