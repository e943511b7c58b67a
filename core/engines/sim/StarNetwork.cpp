#include "core/engines/sim/StarNetwork.h"

#include "core/common/Error.h"
#include "core/engines/sim/SimWorld.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <string>

namespace sgdscope {

namespace sg4 = simgrid::s4u;

StarNetwork::StarNetwork(int hosts, double bandwidth, double linkLatency)
    : m_bandwidth(bandwidth)
    , m_latency(2.0 * linkLatency)
    , m_links(2 * static_cast<std::size_t>(hosts))
{
}

void StarNetwork::start(sg4::Host* host)
{
    for (Link& l : m_links)
        l = Link();
    m_flows.clear();
    m_free.clear();
    m_events = {};
    m_wake = sg4::Semaphore::create(0);
    m_armed = std::numeric_limits<double>::infinity();
    m_failure = nullptr;
    sg4::Actor::create("network", host, [this] { SimWorld::guarded(m_failure, [this] { serve(); }); })->daemonize();
}

void StarNetwork::transfer(int from, int to, double bytes)
{
    // Creating a semaphore is a call into SimGrid, which lets other actors run (and grow m_flows) meanwhile.
    sg4::SemaphorePtr fresh;
    if (m_free.empty())
        fresh = sg4::Semaphore::create(0);
    int slot = 0;
    if (m_free.empty()) {
        slot = static_cast<int>(m_flows.size());
        m_flows.emplace_back();
        m_flows.back().done = std::move(fresh);
    } else {
        slot = m_free.back();
        m_free.pop_back();
    }
    Flow& f = m_flows[static_cast<std::size_t>(slot)];
    f.bytes = bytes;
    f.links[0] = 2 * from;
    f.links[1] = 2 * to + 1;
    f.queuedAt = -1;
    f.serial = ++m_serial;
    f.started = f.serial;
    const double at = sg4::Engine::get_clock() + m_latency;
    m_events.push({at, ++m_serial, true, slot, f.serial});
    const sg4::SemaphorePtr done = f.done; // f may move: m_flows grows while this actor waits
    if (at < m_armed) {
        m_armed = at;
        m_wake->release();
    }
    done->acquire();
    m_free.push_back(slot);
}

void StarNetwork::serve()
{
    while (true) {
        const double now = sg4::Engine::get_clock();
        // SimGrid ends a wait within its precision (SimWorld: at most 2^-43 of the clock) of its end.
        const double tolerance = std::max(1e-15, now * 0x1p-42);
        while (!m_events.empty() && m_events.top().at <= now + tolerance) {
            const Event e = m_events.top();
            m_events.pop();
            if (stale(e))
                continue;
            if (e.arrival)
                arrive(e.index, now);
            else
                depart(e.index, now);
        }
        while (!m_events.empty() && stale(m_events.top())) // a departure that an arrival made later
            m_events.pop();
        m_armed = m_events.empty() ? std::numeric_limits<double>::infinity() : m_events.top().at;
        if (m_events.empty())
            m_wake->acquire();
        else
            m_wake->acquire_timeout(m_armed - now);
    }
}

bool StarNetwork::stale(const Event& e) const
{
    return e.arrival ? m_flows[static_cast<std::size_t>(e.index)].serial != e.tag
                     : m_links[static_cast<std::size_t>(e.index)].generation != e.tag;
}

void StarNetwork::advance(Link& link, double now) const
{
    if (link.queued > 0 && now > link.updatedAt)
        link.virtualTime += (now - link.updatedAt) * m_bandwidth / link.queued;
    link.updatedAt = std::max(link.updatedAt, now);
}

const StarNetwork::Entry* StarNetwork::front(Link& link) const
{
    const int index = static_cast<int>(&link - m_links.data());
    while (!link.queue.empty()) {
        const Entry& e = link.queue.top();
        const Flow& f = m_flows[static_cast<std::size_t>(e.flow)];
        if (f.serial == e.serial && f.queuedAt == index)
            return &e;
        link.queue.pop(); // a message served since, or moved to its other link
    }
    return nullptr;
}

void StarNetwork::schedule(int link)
{
    Link& l = m_links[static_cast<std::size_t>(link)];
    ++l.generation;
    if (const Entry* e = front(l))
        m_events.push({l.updatedAt + std::max(0.0, e->finish - l.virtualTime) * l.queued / m_bandwidth, ++m_serial,
            false, link, l.generation});
}

void StarNetwork::enqueue(int flow, int link, double remaining, double now)
{
    Link& l = m_links[static_cast<std::size_t>(link)];
    advance(l, now);
    Flow& f = m_flows[static_cast<std::size_t>(flow)];
    f.queuedAt = link;
    f.serial = ++m_serial; // its entries in other queues are stale from now on
    f.finish = l.virtualTime + std::max(0.0, remaining);
    l.queue.push({f.finish, f.started, flow, f.serial});
    ++l.queued;
    schedule(link);
}

void StarNetwork::dequeue(int flow, double now)
{
    Flow& f = m_flows[static_cast<std::size_t>(flow)];
    Link& l = m_links[static_cast<std::size_t>(f.queuedAt)];
    advance(l, now);
    const int link = f.queuedAt;
    f.bytes = std::max(0.0, f.finish - l.virtualTime); // what is left of it
    f.queuedAt = -1;
    l.passing = flow;
    if (--l.queued == 0) {
        l.queue = {};
        l.virtualTime = 0.0;
    }
    schedule(link);
}

void StarNetwork::arrive(int flow, double now)
{
    const int out = m_flows[static_cast<std::size_t>(flow)].links[0];
    const int in = m_flows[static_cast<std::size_t>(flow)].links[1];
    auto refuse = [&] {
        throw SgdError("the built-in cluster's network model cannot time a message from host " + std::to_string(out / 2)
            + " to host " + std::to_string(in / 2)
            + ": it shares both its links with other messages; run with SGDSCOPE_SIM_NETWORK=simgrid");
    };
    for (const int z : {out, in}) {
        Link& l = m_links[static_cast<std::size_t>(z)];
        ++l.messages;
        if (l.messages == 2 && l.passing >= 0) {
            // The message that crossed this link alone now shares it: it moves here, from its other link, which
            // must carry it alone from now on.
            const int g = l.passing;
            const Flow& moved = m_flows[static_cast<std::size_t>(g)];
            if (m_links[static_cast<std::size_t>(moved.queuedAt)].messages > 1)
                refuse();
            l.passing = -1;
            dequeue(g, now);
            enqueue(g, z, m_flows[static_cast<std::size_t>(g)].bytes, now);
        }
    }
    const double bytes = m_flows[static_cast<std::size_t>(flow)].bytes;
    if (m_links[static_cast<std::size_t>(out)].messages == 1) {
        m_links[static_cast<std::size_t>(out)].passing = flow;
        enqueue(flow, in, bytes, now);
    } else if (m_links[static_cast<std::size_t>(in)].messages == 1) {
        m_links[static_cast<std::size_t>(in)].passing = flow;
        enqueue(flow, out, bytes, now);
    } else {
        refuse();
    }
}

void StarNetwork::depart(int link, double now)
{
    Link& l = m_links[static_cast<std::size_t>(link)];
    const Entry* e = front(l);
    if (!e)
        return;
    const int flow = e->flow;
    advance(l, now);
    l.virtualTime = std::max(l.virtualTime, e->finish); // served exactly, whatever the clock's rounding
    l.queue.pop();
    Flow& f = m_flows[static_cast<std::size_t>(flow)];
    f.queuedAt = -1;
    f.serial = ++m_serial; // no longer in flight
    --l.messages;
    const int other = f.links[0] == link ? f.links[1] : f.links[0];
    Link& o = m_links[static_cast<std::size_t>(other)];
    --o.messages;
    if (o.passing == flow)
        o.passing = -1;
    if (--l.queued == 0) {
        l.queue = {};
        l.virtualTime = 0.0;
    }
    schedule(link);
    f.done->release();
}

} // namespace sgdscope
