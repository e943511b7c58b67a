#include "core/run/study/StudyAxis.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/run/Options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace sgdscope {

namespace {

constexpr std::size_t maxAxisValues = 1000;
constexpr double relativeTolerance = 1e-6;

/// A number written in full ("0.001", "1e-3"), or nullopt.
bool readNumber(const std::string& text, double& value)
{
    if (text.empty())
        return false;
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(value);
}

/// A range's value in its shortest text: 0.001 x 10 x 10 is "0.1", not "0.10000000000000002".
std::string rangeValueText(double v)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.12g", v);
    return formatNumber(std::strtod(buffer, nullptr));
}

/// "A..B" or "A..BxK" expanded, or the item itself.
std::vector<std::string> expandItem(
    const std::string& item, const OptionSpec& option, const std::string& origin, std::size_t already)
{
    const std::size_t dots = item.find("..");
    if (dots == std::string::npos)
        return {item};
    const std::string what = origin + ": range '" + item + "'";
    if (option.type != OptionType::Integer && option.type != OptionType::Number)
        throw SgdError(what + ": --" + option.name + " takes no numbers; list its values (a,b,c)");
    std::string upper = item.substr(dots + 2);
    double factor = 2.0;
    if (const std::size_t x = upper.find('x'); x != std::string::npos) {
        if (!readNumber(upper.substr(x + 1), factor) || !(factor > 1.0) || factor > 1e6)
            throw SgdError(what + ": the factor after x must be a number above 1 (A..BxK, e.g. 0.001..1x10)");
        upper = upper.substr(0, x);
    }
    double low = 0.0;
    double high = 0.0;
    if (!readNumber(item.substr(0, dots), low) || !readNumber(upper, high))
        throw SgdError(
            what + ": not A..B (doubling from A up to B, e.g. 1..256) or A..BxK (times K, e.g. 0.001..1x10)");
    if (!(low > 0.0) || high < low)
        throw SgdError(what + ": needs 0 < A <= B (a range grows by a factor from A)");
    std::vector<std::string> values;
    for (double v = low; v <= high * (1.0 + relativeTolerance); v *= factor) {
        if (option.type == OptionType::Integer && std::abs(v - std::round(v)) > relativeTolerance * v)
            throw SgdError(what + ": " + rangeValueText(v) + " is not a whole number, and --" + option.name
                + " takes integers; give a range of whole numbers (e.g. 1..256)");
        values.push_back(option.type == OptionType::Integer ? formatNumber(std::round(v)) : rangeValueText(v));
        if (already + values.size() > maxAxisValues)
            throw SgdError(what + ": more than " + std::to_string(maxAxisValues) + " values");
    }
    return values;
}

double positionOf(const OptionSpec& option, const std::string& value)
{
    const bool compound = option.type == OptionType::Text || option.type == OptionType::List;
    if (value == "none")
        return compound ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    if (option.type == OptionType::Choice)
        return std::numeric_limits<double>::quiet_NaN();
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || !std::isfinite(v))
        return std::numeric_limits<double>::quiet_NaN();
    if (!compound && *end != '\0')
        return std::numeric_limits<double>::quiet_NaN();
    return v;
}

/// The sorted distinct positions, and whether they grow by one factor (that factor, else 0).
double commonRatio(const std::vector<double>& sorted)
{
    if (sorted.size() < 2 || !(sorted.front() > 0.0))
        return 0.0;
    const double ratio = sorted[1] / sorted[0];
    for (std::size_t i = 2; i < sorted.size(); ++i) {
        if (std::abs(sorted[i] / sorted[i - 1] - ratio) > relativeTolerance * ratio)
            return 0.0;
    }
    return ratio;
}

std::vector<double> distinctSorted(const std::vector<double>& values)
{
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

} // namespace

bool StudyAxis::numeric() const
{
    if (positions.empty()
        || !std::all_of(positions.begin(), positions.end(), [](double p) { return std::isfinite(p); }))
        return false;
    return distinctSorted(positions).size() >= 2;
}

