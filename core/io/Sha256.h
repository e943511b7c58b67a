#pragma once

#include <nettle/sha2.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sgdscope {

/// SHA-256 (FIPS 180-4) from GNU Nettle (Debian nettle-dev), used for params_digest: a hex hash of the
/// final parameter bytes. Feed it with update(), then call finish() or finishHex() once.
class Sha256
{
public:
    Sha256();
    void update(const void* data, std::size_t size);
    std::array<std::uint8_t, SHA256_DIGEST_SIZE> finish();
    std::string finishHex();

private:
    sha256_ctx m_context {};
};

} // namespace sgdscope
