#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace sgdscope {

/// JSON values are nlohmann::json's (Debian nlohmann-json3-dev), with keys in insertion order so that our
/// output files read in a fixed, meaningful order.
using Json = nlohmann::ordered_json;

/// Parses text strictly (RFC 8259: no comments, no NaN, nothing after the value), and also refuses
/// duplicate keys and nesting deeper than 64 levels. Throws SgdError
/// "<what>: <problem> at line L, column C" (or "<what>: duplicate key "k" in an object").
Json parseJson(std::string_view text, const std::string& what);

/// Serialises with `indent` spaces per level; arrays of plain numbers, booleans and nulls stay on one line
/// (histograms and shapes read better that way). Non-finite numbers are written as null.
std::string dumpJson(const Json& value, int indent = 2);

/// The member `key` of an object, or nullptr if absent (or if `object` is not an object).
const Json* member(const Json& object, std::string_view key);

/// "a number", "a string", "an array", ... for messages.
std::string typeName(const Json& value);

/// Shortest decimal text that reads back as the same double ("0.1", "1e-07"); whole numbers as integers
/// ("100000", not "1e+05"); "null" for non-finite values.
std::string formatNumber(double value);

} // namespace sgdscope
