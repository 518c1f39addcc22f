// Report files, and gnuplot through a pipe (its own errors go to stderr).
#include "eval/gnuplot.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "runtime/errors.h"

namespace snapstream::eval {

void write_report_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out || !(out << text)) throw runtime::ConfigError("cannot write " + path.string());
}

void run_gnuplot(const std::string& script, const std::string& what) {
  FILE* gnuplot = popen("gnuplot", "w");
  if (gnuplot == nullptr) throw runtime::ConfigError("cannot start gnuplot to draw " + what + " (scripts/setup.sh installs it)");
  std::fwrite(script.data(), 1, script.size(), gnuplot);
  if (pclose(gnuplot) != 0) throw runtime::ConfigError("gnuplot failed to draw " + what + " (is gnuplot installed? scripts/setup.sh)");
}

std::string budget_plot_script(const std::filesystem::path& dir, const std::vector<std::string>& series, const std::string& png,
                               int column, const std::string& ylabel, const std::string& title, const std::string& settings) {
  std::string script = fmt::format(
      "set terminal pngcairo size 800,500 noenhanced font ',10'\nset output '{}'\nset datafile separator ','\n"
      "set title '{}'\nset xlabel 'budget C (cache positions per sequence)'\nset ylabel '{}'\nset logscale x 2\nset grid\n"
      "set key top right\n{}plot ",
      (dir / png).string(), title, ylabel, settings);
  for (size_t i = 0; i < series.size(); ++i)
    script += fmt::format("{}'{}' using 1:{} with linespoints title '{}'", i ? ", " : "", (dir / (series[i] + ".dat")).string(),
                          column, series[i]);
  return script + "\n";
}

}  // namespace snapstream::eval
