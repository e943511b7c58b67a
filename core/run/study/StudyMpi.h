#pragma once

#include "core/run/study/StudyRunner.h"

namespace sgdscope {

/// `mpirun -np N sgdscope --study DIR ...`: the same study, its points shared out among the ranks. Rank 0 checks
/// the study (as on one machine), hands out the points as ranks become free, and writes DIR; ranks 1 to N - 1 each
/// run the points they are given (one at a time, or -j at once) as child processes, each into a folder of its own
/// on their machine, and send the folder's files back to rank 0, which writes them into the point's run folder.
/// The table is the one -j 1 gives (results do not depend on who ran what). A study of simulated points so runs
/// on a cluster's hosts.
///
/// Every rank watches the others (engines/mpi/PeerWatch.h, --peer-timeout's silence of 6 s): a rank that dies
/// loses at most the points it was running; rank 0 names it, marks them lost (the study is incomplete: the same
/// command again runs them) and writes the study's files at once. Open MPI's mpirun then ends the whole job (its
/// default); where it does not, rank 0 goes on with the living ranks. A stop signal (mpirun passes SIGINT and
/// SIGTERM on) stops the running points on every rank and marks them as one machine's study does.
///
/// Returns the exit code, as runStudy does.
int runStudyOnRanks(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd);

/// `sgdscope --study ...` as the front end starts it: on the ranks of an MPI job when under mpirun with several
/// processes (runStudyOnRanks), else on this machine (runStudy).
int startStudy(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd);

} // namespace sgdscope
