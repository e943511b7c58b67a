#pragma once

#include "core/common/NamedValues.h"
#include "core/data/Dataset.h"

#include <string>
#include <vector>

namespace sgdscope {

struct CsvOptions
{
    enum class Header
    {
        Auto,
        Yes,
        No
    };
    Header header = Header::Auto;
    /// Target columns by 0-based index or by header name; empty means the last column.
    std::vector<std::string> targets;
    /// Cross-entropy: the one target column holds integer class labels 0..C-1.
    bool classification = false;
};

inline constexpr NameTable<CsvOptions::Header, 3> csvHeaderNames {
    {{"auto", CsvOptions::Header::Auto}, {"yes", CsvOptions::Header::Yes}, {"no", CsvOptions::Header::No}}};

/// Loads a CSV file of numbers (comma separated; blank lines ignored). A malformed file is rejected with
/// SgdError naming the file, the line and column and what is wrong.
Dataset loadCsv(const std::string& path, const CsvOptions& options);
/// The same from text already in memory (`what` names it in messages).
Dataset parseCsv(const std::string& text, const std::string& what, const CsvOptions& options);

} // namespace sgdscope
