// A command-line option whose value is one of a few names, each standing for an enum value.
#pragma once

#include <map>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace snapstream::app {

// A transform for an enum option: a listed name becomes its enum value, anything else is refused
// with the names a user may give (CLI11's own enum mapping cannot print our enums).
template <typename Enum>
CLI::Validator one_of(const std::map<std::string, Enum>& choices) {
  std::string names;
  for (const auto& [name, value] : choices) names += (names.empty() ? "" : "|") + name;
  return CLI::Validator(
      [choices, names](std::string& given) -> std::string {
        const auto found = choices.find(given);
        if (found == choices.end()) return "'" + given + "' is not one of " + names;
        given = std::to_string(static_cast<std::underlying_type_t<Enum>>(found->second));
        return {};
      },
      names);
}

}  // namespace snapstream::app
