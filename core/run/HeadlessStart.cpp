#include "core/run/HeadlessStart.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/run/MpiJob.h"

#include <iostream>

namespace sgdscope {

int refuseRun(const std::string& problem, bool sameOnEveryRank)
{
    // Under mpirun with several processes, the others may have no problem at all: the processes agree first,
    // so that this one's problem reaches the user (once, with its rank when the others do not share it).
    if (MpiContext::environmentSize() > 1)
        return runMpiJob(nullptr, problem, {}, {});
    const int rank = MpiContext::environmentRank();
    if (!sameOnEveryRank && rank > 0)
        std::cerr << "sgdscope: rank " << rank << ": " << problem << '\n';
    else
        std::cerr << "sgdscope: " << problem << '\n';
    return 2;
}

int startHeadlessRun(const RunConfig& config, const ChartWriter& charts, const ProgressFactory& progress)
{
    // Every process of an MPI job runs the job's part (core/run/MpiJob), which refuses any other engine
    // under mpirun with several processes.
    if (config.engine == EngineKind::Mpi || MpiContext::environmentSize() > 1)
        return runMpiJob(&config, {}, charts, progress);
    PreparedRun run;
    try {
        // Everything that can be wrong with the input is found before anything is written.
        run = prepareRun(config);
        prepareOutputs(config);
    } catch (const SgdError& e) {
        if (const int sig = interruptSignal()) {
            // Interrupted before training began: there is nothing to summarise.
            std::cerr << "sgdscope: interrupted before training began; nothing written\n";
            return interruptedExitCode(sig);
        }
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 2;
    }
    noteBeforeTraining(run, config, config.workers, config.workers);
    std::vector<std::unique_ptr<HeadlessModeRun>> runs;
    runs.reserve(modesOf(config).size()); // keeping a mode's result takes no memory when it ran out
    try {
        std::string outsideFailure; // a mode's failure outside its training (those within are in its result)
        for (const Mode mode : modesOf(config)) {
            if (interruptSignal() != 0 && !runs.empty())
                break;
            try {
                runs.push_back(trainMode(run, mode, progress));
            } catch (const std::bad_alloc&) {
                // Out of memory outside the mode's training (making its recorder or trainer, or its result, where
                // run/Experiment holds no memory back): its records are lost; the modes done so far are written.
                outsideFailure = std::string("out of memory in ") + modeName(mode) + ", outside its training"
                    + (runs.empty() ? std::string() : " (the modes before it are kept)");
            }
            const std::string& failure = outsideFailure.empty() ? runs.back()->result.failure : outsideFailure;
            if (!failure.empty()) {
                // (Said before the files are written: writing them may fail for the same reason.)
                std::cerr << "sgdscope: " << failure << "; " << config.out << "/summary.json says what was done\n";
                break;
            }
        }
        return writeResults(run, runs, charts, Json(), outsideFailure);
    } catch (const std::bad_alloc&) {
        std::cerr << "sgdscope: out of memory during the run\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 1;
    }
}

} // namespace sgdscope
