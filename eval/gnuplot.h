// Report output: text files, and plots drawn with Debian's gnuplot (a script is piped to it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace snapstream::eval {

// Writes `text` to `path`; throws ConfigError when it cannot.
void write_report_file(const std::filesystem::path& path, const std::string& text);

// Runs gnuplot on `script`; throws ConfigError naming `what` when gnuplot is missing or fails.
void run_gnuplot(const std::string& script, const std::string& what);

// A script drawing `dir`/`png`: one line per series, series `s` read from `dir`/`s`.dat with the
// budget C in column 1 (log scale) and the measure in `column`. `settings`: further gnuplot
// lines, such as a fixed y range.
std::string budget_plot_script(const std::filesystem::path& dir, const std::vector<std::string>& series, const std::string& png,
                               int column, const std::string& ylabel, const std::string& title, const std::string& settings = "");

}  // namespace snapstream::eval
