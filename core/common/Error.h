#pragma once

#include <stdexcept>
#include <string>

namespace sgdscope {

/// The one error type that core throws at its API boundary. The message is meant for the user: it names
/// the option, field or file, the offending value and what is allowed, e.g.
/// "--workers: '0' is not allowed; use an integer from 1 to 256".
/// Divergence (a NaN or Inf loss) is not an error: trainers stop in order and report it.
class SgdError : public std::runtime_error
{
public:
    explicit SgdError(const std::string& message)
        : std::runtime_error(message)
    {
    }
};

/// A run that cannot go on after training began: a peer process of an MPI job died, hung or failed. What was
/// done up to there is kept (runMode returns it marked failed, with this message) and written first.
class RunFailure : public SgdError
{
public:
    using SgdError::SgdError;
};

} // namespace sgdscope
