// gnuplot through a pipe; its own errors go to stderr.
#include "eval/gnuplot.h"

#include <cstdio>

#include "runtime/errors.h"

namespace snapstream::eval {

void run_gnuplot(const std::string& script, const std::string& what) {
  FILE* gnuplot = popen("gnuplot", "w");
  if (gnuplot == nullptr) throw runtime::ConfigError("cannot start gnuplot to draw " + what + " (scripts/setup.sh installs it)");
  std::fwrite(script.data(), 1, script.size(), gnuplot);
  if (pclose(gnuplot) != 0) throw runtime::ConfigError("gnuplot failed to draw " + what + " (is gnuplot installed? scripts/setup.sh)");
}

}  // namespace snapstream::eval
