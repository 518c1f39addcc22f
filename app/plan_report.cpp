// Plans as a table, a CSV and a gnuplot frontier. The CSV's columns are the contract scripts
// rely on; the plot reads them by name.
#include "app/plan_report.h"

#include <fmt/format.h>

#include <fstream>
#include <set>

#include "eval/gnuplot.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

using dataflow_sim::PlanPoint;

std::string cache_name(const PlanPoint& p) { return p.full_cache ? "full" : fmt::format("C={}", p.capacity); }
std::string attention_name(const PlanPoint& p) { return p.data_parallel_attention ? "data" : "tensor"; }

constexpr const char* kCsvHeader =
    "system,tp,cache,capacity,attention,batch,max_batch,concurrency,replicas,sockets,systems,tokens_per_s_per_user,tokens_per_s_aggregate,"
    "tokens_per_s_per_socket,ttft_seconds,step_seconds,meets,frontier\n";

}  // namespace

std::string plan_table(const dataflow_sim::PlanResult& result, size_t top) {
  std::string out;
  if (result.plans.empty()) {
    out += "no configuration searched meets the objectives\n";
  } else {
    out += fmt::format("{:>7} {:>7}  {:<10} {:>3}  {:<9} {:<9} {:>5} {:>8} {:>11} {:>10} {:>12} {:>9}  {}\n", "sockets", "systems", "system", "TP",
                       "cache", "attention", "batch", "replicas", "tok/s/user", "tok/s all", "tok/s/socket", "TTFT s", "binding");
    for (size_t i = 0; i < result.plans.size() && i < top; ++i) {
      const PlanPoint& p = result.plans[i];
      out += fmt::format("{:>7} {:>7}  {:<10} {:>3}  {:<9} {:<9} {:>5} {:>8} {:>11.1f} {:>10.0f} {:>12.1f} {:>9.2f}  {}\n", p.sockets, p.systems,
                         p.system, p.tp, cache_name(p), attention_name(p), p.batch, p.replicas, p.tokens_per_s_per_user, p.tokens_per_s_aggregate,
                         p.tokens_per_s_per_socket, p.ttft_seconds, p.binding);
    }
  }
  for (const auto& why : result.skipped) out += "  skipped " + why + "\n";
  return out;
}

void write_plan_files(const dataflow_sim::PlanResult& result, const std::filesystem::path& prefix, const std::string& title) {
  const std::filesystem::path csv = prefix.string() + ".csv", png = prefix.string() + ".png";
  if (prefix.has_parent_path()) std::filesystem::create_directories(prefix.parent_path());
  std::ofstream out(csv);
  if (!out) throw runtime::ConfigError("cannot write " + csv.string());
  out << kCsvHeader;
  // Rows grouped by deployment family (system and cache), so each plotted series is a block.
  std::set<std::pair<std::string, std::string>> families;
  for (const PlanPoint& p : result.points) families.insert({p.system, cache_name(p)});
  for (const auto& [system, cache] : families)
    for (const PlanPoint& p : result.points)
      if (p.system == system && cache_name(p) == cache)
        out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{}\n", p.system, p.tp, cache_name(p), p.capacity,
                           attention_name(p), p.batch, p.max_batch, p.concurrency, p.replicas, p.sockets, p.systems, p.tokens_per_s_per_user,
                           p.tokens_per_s_aggregate, p.tokens_per_s_per_socket, p.ttft_seconds, p.step_seconds, p.meets ? 1 : 0,
                           p.frontier ? 1 : 0);
  out.close();
  if (!out) throw runtime::ConfigError("cannot write " + csv.string());
  // Columns by position in kCsvHeader: 1 system, 3 cache, 12 per user, 14 per socket, 18 frontier.
  std::string plots;
  for (const auto& [system, cache] : families) {
    if (!plots.empty()) plots += ", \\\n     ";
    plots += fmt::format("'{csv}' using (strcol(1) eq '{s}' && strcol(3) eq '{c}' ? $12 : NaN):14 skip 1 with points title '{s} {c}'",
                         fmt::arg("csv", csv.string()), fmt::arg("s", system), fmt::arg("c", cache));
  }
  plots += fmt::format(", \\\n     '{csv}' using ($18 == 1 ? $12 : NaN):14 skip 1 with points pt 6 ps 2 lc rgb 'black' title 'frontier'",
                       fmt::arg("csv", csv.string()));
  const std::string script = fmt::format(R"(set terminal pngcairo size 900,600 noenhanced font ",10"
set output '{png}'
set datafile separator ','
set key outside right
set logscale xy
set grid
set title '{title}'
set xlabel 'tokens/s per user'
set ylabel 'tokens/s per socket (all users)'
plot {plots}
)",
                                         fmt::arg("png", png.string()), fmt::arg("title", title), fmt::arg("plots", plots));
  eval::run_gnuplot(script, png.string());
}

}  // namespace snapstream::app
