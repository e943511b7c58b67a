#include "core/io/Sha256.h"

namespace sgdscope {

Sha256::Sha256()
{
    sha256_init(&m_context);
}

void Sha256::update(const void* data, std::size_t size)
{
    sha256_update(&m_context, size, static_cast<const std::uint8_t*>(data));
}

std::array<std::uint8_t, SHA256_DIGEST_SIZE> Sha256::finish()
{
    std::array<std::uint8_t, SHA256_DIGEST_SIZE> digest {};
    sha256_digest(&m_context, digest.size(), digest.data());
    return digest;
}

std::string Sha256::finishHex()
{
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (const std::uint8_t byte : finish()) {
        out += hex[byte >> 4];
        out += hex[byte & 0xf];
    }
    return out;
}

} // namespace sgdscope
