#include "core/io/Json.h"

#include "core/common/Error.h"

#include <charconv>
#include <cmath>

namespace sgdscope {

namespace {

constexpr int maxDepth = 64;

class Parser
{
public:
    Parser(std::string_view text, const std::string& what)
        : m_text(text)
        , m_what(what)
    {
    }

    Json parseDocument()
    {
        skipSpace();
        Json value = parseValue(0);
        skipSpace();
        if (m_pos != m_text.size())
            fail("unexpected text after the JSON value");
        return value;
    }

private:
    [[noreturn]] void fail(const std::string& problem) const
    {
        std::size_t line = 1;
        std::size_t column = 1;
        for (std::size_t i = 0; i < m_pos && i < m_text.size(); ++i) {
            if (m_text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        throw SgdError(
            m_what + ": " + problem + " at line " + std::to_string(line) + ", column " + std::to_string(column));
    }

    void skipSpace()
    {
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                break;
            ++m_pos;
        }
    }

    bool consume(std::string_view word)
    {
        if (m_text.substr(m_pos, word.size()) == word) {
            m_pos += word.size();
            return true;
        }
        return false;
    }

    Json parseValue(int depth)
    {
        if (depth > maxDepth)
            fail("nesting deeper than 64 levels");
        if (m_pos >= m_text.size())
            fail("unexpected end of text, expected a value");
        const char c = m_text[m_pos];
        switch (c) {
        case '{':
            return parseObject(depth);
        case '[':
            return parseArray(depth);
        case '"':
            return Json(parseString());
        case 't':
            if (consume("true"))
                return Json(true);
            break;
        case 'f':
            if (consume("false"))
                return Json(false);
            break;
        case 'n':
            if (consume("null"))
                return Json(nullptr);
            break;
        default:
            if (c == '-' || (c >= '0' && c <= '9'))
                return Json(parseNumber());
            break;
        }
        fail(std::string("unexpected character '") + printable(c) + "'");
    }

    static std::string printable(char c)
    {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            static const char* hex = "0123456789abcdef";
            const auto u = static_cast<unsigned char>(c);
            return std::string("\\x") + hex[u >> 4] + hex[u & 15];
        }
        return std::string(1, c);
    }

    Json parseObject(int depth)
    {
        ++m_pos; // {
        Json::Object members;
        skipSpace();
        if (m_pos < m_text.size() && m_text[m_pos] == '}') {
            ++m_pos;
            return Json(std::move(members));
        }
        while (true) {
            skipSpace();
            if (m_pos >= m_text.size() || m_text[m_pos] != '"')
                fail("expected a key in double quotes");
            std::string key = parseString();
            for (const auto& member : members) {
                if (member.first == key)
                    fail("duplicate key \"" + key + "\"");
            }
            skipSpace();
            if (m_pos >= m_text.size() || m_text[m_pos] != ':')
                fail("expected ':' after key \"" + key + "\"");
            ++m_pos;
            skipSpace();
            Json value = parseValue(depth + 1);
            members.emplace_back(std::move(key), std::move(value));
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_pos < m_text.size() && m_text[m_pos] == '}') {
                ++m_pos;
                return Json(std::move(members));
            }
            fail("expected ',' or '}' in object");
        }
    }

    Json parseArray(int depth)
    {
        ++m_pos; // [
        Json::Array items;
        skipSpace();
        if (m_pos < m_text.size() && m_text[m_pos] == ']') {
            ++m_pos;
            return Json(std::move(items));
        }
        while (true) {
            skipSpace();
            items.push_back(parseValue(depth + 1));
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_pos < m_text.size() && m_text[m_pos] == ']') {
                ++m_pos;
                return Json(std::move(items));
            }
            fail("expected ',' or ']' in array");
        }
    }

