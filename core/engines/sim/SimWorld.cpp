#include "core/engines/sim/SimWorld.h"

#include "core/common/Error.h"
#include "core/engines/sim/StarNetwork.h"

#include <simgrid/Exception.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sgdscope {

namespace sg4 = simgrid::s4u;

namespace {
/// SGDSCOPE_SIM_NETWORK: "simgrid" times the built-in clusters' messages by SimGrid's own solver (to check
/// StarNetwork against it), "star" or unset by StarNetwork.
bool starNetworkWanted()
{
    const char* value = std::getenv("SGDSCOPE_SIM_NETWORK");
    const std::string choice = value ? value : "";
    if (choice.empty() || choice == "star")
        return true;
    if (choice == "simgrid")
        return false;
    throw SgdError("SGDSCOPE_SIM_NETWORK: '" + choice + "' is not a network model; use star or simgrid");
}
} // namespace

std::string networkModelOf(const SimPlatformChoice& choice)
{
    if (!choice.platformFile.empty())
        return "simgrid";
    if (linkFiguresOf(choice.cluster).sharedFreely)
        return "none";
    return starNetworkWanted() ? "star" : "simgrid";
}

SimWorld& SimWorld::get()
{
    // Never destroyed: SimGrid's engine lives until the process ends (a second one may not be made).
    static SimWorld* world = new SimWorld();
    return *world;
}

SimWorld::SimWorld()
{
    xbt_log_control_set("root.thresh:critical"); // SimGrid's own messages are not the user's business
    // Its deadlock report too: a stalled simulation is our error (run()).
    xbt_log_control_set("ker_engine.app:file:/dev/null ker_engine.additivity:off");
    static char name[] = "sgdscope";
#if defined(SGDSCOPE_SANITIZE_ADDRESS)
    // AddressSanitizer does not follow SimGrid's own stack switching (it warns that false positives may follow,
    // and reports one when an actor's stack unwinds): under it, every actor is a thread of its own.
    static char threads[] = "--cfg=contexts/factory:thread";
    static int argc = 2;
    static char* argv[] = {name, threads, nullptr};
#else
    static int argc = 1;
    static char* argv[] = {name, nullptr};
#endif
    m_engine = new sg4::Engine(&argc, argv);
    // The network model whose latency and bandwidth are what the platform says (the default LV08 scales
    // latency by 13 and caps TCP windows), without simulated acknowledgement traffic.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/TCP-gamma", 1e12);
    sg4::Engine::set_config("network/crosstraffic", false);
    // A simulation that stops with actors still waiting (a host turned off by its state profile, a speed or
    // bandwidth profile that falls to 0): an error, not results.
    sg4::Engine::on_deadlock_cb([this] { m_stalledAt = clock(); });
}

void SimWorld::ensurePlatform(const SimPlatformChoice& choice, int hosts)
{
    if (m_built) {
        if (!(choice == m_choice) || (choice.platformFile.empty() && static_cast<int>(m_hosts.size()) < hosts))
            throw SgdError("the simulated cluster of this process cannot change (SimGrid runs one platform per "
                           "process); start a new run");
        return;
    }
    const bool starNetwork = starNetworkWanted(); // before anything is built: a bad value leaves nothing half-made
    if (!choice.platformFile.empty()) {
        m_engine->load_platform(choice.platformFile);
        m_engine->seal_platform();
        m_hosts = m_engine->get_all_hosts();
    } else {
        const LinkFigures link = linkFiguresOf(choice.cluster, choice.mpiLink);
        if (!(link.bandwidth > 0) || !(link.latency >= 0))
            throw SgdError("--cluster " + nameOf(clusterNames, choice.cluster)
                + ": its links were not measured (a bandwidth of " + std::to_string(link.bandwidth) + " B/s)");
        auto* zone = sg4::create_star_zone("cluster");
        for (int i = 0; i < hosts; ++i) {
            const std::string name = "host" + std::to_string(i);
            sg4::Host* host = zone->create_host(name, choice.hostFlops)->seal();
            if (link.sharedFreely) {
                sg4::Link* l = zone->create_link(name + "-link", link.bandwidth)
                                   ->set_latency(link.latency)
                                   ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                                   ->seal();
                zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(l)}, true);
            } else {
                sg4::Link* l
                    = zone->create_split_duplex_link(name + "-link", link.bandwidth)->set_latency(link.latency)->seal();
                zone->add_route(
                    host->get_netpoint(), nullptr, nullptr, nullptr, {{l, sg4::LinkInRoute::Direction::UP}}, true);
            }
            m_hosts.push_back(host);
        }
        zone->seal();
        m_engine->seal_platform();
        if (!link.sharedFreely && starNetwork) {
            m_star = std::make_unique<StarNetwork>(hosts, link.bandwidth, link.latency);
            for (int i = 0; i < hosts; ++i) {
                const auto id = static_cast<std::size_t>(m_hosts[static_cast<std::size_t>(i)]->get_netpoint()->id());
                m_hostIndex.resize(std::max(m_hostIndex.size(), id + 1), -1);
                m_hostIndex[id] = i;
            }
        }
    }
    if (choice.platformFile.empty() && static_cast<int>(m_hosts.size()) < hosts)
        throw SgdError("the simulated cluster has " + std::to_string(m_hosts.size()) + " hosts, and this run needs "
            + std::to_string(hosts));
    m_choice = choice;
    m_built = true;
}

