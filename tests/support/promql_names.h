// The metric names a PromQL expression reads, for checking dashboards against /metrics.
#pragma once

#include <set>
#include <string>

namespace snapstream::test {

// Every series selector's metric name in `expression`: identifiers that are not functions,
// aggregations, keywords, label names (in label matchers and by/without/on/ignoring lists) or
// literals. Grafana variables ($name, ${name}) are skipped. Throws std::invalid_argument on an
// unterminated string or bracket.
std::set<std::string> promql_metric_names(const std::string& expression);

}  // namespace snapstream::test
