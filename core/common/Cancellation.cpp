#include "core/common/Cancellation.h"

#include "core/common/Error.h"

#include <string>

namespace sgdscope {

void throwIfCancelled(const char* during)
{
    if (cancellationRequested())
        throw SgdError(std::string("interrupted while ") + during);
}

} // namespace sgdscope
