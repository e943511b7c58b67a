#pragma once

#include "core/run/study/PointExecutor.h"

#include <chrono>
#include <string>
#include <vector>

namespace sgdscope {

/// Runs points as child processes of this one, up to `slots` at once (-j N). Each child is the same sgdscope
/// binary, headless, in a process group of its own (a Ctrl+C reaches the study, which passes it on once), and
/// ends with its parent (PR_SET_PDEATHSIG: a killed study leaves no orphans). Its standard error goes to
/// FOLDER/run.log, its standard output nowhere. A child's end wakes the wait at once (a pidfd per child).
class LocalPointExecutor : public PointExecutor
{
public:
    explicit LocalPointExecutor(int slots);
    ~LocalPointExecutor() override;
    LocalPointExecutor(const LocalPointExecutor&) = delete;
    LocalPointExecutor& operator=(const LocalPointExecutor&) = delete;

    int slots() const override { return m_slots; }
    int running() const override { return static_cast<int>(m_children.size()); }
    PointStart start(const PointLaunch& launch) override;
    std::vector<PointEnd> wait(double seconds) override;
    void interrupt(int signal) override;
    void kill() override;

private:
    struct Child
    {
        long pid = 0;
        int pidfd = -1;
        std::string id;
        std::string log;
        std::chrono::steady_clock::time_point started;
    };
    int m_slots = 1;
    std::string m_program;
    std::vector<Child> m_children;
};

/// The last non-empty line of a run's log (its error message), at most 400 characters.
std::string lastLogLine(const std::string& path);

} // namespace sgdscope
