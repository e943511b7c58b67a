#include "core/data/CsvLoader.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/io/Files.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace sgdscope {

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

bool parseFloat(std::string_view s, double& value)
{
    if (!s.empty() && s.front() == '+')
        s.remove_prefix(1);
    if (s.empty())
        return false;
    const auto result = std::from_chars(s.data(), s.data() + s.size(), value);
    return result.ec == std::errc() && result.ptr == s.data() + s.size();
}

std::string quoted(std::string_view s)
{
    std::string out = "'";
    for (const char c : s.substr(0, 40)) {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 || u >= 0x7f) ? '?' : c;
    }
    if (s.size() > 40)
        out += "...";
    return out + "'";
}

} // namespace

namespace {

/// Calls f(lineNumber, fields) for every non-blank line; `fields` is reused, so memory stays at one line.
template<typename F>
void forEachCsvLine(const std::string& text, F&& f)
{
    std::vector<std::string_view> fields;
    std::size_t lineNumber = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        ++lineNumber;
        const std::string_view line = trim(std::string_view(text).substr(pos, end - pos));
        pos = end + 1;
        if (line.empty())
            continue;
        fields.clear();
        std::size_t start = 0;
        while (true) {
            const std::size_t comma = line.find(',', start);
            fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
            if (comma == std::string_view::npos)
                break;
            start = comma + 1;
        }
        if (lineNumber % 16384 == 0)
            throwIfCancelled("reading a CSV file");
        if (!f(lineNumber, fields))
            return;
    }
}

} // namespace

Dataset parseCsv(const std::string& text, const std::string& what, const CsvOptions& options)
{
    // First pass: the shape (and the header); the second parses the numbers straight into the matrix, so
    // memory is the text plus the data, never a copy of every field.
    std::size_t columns = 0;
    std::size_t firstLine = 0;
    std::size_t rows = 0;
    bool hasHeader = options.header == CsvOptions::Header::Yes;
    std::vector<std::string> names;
    forEachCsvLine(text, [&](std::size_t number, const std::vector<std::string_view>& fields) {
        if (columns == 0) {
            columns = fields.size();
            firstLine = number;
            if (options.header == CsvOptions::Header::Auto) {
                double ignored = 0;
                for (const auto field : fields)
                    hasHeader = hasHeader || !parseFloat(field, ignored);
            }
            if (hasHeader) {
                for (const auto field : fields)
                    names.emplace_back(field);
                return true;
            }
        }
        if (fields.size() != columns)
            throw SgdError(what + ", line " + std::to_string(number) + ": has " + std::to_string(fields.size())
                + " fields, expected " + std::to_string(columns) + " as on line " + std::to_string(firstLine));
        ++rows;
        return true;
    });
    if (columns == 0)
        throw SgdError(what + ": the file is empty (no data rows)");
    if (rows == 0)
        throw SgdError(what + ": has a header line but no data rows");
    if (columns < 2)
        throw SgdError(what + ", line " + std::to_string(firstLine) + ": found " + std::to_string(columns)
            + " column; at least 2 are needed (inputs and a target)");

    // Which columns are targets.
    std::vector<std::size_t> targetColumns;
    if (options.targets.empty()) {
        targetColumns.push_back(columns - 1);
    } else {
        for (const auto& t : options.targets) {
            std::size_t index = 0;
            const auto byName = std::find(names.begin(), names.end(), t);
            if (byName != names.end()) {
                index = static_cast<std::size_t>(byName - names.begin());
            } else {
                const auto result = std::from_chars(t.data(), t.data() + t.size(), index);
                if (result.ec != std::errc() || result.ptr != t.data() + t.size())
                    throw SgdError("--targets: '" + t + "' is neither a column name in the header of " + what
                        + " nor a column index");
                if (index >= columns)
                    throw SgdError("--targets: column " + t + " does not exist; " + what + " has columns 0 to "
                        + std::to_string(columns - 1));
            }
            if (std::find(targetColumns.begin(), targetColumns.end(), index) != targetColumns.end())
                throw SgdError("--targets: column '" + t + "' is named twice");
            targetColumns.push_back(index);
        }
    }
    if (targetColumns.size() >= columns)
        throw SgdError("--targets: every column is a target; at least one input column is needed");
    if (options.classification && targetColumns.size() != 1)
        throw SgdError("--targets: cross-entropy needs exactly one target column of class labels, got "
            + std::to_string(targetColumns.size()));

    std::vector<int> role(columns, -1); // -1: input; else the target's index
    for (std::size_t t = 0; t < targetColumns.size(); ++t)
        role[targetColumns[t]] = static_cast<int>(t);
    const auto features = static_cast<Eigen::Index>(columns - targetColumns.size());

    Dataset d;
    d.name = what;
    d.inputs.resize(features, static_cast<Eigen::Index>(rows));
    if (options.classification)
        d.labels.resize(rows);
    else
        d.targets.resize(static_cast<Eigen::Index>(targetColumns.size()), static_cast<Eigen::Index>(rows));

    std::int32_t maxLabel = 0;
    Eigen::Index row = 0;
    bool skippedHeader = !hasHeader;
    forEachCsvLine(text, [&](std::size_t number, const std::vector<std::string_view>& fields) {
        if (!skippedHeader) {
            skippedHeader = true;
            return true;
        }
        Eigen::Index feature = 0;
        for (std::size_t c = 0; c < columns; ++c) {
            double value = 0.0;
            if (!parseFloat(fields[c], value) || !std::isfinite(value)
                || std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max()))
                throw SgdError(what + ", line " + std::to_string(number) + ", column " + std::to_string(c + 1) + ": "
                    + quoted(fields[c]) + " is not a finite number");
            if (role[c] < 0) {
                d.inputs(feature++, row) = static_cast<float>(value);
            } else if (options.classification) {
                if (value < 0 || value != std::floor(value) || value > 100000)
                    throw SgdError(what + ", line " + std::to_string(number) + ", column " + std::to_string(c + 1)
                        + ": " + quoted(fields[c]) + " is not a class label (an integer from 0 to 100000)");
                const auto label = static_cast<std::int32_t>(value);
                d.labels[static_cast<std::size_t>(row)] = label;
                maxLabel = std::max(maxLabel, label);
            } else {
                d.targets(role[c], row) = static_cast<float>(value);
            }
        }
        ++row;
        return true;
    });
    if (options.classification)
        d.classes = std::max(2, maxLabel + 1);
    return d;
}

Dataset loadCsv(const std::string& path, const CsvOptions& options)
{
    const std::string text = readFile(path, "CSV file");
    return parseCsv(text, "CSV file '" + path + "'", options);
}

} // namespace sgdscope
