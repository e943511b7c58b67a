#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sgdscope {

/// SHA-256 (FIPS 180-4), used for params_digest: a hex hash of the final parameter bytes.
class Sha256
{
public:
    Sha256();
    void update(const void* data, std::size_t size);
    std::array<std::uint8_t, 32> finish();
    std::string finishHex();

private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> m_state;
    std::array<std::uint8_t, 64> m_buffer {};
    std::size_t m_buffered = 0;
    std::uint64_t m_length = 0;
};

} // namespace sgdscope
