// Reading one sample out of the Prometheus text the server's /metrics returns.
#pragma once

#include <string>

namespace snapstream::test {

// The value of the first sample of `name` whose labels contain `label` (e.g.
// `finished_reason="error"`); -1 when there is none.
double metric_sample(const std::string& metrics, const std::string& name, const std::string& label = "");

}  // namespace snapstream::test
