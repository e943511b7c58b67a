#pragma once

#include "core/engines/mpi/PeerWatch.h"

#include <mpi.h>

#include <memory>

namespace sgdscope {

/// The watch's beats between the processes of an MPI job (PeerWatch's BeatChannel) on `comm`, a communicator of
/// their own, so that they never match the training's messages: a send does not wait, and at most a few beats are
/// under way to a peer at once (a peer that takes none gets no more); a receive takes a beat that has arrived, if
/// any. For the MPI engine's own files: it needs <mpi.h>, which the other headers keep out.
std::unique_ptr<BeatChannel> makeMpiBeatChannel(MPI_Comm comm);

} // namespace sgdscope
