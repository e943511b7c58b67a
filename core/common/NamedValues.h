#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sgdscope {

/// An enum value and the one name it has everywhere: on the command line, in configuration files, in
/// summary.json and in the window. Each enum's table sits next to the enum; nothing else spells the names.
template<typename E>
struct NamedValue
{
    std::string_view name;
    E value;
};

template<typename E, std::size_t N>
using NameTable = std::array<NamedValue<E>, N>;

template<typename E, std::size_t N>
std::string nameOf(const NameTable<E, N>& table, E value)
{
    for (const auto& entry : table) {
        if (entry.value == value)
            return std::string(entry.name);
    }
    return "?";
}

template<typename E, std::size_t N>
std::optional<E> valueNamed(const NameTable<E, N>& table, std::string_view name)
{
    for (const auto& entry : table) {
        if (entry.name == name)
            return entry.value;
    }
    return std::nullopt;
}

} // namespace sgdscope
