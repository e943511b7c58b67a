#include "core/engines/sim/SimWorld.h"

#include "core/common/Error.h"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

namespace sgdscope {

namespace sg4 = simgrid::s4u;

SimWorld& SimWorld::get()
{
    // Never destroyed: SimGrid's engine lives until the process ends (a second one may not be made).
    static SimWorld* world = new SimWorld();
    return *world;
}

SimWorld::SimWorld()
{
    xbt_log_control_set("root.thresh:critical"); // SimGrid's own messages are not the user's business
    static int argc = 1;
    static char name[] = "sgdscope";
    static char* argv[] = {name, nullptr};
    m_engine = new sg4::Engine(&argc, argv);
    // The network model whose latency and bandwidth are what the platform says (the default LV08 scales
    // latency by 13 and caps TCP windows), without simulated acknowledgement traffic.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/TCP-gamma", 1e12);
    sg4::Engine::set_config("network/crosstraffic", false);
    // Time to the femtosecond: SimGrid's default of 1 ns ends every activity within a nanosecond of its end at
    // once, and rounds sleeps up to it; the parabola's update is 0.64 ns of work, its pushes 6 ns.
    sg4::Engine::set_config("surf/precision", 1e-15);
}

void SimWorld::ensurePlatform(const SimPlatformChoice& choice, int hosts)
{
    if (m_built) {
        if (!(choice == m_choice) || (choice.platformFile.empty() && static_cast<int>(m_hosts.size()) < hosts))
            throw SgdError("the simulated cluster of this process cannot change (SimGrid runs one platform per "
                           "process); start a new run");
        return;
    }
    if (!choice.platformFile.empty()) {
        m_engine->load_platform(choice.platformFile);
        m_engine->seal_platform();
        m_hosts = m_engine->get_all_hosts();
    } else {
        const LinkFigures link = linkFiguresOf(choice.cluster);
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
    }
    if (choice.platformFile.empty() && static_cast<int>(m_hosts.size()) < hosts)
        throw SgdError("the simulated cluster has " + std::to_string(m_hosts.size()) + " hosts, and this run needs "
            + std::to_string(hosts));
    m_choice = choice;
    m_built = true;
}

std::vector<sg4::Host*> SimWorld::place(int workers, bool server) const
{
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
    if (flops > 0)
        sg4::this_actor::execute(flops);
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

void SimWorld::send(sg4::Host* from, sg4::Host* to, std::uint64_t bytes) const
{
    if (!costlessNetwork() && from != to)
        sg4::Comm::sendto(from, to, bytes);
}

void SimWorld::run()
{
    m_engine->run();
}

double SimWorld::clock()
{
    return sg4::Engine::get_clock();
}

} // namespace sgdscope
