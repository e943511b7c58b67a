#pragma once

#include <string>
#include <vector>

namespace sgdscope {

struct OptionSpec;

/// One swept option of a study (`--sweep NAME=VALUES`, `--best-of NAME[=VALUES]`, `--seeds K`): the values its
/// points take, each checked against the run option table (run/Options.h) as the option itself would be.
struct StudyAxis
{
    std::string name; // an option of the table, without dashes
    /// The values as the points' command lines give them. "none" leaves the option out of the point (the
    /// preset's or the shared value applies).
    std::vector<std::string> values;
    /// Where each value sits on a chart's axis: the number itself (integer and number options), the leading
    /// number of a compound value ("0.1:4" of --slow-fraction: 0.1; "none" there: 0), NaN for a choice.
    std::vector<double> positions;

    /// Whether the values have positions (every one finite, at least two distinct): charts put it on an x axis.
    bool numeric() const;
    /// Whether a chart should use a logarithmic axis: positive values whose largest is at least 4 times the
    /// smallest and that grow by one factor (a doubling range), or span more than two decades.
    bool logScale() const;
    /// The factor of a logarithmic axis' ticks: 2 when every value is a power of two, else 10.
    double logBase() const;
    /// "8" -> its index, or -1.
    int indexOf(const std::string& value) const;
};

/// Parses "NAME=VALUES" (`--sweep`). VALUES: a list separated by commas (by semicolons when a value has commas
/// of its own, as --layers 64,32,10 does), each item a value or a range: "A..B" doubles from A up to B
/// (1..256 is 1,2,4,...,256), "A..BxK" multiplies by K (0.001..1x10). `origin` names the flag in messages
/// ("--sweep"). Throws SgdError naming the flag, the axis and the value, and what is allowed.
StudyAxis parseAxis(const std::string& text, const std::string& origin);
/// The values of an axis on `option`, parsed from VALUES as parseAxis does.
StudyAxis axisOf(const OptionSpec& option, const std::string& values, const std::string& origin);
/// An axis on `option` with the values as given (already expanded, e.g. seeds).
StudyAxis axisWithValues(const OptionSpec& option, std::vector<std::string> values, const std::string& origin);

/// The options a study cannot sweep nor share with its points, and why ("" if it can): the outputs every
/// point would write to the same place, the progress stream.
std::string whyNotInStudy(const std::string& option);

} // namespace sgdscope