    unsigned parseHex4()
    {
        if (m_pos + 4 > m_text.size())
            fail("incomplete \\u escape");
        unsigned value = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = m_text[m_pos++];
            value <<= 4;
            if (c >= '0' && c <= '9')
                value |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f')
                value |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                value |= static_cast<unsigned>(c - 'A' + 10);
            else
                fail("bad hex digit in \\u escape");
        }
        return value;
    }

    static void appendUtf8(std::string& out, unsigned cp)
    {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    std::string parseString()
    {
        ++m_pos; // opening quote
        std::string out;
        while (true) {
            if (m_pos >= m_text.size())
                fail("unterminated string");
            const char c = m_text[m_pos++];
            if (c == '"')
                return out;
            if (static_cast<unsigned char>(c) < 0x20)
                fail("control character in string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (m_pos >= m_text.size())
                fail("unterminated escape");
            const char e = m_text[m_pos++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned cp = parseHex4();
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (!consume("\\u"))
                        fail("unpaired surrogate in \\u escape");
                    const unsigned low = parseHex4();
                    if (low < 0xDC00 || low > 0xDFFF)
                        fail("unpaired surrogate in \\u escape");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    fail("unpaired surrogate in \\u escape");
                }
                appendUtf8(out, cp);
                break;
            }
            default:
                fail(std::string("unknown escape '\\") + printable(e) + "'");
            }
        }
    }

    double parseNumber()
    {
        const std::size_t start = m_pos;
        if (m_text[m_pos] == '-')
            ++m_pos;
        auto digits = [&] {
            const std::size_t from = m_pos;
            while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9')
                ++m_pos;
            return m_pos - from;
        };
        if (m_pos < m_text.size() && m_text[m_pos] == '0') {
            ++m_pos;
        } else if (digits() == 0) {
            fail("bad number");
        }
        if (m_pos < m_text.size() && m_text[m_pos] == '.') {
            ++m_pos;
            if (digits() == 0)
                fail("bad number: digits expected after '.'");
        }
        if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
            ++m_pos;
            if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-'))
                ++m_pos;
            if (digits() == 0)
                fail("bad number: digits expected in exponent");
        }
        double value = 0.0;
        const auto* first = m_text.data() + start;
        const auto* last = m_text.data() + m_pos;
        const auto result = std::from_chars(first, last, value);
        if (result.ec == std::errc::result_out_of_range || !std::isfinite(value)) {
            m_pos = start;
            fail("number out of range");
        }
        if (result.ec != std::errc() || result.ptr != last) {
            m_pos = start;
            fail("bad number");
        }
        return value;
    }

    std::string_view m_text;
    const std::string& m_what;
    std::size_t m_pos = 0;
};

} // namespace

const Json* Json::find(std::string_view key) const
{
    if (!isObject())
        return nullptr;
    for (const auto& member : asObject()) {
        if (member.first == key)
            return &member.second;
    }
    return nullptr;
}

Json& Json::set(std::string key, Json value)
{
    auto& members = asObject();
    for (auto& member : members) {
        if (member.first == key) {
            member.second = std::move(value);
            return member.second;
        }
    }
    members.emplace_back(std::move(key), std::move(value));
    return members.back().second;
}

std::string Json::typeName() const
{
    if (isNull())
        return "null";
    if (isBool())
        return "a boolean";
    if (isNumber())
        return "a number";
    if (isString())
        return "a string";
    if (isArray())
        return "an array";
    return "an object";
}

Json Json::parse(std::string_view text, const std::string& what)
{
    return Parser(text, what).parseDocument();
}

void appendJsonString(std::string& out, std::string_view s)
{
    static const char* hex = "0123456789abcdef";
    out += '"';
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (u < 0x20) {
                out += "\\u00";
                out += hex[u >> 4];
                out += hex[u & 15];
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

std::string formatNumber(double value)
{
    if (!std::isfinite(value))
        return "null";
    char buffer[64];
    // Whole numbers (counts, sizes) as integers: "100000", not "1e+05".
    if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
        const auto result = std::to_chars(buffer, buffer + sizeof buffer, static_cast<long long>(value));
        return std::string(buffer, result.ptr);
    }
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

void Json::dumpTo(std::string& out, int indent, int depth) const
{
    auto newline = [&](int d) {
        if (indent < 0)
            return;
        out += '\n';
        out.append(static_cast<std::size_t>(indent * d), ' ');
    };
    if (isNull()) {
        out += "null";
    } else if (isBool()) {
        out += asBool() ? "true" : "false";
    } else if (isNumber()) {
        out += formatNumber(asNumber());
    } else if (isString()) {
        appendJsonString(out, asString());
    } else if (isArray()) {
        const auto& items = asArray();
        if (items.empty()) {
            out += "[]";
            return;
        }
        // Arrays of plain numbers stay on one line: histograms and shapes read better that way.
        bool flat = true;
        for (const auto& item : items)
            flat = flat && (item.isNumber() || item.isNull() || item.isBool());
        out += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (i > 0)
                out += flat || indent < 0 ? ", " : ",";
            if (!flat)
                newline(depth + 1);
            items[i].dumpTo(out, indent, depth + 1);
        }
        if (!flat)
            newline(depth);
        out += ']';
    } else {
        const auto& members = asObject();
        if (members.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        for (std::size_t i = 0; i < members.size(); ++i) {
            if (i > 0)
                out += indent < 0 ? ", " : ",";
            newline(depth + 1);
            appendJsonString(out, members[i].first);
            out += ": ";
            members[i].second.dumpTo(out, indent, depth + 1);
        }
        newline(depth);
        out += '}';
    }
}

std::string Json::dump(int indent) const
{
    std::string out;
    dumpTo(out, indent, 0);
    return out;
}

} // namespace sgdscope
