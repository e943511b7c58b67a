#include "core/run/study/LocalPointExecutor.h"

#include "core/common/Error.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sgdscope {

namespace {

int openPidfd(long pid)
{
#ifdef SYS_pidfd_open
    const long fd = ::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0);
    return fd >= 0 ? static_cast<int>(fd) : -1;
#else
    (void)pid;
    return -1;
#endif
}

} // namespace

std::string lastLogLine(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
    in.seekg(from);
    std::string tail(static_cast<std::size_t>(size - from), '\0');
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    std::size_t end = tail.find_last_not_of("\n\r ");
    if (end == std::string::npos)
        return {};
    const std::size_t begin = tail.rfind('\n', end);
    std::string line = tail.substr(
        begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
    if (line.rfind("sgdscope: ", 0) == 0)
        line = line.substr(10);
    return line.substr(0, 400);
}

LocalPointExecutor::LocalPointExecutor(int slots)
    : m_slots(std::max(1, slots))
    , m_program(thisProgram())
{
}

LocalPointExecutor::~LocalPointExecutor()
{
    // The study ends with its points: a child still running (an error path) is stopped and reaped.
    interrupt(SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!m_children.empty() && std::chrono::steady_clock::now() < deadline)
        (void)wait(0.05);
    kill();
    (void)wait(0.0);
}

PointStart LocalPointExecutor::start(const PointLaunch& launch)
{
    std::error_code ec;
    std::filesystem::create_directories(launch.folder, ec);
    if (ec)
        throw SgdError("--study: cannot create the point's folder '" + launch.folder + "': " + ec.message());
    const std::string log = (std::filesystem::path(launch.folder) / "run.log").string();
    // Everything the child needs is made before fork: between fork and exec it only calls what is safe there.
    std::vector<std::string> args {m_program};
    for (const std::string& a : launch.args)
        args.push_back(a);
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = pointEnvironment(launch.environment);
    std::vector<char*> envp;
    for (std::string& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const int logFd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int nullFd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (logFd < 0 || nullFd < 0) {
        const std::string why = std::strerror(errno);
        if (logFd >= 0)
            ::close(logFd);
        if (nullFd >= 0)
            ::close(nullFd);
        throw SgdError("--study: cannot write '" + log + "': " + why);
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent)
            ::_exit(143); // the study ended before this line: nothing to run for
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::dup2(nullFd, 0);
        ::dup2(nullFd, 1);
        ::dup2(logFd, 2);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    const int forkErrno = errno;
    ::close(logFd);
    ::close(nullFd);
    if (pid < 0)
        throw SgdError(std::string("--study: cannot start a point's process: ") + std::strerror(forkErrno));
    Child child;
    child.pid = pid;
    child.pidfd = openPidfd(pid);
    child.id = launch.id;
    child.log = log;
    child.started = std::chrono::steady_clock::now();
    m_children.push_back(std::move(child));
    return {-1, pid};
}

std::vector<PointEnd> LocalPointExecutor::wait(double seconds)
{
    std::vector<PointEnd> ended;
    if (m_children.empty()) {
        if (seconds > 0)
            std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        return ended;
    }
    std::vector<pollfd> fds;
    bool everyPidfd = true;
    for (const Child& c : m_children) {
        if (c.pidfd >= 0)
            fds.push_back({c.pidfd, POLLIN, 0});
        else
            everyPidfd = false;
    }
    // Without a pidfd for every child (an old kernel), look again every 5 ms.
    const int timeoutMs = static_cast<int>(std::max(0.0, everyPidfd ? seconds : std::min(seconds, 0.005)) * 1000.0);
    if (!fds.empty())
        (void)::poll(fds.data(), fds.size(), timeoutMs);
    else if (timeoutMs > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMs));
    for (auto it = m_children.begin(); it != m_children.end();) {
        int status = 0;
        const pid_t r = ::waitpid(static_cast<pid_t>(it->pid), &status, WNOHANG);
        if (r == 0 || (r < 0 && errno == EINTR)) {
            ++it;
            continue;
        }
        PointEnd end;
        end.id = it->id;
        end.exitCode = r < 0 ? 1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        end.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->started).count();
        if (end.exitCode != 0 && end.exitCode != 3)
            end.problem = lastLogLine(it->log);
        if (r > 0 && WIFSIGNALED(status))
            end.problem = "its process was ended by signal " + std::to_string(WTERMSIG(status))
                + (end.problem.empty() ? std::string() : " (" + end.problem + ")");
        if (it->pidfd >= 0)
            ::close(it->pidfd);
        ended.push_back(std::move(end));
        it = m_children.erase(it);
    }
    return ended;
}

void LocalPointExecutor::interrupt(int signal)
{
    for (const Child& c : m_children)
        ::kill(static_cast<pid_t>(c.pid), signal);
}

void LocalPointExecutor::kill()
{
    for (const Child& c : m_children)
        ::kill(static_cast<pid_t>(c.pid), SIGKILL);
}

} // namespace sgdscope
