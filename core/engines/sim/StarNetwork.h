#pragma once

#include <simgrid/forward.h>

#include <cstdint>
#include <exception>
#include <limits>
#include <queue>
#include <vector>

namespace sgdscope {

/// The messages of a built-in cluster (a star: every host has its own full-duplex link to one switch, all links
/// alike), timed as SimGrid's CM02 model times them there, at a cost per message that does not grow with the
/// messages in flight. SimGrid's own solver shares a link's bandwidth by solving a max-min system over every
/// message on it, at each start and end: with a thousand workers pushing to one parameter server, most of the
/// simulation's time.
///
/// A message from host a to host b first waits the route's latency (a's link and b's: twice the link latency),
/// sharing nothing; then it crosses a's link out and b's link in, which it shares fairly with the other messages
/// on them (max-min fairness). On a star with equal links, wherever each message shares at most one of its two
/// links with others, max-min fairness is processor sharing on that link: n messages on it each get 1/n of its
/// bandwidth. That is what the trainers' messages do: a worker sends one message at a time, only a parameter
/// server's link (async) or a reduction parent's link in (sync) carries several. Each link is then a processor-
/// sharing queue, kept in "bytes served per message" (virtual time): O(log n) per message. A message that would
/// share both its links is refused (SgdError): this model would not be SimGrid's there.
///
/// Driven from SimGrid actors; single-threaded (SimGrid runs one actor at a time).
class StarNetwork
{
public:
    StarNetwork(int hosts, double bandwidth, double linkLatency);
    /// Forgets every message (those of actors killed by a failure) and starts the daemon actor that ends the
    /// messages, on `host`. Once per SimWorld::run, before the others start.
    void start(simgrid::s4u::Host* host);
    /// What ended the daemon (a message it refused), rethrown by SimWorld::run; null if nothing.
    std::exception_ptr failure() const { return m_failure; }
    /// Blocks the calling actor while `bytes` go from host `from` to host `to` (indices into the cluster's hosts).
    void transfer(int from, int to, double bytes);

private:
    struct Flow
    {
        double bytes = 0.0;
        int links[2] = {0, 0}; // out of the sender's host, into the receiver's
        int queuedAt = -1; // the link whose queue serves it; the other one carries it alone
        double finish = 0.0; // that link's virtual time when it is served
        std::uint64_t serial = 0; // which message this slot holds (stale heap entries name an older one)
        std::uint64_t started = 0; // when its transfer began, in the order of transfers
        simgrid::s4u::SemaphorePtr done;
    };
    struct Entry // a message in a link's queue, served at virtual time `finish` (ties: the first to start first)
    {
        double finish;
        std::uint64_t started; // the message's serial when its transfer began
        int flow;
        std::uint64_t serial;
        bool operator>(const Entry& o) const
        {
            return finish > o.finish || (finish == o.finish && started > o.started);
        }
    };
    struct Link
    {
        int messages = 0; // in their bandwidth phase, queued here or passing alone
        int queued = 0; // served by this link's queue
        int passing = -1; // the flow that crosses it alone (queued at its other link), or -1
        double virtualTime = 0.0; // bytes served so far to each queued message
        double updatedAt = 0.0; // the clock virtualTime is for
        std::uint64_t generation = 0; // changes whenever its next departure may change
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    };
    struct Event // (ties: the first scheduled first)
    {
        double at;
        std::uint64_t order;
        bool arrival; // a flow's latency ended (index = flow), else a link's departure (index = link)
        int index;
        std::uint64_t tag; // the flow's serial or the link's generation when it was scheduled
        bool operator>(const Event& o) const { return at > o.at || (at == o.at && order > o.order); }
    };

    void serve();
    bool stale(const Event& e) const;
    void arrive(int flow, double now);
    void depart(int link, double now);
    void advance(Link& link, double now) const;
    void enqueue(int flow, int link, double remaining, double now);
    void dequeue(int flow, double now); // leaves its queue (it stays in flight, passing that link alone)
    void schedule(int link);
    const Entry* front(Link& link) const;

    double m_bandwidth;
    double m_latency; // host to host: twice the link latency
    std::vector<Link> m_links; // host h: 2h out, 2h + 1 in
    std::vector<Flow> m_flows;
    std::vector<int> m_free; // unused slots of m_flows
    std::uint64_t m_serial = 0;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> m_events;
    simgrid::s4u::SemaphorePtr m_wake; // the daemon waits on it for an earlier event than it sleeps until
    double m_armed = std::numeric_limits<double>::infinity(); // when the daemon wakes up next
    std::exception_ptr m_failure;
};

} // namespace sgdscope
