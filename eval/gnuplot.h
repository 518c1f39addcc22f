// Drawing plots with Debian's gnuplot: a script is piped to it.
#pragma once

#include <string>

namespace snapstream::eval {

// Runs gnuplot on `script`; throws ConfigError naming `what` when gnuplot is missing or fails.
void run_gnuplot(const std::string& script, const std::string& what);

}  // namespace snapstream::eval
