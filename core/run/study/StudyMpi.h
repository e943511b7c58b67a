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
/// Every rank watches the others (engines/mpi/PeerWatch.h, a silence of 6 s): a rank that dies ends the study.
/// Open MPI 4.1's mpirun ends the whole job when one of its processes dies (SIGTERM to the others, SIGKILL a second
/// later; it goes on only under `mpirun --enable-recovery`, which this study does not rely on), so rank 0 ends it
/// itself, at once: it tells the living ranks that it ends the job (they stop their points and leave without a
/// word), marks the dead rank's points lost and the points still running elsewhere interrupted, keeps every finished
/// point, says in one line which rank died and with which point, and writes the study's files (incomplete: the
/// same command runs the rest). Each rank's scratch folder (its points' run folders until they are sent) is removed
/// as it leaves; one a killed rank left behind is removed by the next study under mpirun on its machine. A stop
/// signal (mpirun passes SIGINT and SIGTERM on) stops the running points on every rank and marks them as one
/// machine's study does.
///
/// Returns the exit code, as runStudy does.
int runStudyOnRanks(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd);

/// `sgdscope --study ...` as the front end starts it: on the ranks of an MPI job when under mpirun with several
/// processes (runStudyOnRanks), else on this machine (runStudy).
int startStudy(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd);

} // namespace sgdscope
