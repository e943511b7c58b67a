#pragma once

#include "core/common/NamedValues.h"

#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// The built-in simulated clusters. Every one is a star: each host has its own full-duplex link to one
/// switch, so a message from host i to host j crosses link i then link j (twice the link latency), and
/// messages contend only on the links they share (e.g. every worker's link into a parameter server's).
enum class ClusterKind
{
    Ideal, // equal hosts, network without cost: the textbook model
    Local, // hosts as fast as one core of this machine (measured at start), a memory-bus-like network
    Datacenter, // 10 Gb/s links, 10 us per link (20 us host to host)
    Wan, // 1 Gb/s links, 15 ms per link (30 ms host to host)
};
inline constexpr NameTable<ClusterKind, 4> clusterNames {{{"ideal", ClusterKind::Ideal}, {"local", ClusterKind::Local},
    {"datacenter", ClusterKind::Datacenter}, {"wan", ClusterKind::Wan}}};

/// A host speed for clusters that do not measure this machine: 50 Gflop/s, about what one AVX-512 core
/// sustains on this project's GEMM-bound training step (fashion-mnist: 6.9 Mflop per sample at 80k
/// samples/s here is 55 Gflop/s).
inline constexpr double nominalHostFlops = 50e9;

/// One link's figures.
struct LinkFigures
{
    double bandwidth = 0.0; // bytes per second
    double latency = 0.0; // seconds
    bool sharedFreely = false; // FATPIPE: every flow gets the whole bandwidth (no contention)
};

/// What a built-in cluster is made of; `hostFlops` for Local is the measured speed (given by the caller).
LinkFigures linkFiguresOf(ClusterKind kind);

/// One line per built-in cluster with its figures, for --help and the README.
std::string clusterFiguresText();

/// The pairs of hosts (by index) whose routes a run uses, both ways: sync's reduction tree (child to parent,
/// and the broadcast back) and, for async, every worker with the parameter server (host `workers`).
std::vector<std::pair<int, int>> routesNeeded(int workers, bool sync, bool async);

/// Checks a SimGrid platform file in a child process (SimGrid aborts the process on some errors, e.g. a
/// missing route, and allows one platform per process): that it loads, has at least `hostsNeeded` hosts,
/// and that each of `pairs` of host indices has a route. Returns "" if usable, else the reason in one line.
std::string checkPlatformFile(const std::string& path, int hostsNeeded, const std::vector<std::pair<int, int>>& pairs);

} // namespace sgdscope
