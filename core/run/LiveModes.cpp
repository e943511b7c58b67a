#include "core/run/LiveModes.h"

#include "core/common/Error.h"
#include "core/engines/TrainerFactory.h"
#include "core/io/ParameterDigest.h"
#include "core/run/EngineShapes.h"
#include "core/run/SettingsCheck.h"
#include "core/train/ReductionPlan.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>

namespace sgdscope {

namespace {
std::string plural(long long n, const char* one, const char* many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}
} // namespace

TrainerSettings settingsForMode(TrainerSettings t, Mode mode)
{
    if (mode == Mode::DcAsgd)
        t.asyncApply = AsyncApply::Lock;
    return t;
}

void checkBackupWorkers(const TrainerSettings& t, bool runsBackup)
{
    if (runsBackup && t.backupWorkers >= t.workers)
        throw SgdError("--backup-workers: " + std::to_string(t.backupWorkers) + " is not allowed with "
            + std::to_string(t.workers) + (t.workers == 1 ? " worker" : " workers") + "; use 0 to "
            + std::to_string(std::max(0, t.workers - 1)) + " (each update applies at least one gradient)");
}

EvaluationRecord evaluateInitialParameters(const PreparedRun& run, TrainerSettings t)
{
    t.workers = 1;
    t.stragglers.clear();
    auto trainer = makeTrainer(run.engine, Mode::Sync, run.problem, t);
    TrainingObserver nobody;
    return trainer->currentEvaluation(nobody);
}

LiveModes::LiveModes(const PreparedRun& run, const std::vector<Mode>& modes, const TrainerSettings& initial)
    : m_run(run)
    , m_simSliceUpdates(modes.size(), 1)
{
    validateSettings(initial, *run.problem);
    checkBackupWorkers(initial, std::find(modes.begin(), modes.end(), Mode::Backup) != modes.end());
    for (const Mode mode : modes)
        m_trainers.push_back(makeTrainer(run.engine, mode, run.problem, settingsForMode(initial, mode)));
}

LiveModes::~LiveModes() = default;

Mode LiveModes::mode(int m) const
{
    return m_trainers.at(static_cast<std::size_t>(m))->mode();
}

void LiveModes::reconfigure(const TrainerSettings& settings)
{
    validateSettings(settings, *m_run.problem);
    checkBackupWorkers(settings,
        std::any_of(m_trainers.begin(), m_trainers.end(), [](const auto& t) { return t->mode() == Mode::Backup; }));
    const SimPlatformChoice& sim = m_run.engine.sim;
    if (m_run.engine.kind == EngineKind::Sim && !sim.platformFile.empty()) {
        // More workers on a platform file: its routes between them are checked first (SimGrid ends the process
        // on a missing route).
        const std::string why = platformFileProblem(sim.platformFile, settings.workers, sim.placement, m_run.config);
        if (!why.empty())
            throw SgdError("the platform file cannot take " + std::to_string(settings.workers) + " workers: " + why);
    }
    for (auto& trainer : m_trainers)
        trainer->reconfigure(settingsForMode(settings, trainer->mode()));
}

ModeStanding LiveModes::standing(int m) const
{
    return standingOf(*m_trainers.at(static_cast<std::size_t>(m)));
}

void LiveModes::evaluateNow(int m, TrainingObserver& observer)
{
    m_trainers.at(static_cast<std::size_t>(m))->currentEvaluation(observer);
}

bool LiveModes::runSlice(int m, TrainingObserver& observer, double sliceSeconds)
{
    Trainer& trainer = *m_trainers.at(static_cast<std::size_t>(m));
    if (trainer.finished())
        return false;
    if (m_run.engine.kind != EngineKind::Sim) {
        trainer.run(RunLimits {std::numeric_limits<std::int64_t>::max(), sliceSeconds}, observer);
        return true;
    }
    // A simulated slice: as many updates as take about a slice of this machine's time (the modes' clocks are
    // virtual, so the slice is measured in updates).
    std::int64_t& updates = m_simSliceUpdates[static_cast<std::size_t>(m)];
    // A pushing mode's slice hands pushes out to the workers in turn and drains them at its end: fewer pushes
    // than a few per worker would leave most workers without work.
    if (!isSyncLike(trainer.mode()))
        updates = std::max<std::int64_t>(updates, 4LL * trainer.settings().workers);
    const auto start = std::chrono::steady_clock::now();
    trainer.run(RunLimits {updates, std::numeric_limits<double>::infinity()}, observer);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (wall < sliceSeconds / 2)
        updates = std::min<std::int64_t>(updates * 2, 1 << 20);
    else if (wall > sliceSeconds * 2)
        updates = std::max<std::int64_t>(updates / 2, 1);
    return true;
}

std::string LiveModes::digest(int m) const
{
    return parameterDigest(m_run.problem->layout, m_trainers.at(static_cast<std::size_t>(m))->parameters().data());
}

std::vector<std::string> LiveModes::notes(const TrainerSettings& t) const
{
    const ChunkLayout layout(t.batch, chunkSizeFor(t.chunk, t.batch));
    std::vector<std::string> notes;
    notes.push_back("Team-wide updates split each batch of " + std::to_string(t.batch) + " into "
        + plural(layout.chunkCount, "chunk", "chunks") + " of " + plural(layout.chunkSize, "sample", "samples")
        + " (the unit of their exact, fixed-order sum).");
    if (t.workers > layout.chunkCount)
        notes.push_back("The batch of " + std::to_string(t.batch) + " is too small for " + std::to_string(t.workers)
            + " workers: in sync-like modes, workers beyond " + std::to_string(layout.chunkCount)
            + " have no chunk and idle; in pushing modes, workers beyond " + std::to_string(t.batch)
            + " have no samples.");
    if (!m_run.dataNote.empty()) {
        std::string note = m_run.dataNote + ".";
        note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
        notes.push_back(note);
    }
    const EngineChoice& engine = m_run.engine;
    if (const LocalCalibration& c = engine.sim.calibration; engine.kind == EngineKind::Sim && c.busy())
        notes.push_back("The local cluster was measured on a busy machine (its threads waited for a core "
            + std::to_string(std::lround(100.0 * std::max(0.0, c.waitedForACoreShare)))
            + "% of the time they wanted one, its steps spread by " + std::to_string(std::lround(100.0 * c.spread))
            + "%): its speeds describe this load, not this machine.");
    if (const MpiLinkCalibration& l = engine.sim.mpiLink;
        engine.kind == EngineKind::Sim && engine.sim.measuresMpi() && l.busy())
        notes.push_back("Open MPI's messages were measured on a busy machine (the probe's ranks waited for a core "
            + std::to_string(std::lround(100.0 * std::max(0.0, l.waitedForACoreShare)))
            + "% of the time they wanted one, its round trips spread by "
            + std::to_string(std::lround(100.0 * l.bandwidthSpread))
            + "%): the local-mpi links describe this load, not this machine.");
    return notes;
}

} // namespace sgdscope
