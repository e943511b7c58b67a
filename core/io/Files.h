#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sgdscope {

/// Writes `contents` to `path` atomically: a temporary file in the same folder, fsync, then rename.
/// Readers see the old file or the new one, never half of one. Throws SgdError naming the path.
void writeFileAtomically(const std::string& path, std::string_view contents);

/// Reads a whole file; throws SgdError "<what> '<path>': <reason>" if it cannot be read or is larger
/// than maxBytes.
std::string readFile(const std::string& path, const std::string& what, std::uint64_t maxBytes = 1ULL << 30);

/// Throws SgdError naming `option` if `dir` cannot be created or written (checked by creating and removing
/// a probe file). Creates the folder (and parents) if needed; returns the folders it created, deepest last,
/// so that a run refused later can remove them again.
std::vector<std::string> ensureWritableDirectory(const std::string& dir, const std::string& option);

/// Throws SgdError naming `option` if a file could not be created at `path` (its folder must exist and be
/// writable).
void checkWritableFilePath(const std::string& path, const std::string& option);

} // namespace sgdscope
