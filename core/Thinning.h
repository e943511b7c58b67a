#pragma once

#include <cstddef>
#include <vector>

namespace sgdscope {

/// Keeps every other element (0, 2, 4, ...) in place: how the bounded recorders thin a full curve evenly,
/// so that a run of any length keeps at most a fixed number of points. Plain C++, shared by core's
/// RunRecorder and the window's series store.
template<typename T>
void keepEveryOther(std::vector<T>& items)
{
    std::size_t kept = 0;
    for (std::size_t i = 0; i < items.size(); i += 2)
        items[kept++] = items[i];
    items.resize(kept);
}

} // namespace sgdscope
