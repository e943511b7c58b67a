#include "core/io/Files.h"

#include "core/common/Error.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sgdscope {

namespace fs = std::filesystem;

namespace {
std::string errnoText()
{
    return std::strerror(errno);
}

std::string parentOf(const std::string& path)
{
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

/// Creates a uniquely named file next to `path`; returns its descriptor and name.
int createTemporaryBeside(const std::string& path, std::string& tmpName)
{
    const fs::path p(path);
    // mkstemp replaces the trailing six X's with a unique suffix.
    std::string pattern = (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::string(6, 'X'))).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const int fd = ::mkstemp(buffer.data());
    if (fd >= 0)
        tmpName.assign(buffer.data());
    return fd;
}
} // namespace

void writeFileAtomically(const std::string& path, std::string_view contents)
{
    std::string tmpName;
    const int fd = createTemporaryBeside(path, tmpName);
    if (fd < 0)
        throw SgdError("cannot write '" + path + "': " + errnoText());
    std::size_t written = 0;
    while (written < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const std::string reason = errnoText();
            ::close(fd);
            ::unlink(tmpName.c_str());
            throw SgdError("cannot write '" + path + "': " + reason);
        }
        written += static_cast<std::size_t>(n);
    }
    // Readable by others, as an ordinary new file (mkstemp makes 0600).
    ::fchmod(fd, 0644);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string reason = errnoText();
        ::unlink(tmpName.c_str());
        throw SgdError("cannot write '" + path + "': " + reason);
    }
    if (::rename(tmpName.c_str(), path.c_str()) != 0) {
        const std::string reason = errnoText();
        ::unlink(tmpName.c_str());
        throw SgdError("cannot write '" + path + "': " + reason);
    }
}

std::string readFile(const std::string& path, const std::string& what, std::uint64_t maxBytes)
{
    std::error_code ec;
    if (fs::is_directory(path, ec))
        throw SgdError(what + " '" + path + "': is a folder, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw SgdError(what + " '" + path + "': cannot open (" + errnoText() + ")");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0)
        throw SgdError(what + " '" + path + "': cannot read its size");
    if (static_cast<std::uint64_t>(size) > maxBytes)
        throw SgdError(what + " '" + path + "': " + std::to_string(size) + " bytes is larger than the "
            + std::to_string(maxBytes) + " allowed");
    in.seekg(0, std::ios::beg);
    std::string data(static_cast<std::size_t>(size), '\0');
    if (size > 0 && !in.read(data.data(), size))
        throw SgdError(what + " '" + path + "': read failed");
    return data;
}

std::vector<std::string> ensureWritableDirectory(const std::string& dir, const std::string& option)
{
    if (dir.empty())
        throw SgdError(option + ": an empty folder name is not allowed; give a folder to write results to");
    std::vector<std::string> created;
    std::error_code ec;
    // Remember which folders do not exist yet, so that they can be removed if the run is refused.
    std::vector<fs::path> missing;
    for (fs::path p = fs::absolute(dir, ec); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
        missing.push_back(p);
        if (p == p.parent_path())
            break;
    }
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw SgdError(option + ": '" + dir + "' exists and is not a folder");
    fs::create_directories(dir, ec);
    if (ec)
        throw SgdError(option + ": cannot create folder '" + dir + "': " + ec.message());
    for (auto it = missing.rbegin(); it != missing.rend(); ++it)
        created.push_back(it->string());
    const std::string probe = (fs::path(dir) / ".sgdscope-write-probe").string();
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        const std::string reason = errnoText();
        for (auto it = created.rbegin(); it != created.rend(); ++it)
            fs::remove(*it, ec);
        throw SgdError(option + ": folder '" + dir + "' is not writable: " + reason);
    }
    ::close(fd);
    ::unlink(probe.c_str());
    return created;
}

void checkWritableFilePath(const std::string& path, const std::string& option)
{
    if (path.empty())
        throw SgdError(option + ": an empty file name is not allowed");
    std::error_code ec;
    if (fs::is_directory(path, ec))
        throw SgdError(option + ": '" + path + "' is a folder; give a file name");
    const std::string parent = parentOf(path);
    if (!fs::is_directory(parent, ec))
        throw SgdError(option + ": folder '" + parent + "' of '" + path + "' does not exist");
    if (::access(parent.c_str(), W_OK) != 0)
        throw SgdError(option + ": folder '" + parent + "' of '" + path + "' is not writable: " + errnoText());
}

} // namespace sgdscope
