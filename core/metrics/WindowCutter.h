#pragma once

#include "core/metrics/Events.h"

#include <functional>
#include <span>
#include <vector>

namespace sgdscope {

/// Cuts workers' spans into the windows of the event stream when they arrive late and out of order (from
/// other processes, or from a simulation that ran ahead): spans are added as they come, windows are closed
/// with their updates, and a window is handed on once every worker's spans are known up to
/// its end. A span that crosses a window's edge is split there; time in no window (between windows, e.g.
/// while rank 0 evaluates) is in no window's accounting.
class WindowCutter
{
public:
    struct Closed
    {
        WorkWindow window; // on the clock the spans are on
        double shift = 0.0; // added to every time when handed on (e.g. to the mode's clock)
        std::vector<UpdateEvent> updates;
        // What the reporter has taken of it: a report that failed (out of memory) leaves the window first in line,
        // and the next flush hands it on again, with the same spans, for the reporter to go on where it stopped.
        bool timeCounted = false; // in the run's figures
        bool timeObserved = false; // handed to the observer
        std::size_t updatesReported = 0;
        // Its spans, cut at its edges and shifted, once a flush cut them (kept until the window leaves).
        std::vector<Span> cut {};
        bool isCut = false;
    };
    using Report = std::function<void(const WorkWindow&, std::span<const Span>, Closed&)>;

    explicit WindowCutter(int workers = 0) { setWorkers(workers); }
    void setWorkers(int workers);
    /// A worker's span (in time order for that worker).
    void add(const Span& span);
    /// Every span of `worker` up to `seconds` has been added.
    void knownUntil(int worker, double seconds);
    /// Room for one more closed window: close() after it cannot fail (an engine makes room before it counts the
    /// window's updates, so that none is counted and then lost for want of memory).
    void makeRoom();
    /// Room for `count` more spans of `worker`: add() of them cannot fail.
    void makeRoomForSpans(int worker, std::size_t count);
    void close(Closed window);
    /// Hands on, in order, every closed window whose spans are all known (window and spans shifted by the
    /// window's shift); with `everything`, all closed ones. A window leaves when its report returns: if a report
    /// throws, the windows before it are gone and it stays, with its spans, for the next flush to hand on again.
    void flush(const Report& report, bool everything = false);

private:
    /// Takes the window's spans out of the pending ones into `c.cut`; changes nothing if it fails.
    void cut(Closed& c);

    std::vector<std::vector<Span>> m_pending; // per worker, in time order
    std::vector<double> m_known;
    std::vector<Closed> m_closed;
};

} // namespace sgdscope
