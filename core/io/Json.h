#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sgdscope {

/// A small, strict JSON value for run configurations, safetensors headers and our own output files.
/// Objects keep their keys in insertion order; the parser rejects duplicate keys, trailing garbage,
/// nesting deeper than 64 levels and anything RFC 8259 does not allow (no comments, no NaN).
class Json
{
public:
    using Array = std::vector<Json>;
    using Object = std::vector<std::pair<std::string, Json>>;

    Json() = default; // null
    Json(std::nullptr_t) { }
    Json(bool value)
        : m_value(value)
    {
    }
    Json(double value)
        : m_value(value)
    {
    }
    Json(int value)
        : m_value(static_cast<double>(value))
    {
    }
    Json(std::int64_t value)
        : m_value(static_cast<double>(value))
    {
    }
    Json(std::uint64_t value)
        : m_value(static_cast<double>(value))
    {
    }
    Json(const char* value)
        : m_value(std::string(value))
    {
    }
    Json(std::string value)
        : m_value(std::move(value))
    {
    }
    Json(Array value)
        : m_value(std::make_shared<Array>(std::move(value)))
    {
    }
    Json(Object value)
        : m_value(std::make_shared<Object>(std::move(value)))
    {
    }

    static Json array() { return Json(Array {}); }
    static Json object() { return Json(Object {}); }

    bool isNull() const { return std::holds_alternative<std::monostate>(m_value); }
    bool isBool() const { return std::holds_alternative<bool>(m_value); }
    bool isNumber() const { return std::holds_alternative<double>(m_value); }
    bool isString() const { return std::holds_alternative<std::string>(m_value); }
    bool isArray() const { return std::holds_alternative<std::shared_ptr<Array>>(m_value); }
    bool isObject() const { return std::holds_alternative<std::shared_ptr<Object>>(m_value); }

    bool asBool() const { return std::get<bool>(m_value); }
    double asNumber() const { return std::get<double>(m_value); }
    const std::string& asString() const { return std::get<std::string>(m_value); }
    const Array& asArray() const { return *std::get<std::shared_ptr<Array>>(m_value); }
    Array& asArray() { return *std::get<std::shared_ptr<Array>>(m_value); }
    const Object& asObject() const { return *std::get<std::shared_ptr<Object>>(m_value); }
    Object& asObject() { return *std::get<std::shared_ptr<Object>>(m_value); }

    /// Member lookup on an object; nullptr if absent (or if this is not an object).
    const Json* find(std::string_view key) const;
    /// Sets (or replaces) a member of an object.
    Json& set(std::string key, Json value);
    /// Appends to an array.
    void push(Json value) { asArray().push_back(std::move(value)); }

    /// Short name of the type for messages: "a number", "a string", ...
    std::string typeName() const;

    /// Parses text; throws SgdError "<what>: <problem> at line L, column C" on bad input.
    static Json parse(std::string_view text, const std::string& what);

    /// Serialises; indent < 0 gives one line. Non-finite numbers are written as null.
    std::string dump(int indent = 2) const;

private:
    void dumpTo(std::string& out, int indent, int depth) const;

    std::variant<std::monostate, bool, double, std::string, std::shared_ptr<Array>, std::shared_ptr<Object>> m_value;
};

/// Appends `s` to `out` as a JSON string literal (with quotes and escapes).
void appendJsonString(std::string& out, std::string_view s);

/// Shortest decimal text that reads back as the same double ("0.1", "1e-07", "3").
std::string formatNumber(double value);

} // namespace sgdscope
