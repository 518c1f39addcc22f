// Sweeps: one CSV row per (point, cache), then a gnuplot script for three panels against the
// swept axis: aggregate tokens/s, the largest batch that fits, and KV bytes per sequence.
#include "app/simulation_sweep.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "app/simulation_report.h"
#include "dataflow_sim/errors.h"
#include "eval/gnuplot.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

std::vector<int64_t> default_values(const graph::ModelShape& model, const dataflow_sim::SystemSpec& system,
                                    const dataflow_sim::SimulationOptions& options, const std::string& axis) {
  std::vector<int64_t> values;
  int64_t last = model.context_length;
  if (axis == "batch") {
    dataflow_sim::SimulationOptions fit = options;
    fit.max_batch = true;
    last = dataflow_sim::simulate(model, system, fit).max_batch;
  }
  for (int64_t v = axis == "batch" ? 1 : 1024; v < last; v *= 2) values.push_back(v);
  values.push_back(last);
  return values;
}

// The sweep CSV's columns: the axis value, the cache ("full" or "snapstream"), then the
// simulation report's own.
std::string sweep_csv_header(const std::string& axis) { return axis + ",cache," + simulation_csv_header(); }

// The 1-based column gnuplot reads `name` from, found in the header the CSV is written with.
int sweep_column(const std::string& axis, const std::string& name) {
  std::string header = sweep_csv_header(axis);
  header.erase(header.find_last_not_of("\r\n") + 1);
  int column = 1;
  for (size_t start = 0;; ++column) {
    const size_t end = header.find(',', start);
    if (header.compare(start, end == std::string::npos ? std::string::npos : end - start, name) == 0) return column;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  throw runtime::ConfigError("the sweep CSV has no column '" + name + "'");
}

std::string plot_script(const std::filesystem::path& csv, const std::filesystem::path& png, const std::string& axis,
                        const std::string& title) {
  const std::string x = axis == "batch" ? "batch (sequences)" : "context (tokens)";
  return fmt::format(R"(set terminal pngcairo size 1500,480 noenhanced font ",10"
set output '{png}'
set datafile separator ','
set key top right
set logscale x 2
set grid
set multiplot layout 1,3 title '{title}'
set xlabel '{x}'
set ylabel 'tokens/s (all users)'
plot '{csv}' using 1:(strcol(2) eq 'full' ? ${tokens} : NaN) skip 1 with linespoints title 'full cache', \
     '{csv}' using 1:(strcol(2) eq 'snapstream' ? ${tokens} : NaN) skip 1 with linespoints title 'SnapStream'
set logscale y 2
set ylabel 'largest batch that fits'
plot '{csv}' using 1:(strcol(2) eq 'full' ? ${batch} : NaN) skip 1 with linespoints title 'full cache', \
     '{csv}' using 1:(strcol(2) eq 'snapstream' ? ${batch} : NaN) skip 1 with linespoints title 'SnapStream'
set ylabel 'KV per sequence (GiB)'
plot '{csv}' using 1:(strcol(2) eq 'full' ? ${kv} / 2**30 : NaN) skip 1 with linespoints title 'full cache', \
     '{csv}' using 1:(strcol(2) eq 'snapstream' ? ${kv} / 2**30 : NaN) skip 1 with linespoints title 'SnapStream'
unset multiplot
)",
                     fmt::arg("png", png.string()), fmt::arg("csv", csv.string()), fmt::arg("x", x), fmt::arg("title", title),
                     fmt::arg("tokens", sweep_column(axis, "tokens_per_s_aggregate")), fmt::arg("batch", sweep_column(axis, "max_batch")),
                     fmt::arg("kv", sweep_column(axis, "kv_bytes_per_sequence")));
}

}  // namespace

void run_sweep(const graph::ModelShape& model, const dataflow_sim::SystemSpec& system,
               const dataflow_sim::SimulationOptions& options, const SweepSpec& sweep) {
  if (sweep.axis != "context" && sweep.axis != "batch") throw runtime::ConfigError("--sweep takes 'context' or 'batch'");
  const std::vector<int64_t> values = sweep.values.empty() ? default_values(model, system, options, sweep.axis) : sweep.values;
  const std::filesystem::path csv = sweep.out.string() + ".csv", png = sweep.out.string() + ".png";
  if (sweep.out.has_parent_path()) std::filesystem::create_directories(sweep.out.parent_path());
  std::ofstream out(csv);
  if (!out) throw runtime::ConfigError("cannot write " + csv.string());
  out << sweep_csv_header(sweep.axis);
  int64_t written = 0;
  // One block of rows per cache, so each plotted line runs through consecutive rows.
  for (const bool full : {true, false}) {
    for (const int64_t value : values) {
      dataflow_sim::SimulationOptions point = options;
      if (sweep.axis == "context") {
        point.context = value;
      } else {
        point.batch = value;
        point.max_batch = false;
      }
      point.kv_capacity = full ? 0 : (sweep.kv_capacity > 0 ? sweep.kv_capacity : std::max<int64_t>(1, point.context / 4));
      try {
        const std::string row = simulation_csv_row(dataflow_sim::simulate(model, system, point));
        out << value << "," << (full ? "full" : "snapstream") << "," << row;
        ++written;
      } catch (const dataflow_sim::SimulationError& e) {
        std::cerr << fmt::format("{} {} ({}): left out: {}\n", sweep.axis, value, full ? "full cache" : "SnapStream", e.what());
      }
    }
  }
  out.close();
  if (written == 0) throw runtime::ConfigError("no point of the sweep fits " + system.name);
  const std::string title = fmt::format("{} on {}: full cache vs SnapStream", model.name, system.name);
  eval::run_gnuplot(plot_script(csv, png, sweep.axis, title), png.string());
  std::cout << "wrote " << csv.string() << " (" << written << " rows) and " << png.string() << "\n";
}

}  // namespace snapstream::app
