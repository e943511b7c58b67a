#pragma once

#include "core/common/Json.h"
#include "core/run/RunConfig.h"

#include <functional>
#include <string>
#include <vector>

namespace sgdscope {

/// What kind of value an option takes.
enum class OptionType
{
    Integer, // a whole number within [min, max]
    Number, // a finite number within its bounds
    Choice, // one of `choices`
    Text, // any non-empty text (a name, a path)
    List, // comma-separated items ("1,5,1"), or a JSON array
};

/// A value that passed its option's type check: the number (Integer, Number), the text (Choice, Text) or
/// the items (List).
struct OptionValue
{
    double number = 0.0;
    std::string text;
    std::vector<std::string> items;
};

/// One run option, declared once. The command line (--name VALUE), --config files (a JSON object with the
/// same keys), presets, validation (ranges and messages), --help, the README's option list (checked by a
/// test) and the window's slider ranges all read this table.
struct OptionSpec
{
    std::string name; // without dashes
    std::string valueName; // for --help: "P", "FILE"
    OptionType type = OptionType::Text;
    std::string help; // one line for --help
    double min = 0.0; // Integer and Number: the allowed range
    double max = 0.0;
    bool minExclusive = false; // Number: the bound itself is not allowed
    bool maxExclusive = false;
    std::vector<std::string> choices; // Choice
    bool repeatable = false; // may be given several times on the command line (--slow)
    bool pathValue = false; // Text: a file or folder name
    std::string flagValue; // Choice: the value it takes on the command line when given alone (--dc-adaptive: on)
    int windowMax = 0; // the window's slider goes up to this (0: max)
    /// The window's range for a number (its slider or box), when narrower than [min, max] (both 0: none).
    /// For --slow and --jitter: the straggler factor's and jitter's sliders.
    double windowLow = 0.0;
    double windowHigh = 0.0;

    /// Where the option applies: "" if it takes effect in `config`, else why it does not (the reason is
    /// shown after "--name: "). Only options the user gave (command line, --config) are checked.
    std::function<std::string(const RunConfig& config)> whyInapplicable;
    /// Puts a value that passed the type and range checks into the configuration (`origin` names it in
    /// messages about what only this option knows, such as a layer width).
    std::function<void(RunConfig& config, const OptionValue& value, const std::string& origin)> store;
    /// The value in a configuration, for summary.json's "config" (null: left out).
    std::function<Json(const RunConfig& config)> load;

    /// "use an integer from 1 to 256", "use sync | async | both", ...
    std::string allowedText() const;
    /// Checks `value` (a JSON number, or text from the command line) against the type and range; throws
    /// SgdError naming `origin`, the value as written and what is allowed.
    OptionValue parse(const Json& value, const std::string& origin) const;
    /// Throws SgdError "<origin>: <value> is not allowed; <allowedText()>" if a number is out of range
    /// (for settings that come from the window rather than from text).
    void checkNumber(double value, const std::string& origin) const;
};

/// The value as the user wrote it, for messages: 'text' for strings, plain numbers otherwise.
std::string shownValue(const Json& value);

/// The items of comma-separated text ("1,5,1"; an empty item stays an empty item).
std::vector<std::string> splitList(const std::string& text);
/// The items one after another with `separator` between them ("sync | async").
std::string joinedItems(const std::vector<std::string>& items, const std::string& separator = " | ");

} // namespace sgdscope
