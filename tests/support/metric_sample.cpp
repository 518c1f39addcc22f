// Finds a sample line in Prometheus text with a regular expression over name and labels.
#include "tests/support/metric_sample.h"

#include <regex>

namespace snapstream::test {

double metric_sample(const std::string& metrics, const std::string& name, const std::string& label) {
  const std::regex line("(^|\\n)" + name + "\\{[^}]*" + label + "[^}]*\\} ([0-9.e+-]+)");
  std::smatch match;
  if (!std::regex_search(metrics, match, line)) return -1.0;
  return std::stod(match[2]);
}

}  // namespace snapstream::test
