#include "core/run/OptionSpec.h"

#include "core/common/Error.h"

#include <charconv>
#include <cmath>

namespace sgdscope {

namespace {

bool parseDoubleText(const std::string& text, double& out)
{
    std::string_view s = text;
    if (!s.empty() && s.front() == '+')
        s.remove_prefix(1);
    if (s.empty())
        return false;
    // from_chars accepts "nan" and "inf": they are reported as not allowed rather than as non-numbers.
    const auto result = std::from_chars(s.data(), s.data() + s.size(), out);
    return result.ec == std::errc() && result.ptr == s.data() + s.size();
}

} // namespace

std::string joinedItems(const std::vector<std::string>& items, const std::string& separator)
{
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i ? separator : "") + items[i];
    return out;
}

std::vector<std::string> splitList(const std::string& text)
{
    std::vector<std::string> items;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
            return items;
        start = comma + 1;
    }
}

std::string OptionSpec::allowedText() const
{
    switch (type) {
    case OptionType::Integer:
        return "use an integer from " + formatNumber(min) + " to " + formatNumber(max);
    case OptionType::Number:
        if (minExclusive && !maxExclusive)
            return "use a finite number above " + formatNumber(min) + " (at most " + formatNumber(max) + ")";
        if (!minExclusive && maxExclusive)
            return "use a number from " + formatNumber(min) + " up to (not including) " + formatNumber(max);
        return "use a number from " + formatNumber(min) + " to " + formatNumber(max);
    case OptionType::Choice:
        return "use " + joinedItems(choices);
    case OptionType::Text:
        return pathValue ? "give a file or folder name" : "give a text";
    case OptionType::List:
        return "give a comma-separated list";
    }
    return {};
}

void OptionSpec::checkNumber(double value, const std::string& origin) const
{
    const bool belowMin = minExclusive ? !(value > min) : !(value >= min);
    const bool aboveMax = maxExclusive ? !(value < max) : !(value <= max);
    if (!std::isfinite(value) || belowMin || aboveMax)
        throw SgdError(origin + ": " + formatNumber(value) + " is not allowed; " + allowedText());
}

OptionValue OptionSpec::parse(const Json& value, const std::string& origin) const
{
    OptionValue out;
    auto text = [&]() -> std::string {
        if (!value.is_string())
            throw SgdError(origin + ": expected a string, got " + typeName(value));
        return value.get<std::string>();
    };
    switch (type) {
    case OptionType::Integer:
    case OptionType::Number: {
        const std::string allowed = allowedText();
        double d = 0.0;
        if (value.is_number())
            d = value.get<double>();
        else if (!value.is_string() || !parseDoubleText(value.get<std::string>(), d))
            throw SgdError(origin + ": " + shownValue(value) + " is not a number; " + allowed);
        if (type == OptionType::Integer && std::isfinite(d) && d != std::floor(d))
            throw SgdError(origin + ": " + shownValue(value) + " is not an integer; " + allowed);
        const bool belowMin = minExclusive ? !(d > min) : !(d >= min);
        const bool aboveMax = maxExclusive ? !(d < max) : !(d <= max);
        if (!std::isfinite(d) || belowMin || aboveMax)
            throw SgdError(origin + ": " + shownValue(value) + " is not allowed; " + allowed);
        out.number = d;
        break;
    }
    case OptionType::Choice: {
        out.text = text();
        bool known = false;
        for (const auto& c : choices)
            known = known || c == out.text;
        if (!known)
            throw SgdError(origin + ": unknown " + (name == "preset" ? "preset " : "value ") + shownValue(value)
                + "; use " + joinedItems(choices));
        break;
    }
    case OptionType::Text:
        out.text = text();
        if (out.text.empty())
            throw SgdError(origin + ": an empty " + std::string(pathValue ? "path" : "text") + " is not allowed");
        break;
    case OptionType::List:
        if (value.is_array()) {
            for (const auto& item : value) {
                if (item.is_number())
                    out.items.push_back(formatNumber(item.get<double>()));
                else if (item.is_string())
                    out.items.push_back(item.get<std::string>());
                else
                    throw SgdError(origin + ": expected numbers or strings in the list, got " + typeName(item));
            }
        } else {
            out.items = splitList(text());
        }
        break;
    }
    return out;
}

std::string shownValue(const Json& value)
{
    if (value.is_string()) {
        const std::string& full = value.get_ref<const std::string&>();
        std::string s = full.substr(0, 60);
        for (char& c : s) {
            if (static_cast<unsigned char>(c) < 0x20)
                c = '?';
        }
        return "'" + s + (full.size() > 60 ? "...'" : "'");
    }
    if (value.is_number())
        return formatNumber(value.get<double>());
    return dumpJson(value, -1).substr(0, 60);
}

} // namespace sgdscope
