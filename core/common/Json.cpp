#include "core/common/Json.h"

#include "core/common/Error.h"

#include <charconv>
#include <cmath>
#include <set>
#include <vector>

namespace sgdscope {

namespace {

constexpr int maxDepth = 64;

/// Line and column (1-based) of byte offset `position` in `text`.
std::string lineAndColumn(std::string_view text, std::size_t position)
{
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < position && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string problemOf(const nlohmann::json::parse_error& e)
{
    std::string message = e.what();
    const std::size_t colon = message.find(": ", message.find("parse error"));
    if (colon != std::string::npos)
        message = message.substr(colon + 2);
    return message;
}

bool isScalar(const Json& v)
{
    return v.is_number() || v.is_boolean() || v.is_null();
}

void dumpTo(std::string& out, const Json& value, int indent, int depth)
{
    auto newline = [&](int d) {
        if (indent < 0)
            return;
        out += '\n';
        out.append(static_cast<std::size_t>(indent * d), ' ');
    };
    if (value.is_object()) {
        if (value.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        bool first = true;
        for (const auto& [key, item] : value.items()) {
            out += first ? "" : ",";
            first = false;
            newline(depth + 1);
            out += Json(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            out += indent < 0 ? ":" : ": ";
            dumpTo(out, item, indent, depth + 1);
        }
        newline(depth);
        out += '}';
    } else if (value.is_array()) {
        bool flat = true;
        for (const auto& item : value)
            flat = flat && isScalar(item);
        if (value.empty() || flat || indent < 0) {
            out += '[';
            bool first = true;
            for (const auto& item : value) {
                out += first ? "" : (indent < 0 ? "," : ", ");
                first = false;
                dumpTo(out, item, -1, 0);
            }
            out += ']';
            return;
        }
        out += '[';
        bool first = true;
        for (const auto& item : value) {
            out += first ? "" : ",";
            first = false;
            newline(depth + 1);
            dumpTo(out, item, indent, depth + 1);
        }
        newline(depth);
        out += ']';
    } else if (value.is_number_float()) {
        out += formatNumber(value.get<double>());
    } else {
        out += value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
}

/// Where the n-th (1-based) key, or the n-th '{' or '[', stands in `text` (outside strings); the parser's
/// callback counts them, but does not say where they are.
std::size_t positionOf(std::string_view text, std::size_t n, bool key)
{
    bool inString = false;
    bool escaped = false;
    std::size_t stringStart = 0;
    std::size_t count = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                inString = false;
                std::size_t j = i + 1;
                while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r'))
                    ++j;
                if (key && j < text.size() && text[j] == ':' && ++count == n)
                    return stringStart;
            }
        } else if (c == '"') {
            inString = true;
            stringStart = i;
        } else if (!key && (c == '{' || c == '[') && ++count == n) {
            return i;
        }
    }
    return text.size();
}

} // namespace

Json parseJson(std::string_view text, const std::string& what)
{
    // Keys seen so far in each open object, innermost last: nlohmann keeps the last of duplicate keys
    // silently, which would let a configuration file say two things at once.
    std::vector<std::set<std::string>> openObjects;
    std::size_t keys = 0;
    std::size_t opens = 0;
    const Json::parser_callback_t watch = [&](int depth, Json::parse_event_t event, Json& parsed) {
        if (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start)
            ++opens;
        if (depth > maxDepth)
            throw SgdError(what + ": nesting deeper than " + std::to_string(maxDepth) + " levels at "
                + lineAndColumn(text, positionOf(text, opens, false)));
        switch (event) {
        case Json::parse_event_t::object_start:
            openObjects.emplace_back();
            break;
        case Json::parse_event_t::object_end:
            if (!openObjects.empty())
                openObjects.pop_back();
            break;
        case Json::parse_event_t::key:
            ++keys;
            if (!openObjects.empty() && !openObjects.back().insert(parsed.get<std::string>()).second)
                throw SgdError(what + ": duplicate key " + parsed.dump() + " at "
                    + lineAndColumn(text, positionOf(text, keys, true)));
            break;
        default:
            break;
        }
        return true;
    };
    try {
        return Json::parse(text.begin(), text.end(), watch, true, false);
    } catch (const nlohmann::json::parse_error& e) {
        // nlohmann counts the offending byte in `byte` (1-based); point at it.
        const std::size_t position = e.byte > 0 ? e.byte - 1 : 0;
        throw SgdError(what + ": " + problemOf(e) + " at " + lineAndColumn(text, position));
    } catch (const nlohmann::json::out_of_range& e) {
        // A number beyond a double ("1e999"): nlohmann names the token but not where it is.
        const std::string message = e.what();
        const std::size_t open = message.find('\'');
        const std::size_t close = open == std::string::npos ? open : message.find('\'', open + 1);
        const std::string token
            = close == std::string::npos ? std::string() : message.substr(open + 1, close - open - 1);
        const std::size_t position = token.empty() ? std::string::npos : text.find(token);
        throw SgdError(what + ": number " + (token.empty() ? std::string() : token + " ") + "out of range"
            + (position == std::string::npos ? std::string() : " at " + lineAndColumn(text, position)));
    }
}

std::string dumpJson(const Json& value, int indent)
{
    std::string out;
    dumpTo(out, value, indent, 0);
    return out;
}

const Json* member(const Json& object, std::string_view key)
{
    if (!object.is_object())
        return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

std::string typeName(const Json& value)
{
    switch (value.type()) {
    case Json::value_t::null:
        return "null";
    case Json::value_t::boolean:
        return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
        return "a number";
    case Json::value_t::string:
        return "a string";
    case Json::value_t::array:
        return "an array";
    case Json::value_t::object:
        return "an object";
    default:
        return "a binary value";
    }
}

std::string formatNumber(double value)
{
    if (!std::isfinite(value))
        return "null";
    char buffer[64];
    if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
        const auto result = std::to_chars(buffer, buffer + sizeof buffer, static_cast<long long>(value));
        return std::string(buffer, result.ptr);
    }
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

} // namespace sgdscope