std::vector<sg4::Host*> SimWorld::place(int workers, bool server)
{
    m_coreShare = m_choice.measuresMpi() ? m_choice.mpiLink.coreShare(workers + (server ? 1 : 0)) : 1.0;
    std::vector<int> cores;
    for (const sg4::Host* h : m_hosts)
        cores.push_back(h->get_core_count());
    std::vector<int> hostOf;
    if (const std::string why = placeWorkers(cores, workers, server, m_choice.placement, hostOf); !why.empty())
        throw SgdError("--workers: " + std::to_string(workers) + " cannot run on the simulated cluster: " + why);
    std::vector<sg4::Host*> placed;
    for (const int h : hostOf)
        placed.push_back(m_hosts[static_cast<std::size_t>(h)]);
    return placed;
}

double SimWorld::memoryWork(double flops, double bytes) const
{
    const double bandwidth = m_choice.calibration.memoryBytesPerSecond;
    if (!stepsMeasured() || !(bandwidth > 0))
        return flops;
    return bytes / bandwidth * m_choice.hostFlops;
}

void SimWorld::compute(double flops)
{
    if (flops > 0) {
        get().m_lastStart = clock();
        sg4::this_actor::execute(flops / get().m_coreShare);
    }
}

double SimWorld::computeDelayed(double flops, double factor)
{
    const double start = clock();
    compute(flops * factor);
    return factor > 1.0 ? start + (clock() - start) / factor : clock();
}

bool SimWorld::computeCancellable(double flops, std::shared_ptr<void>& running)
{
    if (!(flops > 0))
        return true;
    get().m_lastStart = clock();
    auto exec = std::make_shared<sg4::ExecPtr>(sg4::this_actor::exec_async(flops / get().m_coreShare));
    running = exec;
    bool completed = true;
    try {
        (*exec)->wait();
    } catch (const simgrid::CancelException&) {
        completed = false;
    }
    running.reset();
    return completed;
}

void SimWorld::cancel(const std::shared_ptr<void>& running)
{
    if (running)
        (*static_cast<sg4::ExecPtr*>(running.get()))->cancel();
}

void SimWorld::guarded(std::exception_ptr& failure, const std::function<void()>& body)
{
    try {
        body();
    } catch (const simgrid::ForcefulKillException&) {
        throw; // killed by another actor's failure: SimGrid unwinds this one's stack
    } catch (...) {
        if (!failure)
            failure = std::current_exception();
        sg4::Actor::kill_all();
    }
}

void SimWorld::send(sg4::Host* from, sg4::Host* to, std::uint64_t bytes)
{
    if (!costlessNetwork() && from != to) {
        m_lastStart = clock();
        if (m_star)
            m_star->transfer(m_hostIndex[from->get_netpoint()->id()], m_hostIndex[to->get_netpoint()->id()],
                static_cast<double>(bytes));
        else
            sg4::Comm::sendto(from, to, bytes);
    }
}

namespace {
// SimGrid ends an activity when the clock is within its precision of the activity's end; the clock's own
// rounding is one unit in its last place (2^-52 of it). So the precision must stay well above that, and as fine
// as possible: SimGrid's default of 1 ns ends every activity within a nanosecond of its end at once, where the
// parabola's update is 0.64 ns of work and its pushes 6 ns. It is kept between 2^-44 and 2^-43 of the clock (at
// least 256 times the clock's rounding), and never below a femtosecond.
constexpr double finestPrecision = 1e-15;
constexpr double precisionPerSecond = 0x1p-44;

void keepPrecisionUntil(double end)
{
    sg4::Engine::set_config("surf/precision", std::max(finestPrecision, end * precisionPerSecond));
}
} // namespace

void SimWorld::run()
{
    // The precision follows the clock: set for [now, twice now] and raised by a daemon actor each time the clock
    // doubles (it ends with the last other actor).
    const double firstRaise = std::max(2.0 * clock(), finestPrecision / precisionPerSecond);
    keepPrecisionUntil(2.0 * std::max(clock(), firstRaise));
    // It stops at 10^12 virtual seconds: its sleeps would otherwise keep a stalled simulation going forever.
    sg4::Actor::create("precision", m_hosts.front(), [firstRaise] {
        for (double at = firstRaise; at < 1e12; at *= 2.0) {
            sg4::this_actor::sleep_until(at);
            keepPrecisionUntil(2.0 * at);
        }
    })->daemonize();
    if (m_star)
        m_star->start(m_hosts.front());
    m_stalledAt = -1.0;
    m_lastStart = clock();
    m_engine->run();
    if (m_star && m_star->failure())
        std::rethrow_exception(m_star->failure());
    if (m_stalledAt >= 0.0) {
        char at[32];
        std::snprintf(at, sizeof at, "%.9g", m_lastStart);
        throw SgdError(std::string("the simulation stalled after virtual second ") + at
            + ", when work or a message last started: its actors wait for work or messages that never end (a "
              "host turned off, or a speed or bandwidth that fell to 0?)");
    }
}

double SimWorld::clock()
{
    return sg4::Engine::get_clock();
}

} // namespace sgdscope