bool StudyAxis::logScale() const
{
    if (!numeric())
        return false;
    const std::vector<double> v = distinctSorted(positions);
    if (!(v.front() > 0.0) || v.back() < 4.0 * v.front())
        return false;
    return commonRatio(v) > 1.0 || v.back() > 100.0 * v.front();
}

double StudyAxis::logBase() const
{
    // Powers of two (worker counts 1, 2, 4, ... or 2, 8, 32) get ticks at every doubling, the rest at decades.
    const bool powersOfTwo = std::all_of(positions.begin(), positions.end(), [](double p) {
        int exponent = 0;
        return p > 0 && std::frexp(p, &exponent) == 0.5;
    });
    return powersOfTwo ? 2.0 : 10.0;
}

int StudyAxis::indexOf(const std::string& value) const
{
    const auto it = std::find(values.begin(), values.end(), value);
    return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

std::string whyNotInStudy(const std::string& option)
{
    if (option == "out")
        return "a study writes each point's run folder under --study DIR (DIR/points/...)";
    if (option == "trace" || option == "save-params")
        return "every point would write the same file; run the point alone with it (its run folder's summary.json "
               "has its options)";
    if (option == "progress")
        return "a study's --progress - streams the study's own progress, not a point's";
    return {};
}

StudyAxis axisWithValues(const OptionSpec& option, std::vector<std::string> values, const std::string& origin)
{
    StudyAxis axis;
    axis.name = option.name;
    const std::string where = origin + " " + option.name;
    if (const std::string why = whyNotInStudy(option.name); !why.empty())
        throw SgdError(where + ": cannot be swept; " + why);
    if (values.empty())
        throw SgdError(where + ": no values; give at least one (NAME=A,B,C)");
    for (const std::string& value : values) {
        if (value.empty())
            throw SgdError(where + ": an empty value is not allowed (two commas in a row?)");
        if (std::count(axis.values.begin(), axis.values.end(), value))
            throw SgdError(where + ": value '" + value + "' is listed twice; give each value once");
        if (value != "none") {
            const OptionValue parsed = option.parse(Json(value), where + " (value '" + value + "')");
            if (option.name == "mode" && (parsed.items.size() != 1 || parsed.items.front() == "both"))
                throw SgdError(where + ": '" + value
                    + "' is not one mode; each point runs one mode, so give them one by one (mode=sync,async)");
            if (option.name == "mode") {
                // The table's own check of the name (the store that knows the modes).
                RunConfig probe;
                option.store(probe, parsed, where);
            }
        }
        axis.values.push_back(value);
        axis.positions.push_back(positionOf(option, value));
    }
    return axis;
}

StudyAxis axisOf(const OptionSpec& option, const std::string& valuesText, const std::string& origin)
{
    const char separator = valuesText.find(';') != std::string::npos ? ';' : ',';
    std::vector<std::string> values;
    std::size_t at = 0;
    while (true) {
        const std::size_t end = std::min(valuesText.find(separator, at), valuesText.size());
        const std::string item = valuesText.substr(at, end - at);
        if (item.empty())
            throw SgdError(origin + " " + option.name + ": an empty value is not allowed in '"
                + valuesText.substr(0, 80) + "'; give values separated by "
                + (separator == ';' ? "semicolons" : "commas"));
        for (std::string& v : expandItem(item, option, origin + " " + option.name, values.size()))
            values.push_back(std::move(v));
        if (values.size() > maxAxisValues)
            throw SgdError(origin + " " + option.name + ": more than " + std::to_string(maxAxisValues) + " values");
        if (end >= valuesText.size())
            break;
        at = end + 1;
    }
    return axisWithValues(option, std::move(values), origin);
}

StudyAxis parseAxis(const std::string& text, const std::string& origin)
{
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= text.size())
        throw SgdError(origin + ": '" + text.substr(0, 80)
            + "' is not NAME=VALUES; give an option and its values, e.g. workers=1,2,4 or workers=1..256");
    const std::string name = text.substr(0, eq);
    const OptionSpec* option = findOption(name);
    if (!option)
        throw SgdError(origin + ": '" + name.substr(0, 60)
            + "' is not a run option; an axis sweeps one of the options of --help (without dashes), e.g. workers");
    return axisOf(*option, text.substr(eq + 1), origin);
}

} // namespace sgdscope
