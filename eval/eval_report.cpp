// Tables, CSV and plots of evaluation results.
#include "eval/eval_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "eval/gnuplot.h"
#include "runtime/errors.h"

namespace snapstream::eval {
namespace {

// Plain statements read off the default-setting rows: whether SnapStream's NLL gap is below each
// simpler policy's at every budget, and where it is not.
std::string findings(const std::vector<EvalResult>& results, const EvalPlan& plan) {
  std::map<std::pair<std::string, int64_t>, const EvalResult*> base;
  for (const auto& r : results)
    if (has_default_settings(r.row, plan)) base[{r.row.policy, r.row.budget}] = &r;
  std::string md = "\n## What the numbers show\n\n";
  for (const std::string other : {"streaming", "random"}) {
    std::vector<std::string> worse;
    int64_t compared = 0;
    for (const int64_t budget : plan.budgets) {
      const auto a = base.find({"snapstream", budget}), b = base.find({other, budget});
      if (a == base.end() || b == base.end()) continue;
      ++compared;
      if (a->second->nll_gap() >= b->second->nll_gap())
        worse.push_back(fmt::format("C = {} ({:+.4f} against {:+.4f})", budget, a->second->nll_gap(), b->second->nll_gap()));
    }
    if (compared == 0) continue;
    if (worse.empty())
      md += fmt::format("- SnapStream's NLL gap is below {}'s at every budget.\n", other);
    else
      md += fmt::format("- SnapStream's NLL gap is not below {}'s at {} of {} budgets: {}.\n", other, worse.size(), compared,
                        fmt::join(worse, "; "));
  }
  for (const int64_t budget : plan.budgets) {
    const auto a = base.find({"snapstream", budget});
    if (a == base.end()) continue;
    const EvalResult& r = *a->second;
    md += fmt::format("- SnapStream at C = {}: NLL gap {:+.4f} nats per token ({:+.1f}% perplexity), teacher-forced agreement "
                      "{:.1f}%, first 16 greedy tokens {:.1f}% equal, attention recall {:.1f}%.\n",
                      budget, r.nll_gap(), 100 * (std::exp(r.nll_gap()) - 1), 100 * r.greedy_agreement, 100 * r.agree16,
                      100 * r.attention_recall);
  }
  return md;
}

// A stream row's name in the report: the full cache's rows by policy, bounded ones with C and positions.
std::string cache_name(const EvalRow& row) {
  return row.policy == "full" || row.policy == "story" ? row.policy : fmt::format("{}-C{}-{}", row.policy, row.budget, row.positions);
}

// `cache`'s NLL over the windows inside positions [begin, end): token-weighted over all of
// them, and each stream's own (every stream has the same tokens in a window).
struct SpanNll {
  double mean = 0;
  std::vector<double> per_stream;
};

std::optional<SpanNll> nll_within(const std::vector<StreamWindow>& windows, const std::string& cache, int64_t begin, int64_t end) {
  SpanNll span;
  int64_t tokens = 0;
  for (const auto& w : windows) {
    if (cache_name(w.row) != cache || w.begin < begin || w.end > end) continue;
    const auto weight = static_cast<double>(w.tokens);
    span.mean += w.nll * weight;
    span.per_stream.resize(w.stream_nll.size(), 0.0);
    for (size_t s = 0; s < w.stream_nll.size(); ++s) span.per_stream[s] += w.stream_nll[s] * weight;
    tokens += w.tokens;
  }
  if (tokens == 0) return std::nullopt;
  span.mean /= static_cast<double>(tokens);
  for (auto& value : span.per_stream) value /= static_cast<double>(tokens);
  return span;
}

// "(+3.0%)", or with two streams or more "(+3.0% ± 1.1%)": the change from `early` to `late` and
// the standard error of its mean over streams, each stream's change taken in its own text, which
// cancels most of what makes one stream harder than another.
std::string change_text(const SpanNll& early, const SpanNll& late) {
  const std::string percent = fmt::format("{:+.1f}%", 100 * (late.mean / early.mean - 1));
  const size_t n = std::min(early.per_stream.size(), late.per_stream.size());
  if (n < 2) return "(" + percent + ")";
  double mean = 0, squares = 0;
  for (size_t s = 0; s < n; ++s) mean += late.per_stream[s] - early.per_stream[s];
  mean /= static_cast<double>(n);
  for (size_t s = 0; s < n; ++s) squares += std::pow(late.per_stream[s] - early.per_stream[s] - mean, 2);
  const double standard_error = std::sqrt(squares / static_cast<double>(n - 1) / static_cast<double>(n));
  return fmt::format("({} ± {:.1f}%, standard error over {} streams)", percent, 100 * standard_error / early.mean, n);
}

// Each cache's NLL over the stream's last kStreamTail positions against positions 256-512 (in the
// context, after the first windows' short histories), where its windows cover both; beside the
// "story" row's over the same positions when there is one, since the text itself is easier or
// harder in different places (late in a long story, say, against a story's first tokens).
std::string stream_findings(const std::vector<StreamWindow>& windows, const std::vector<std::string>& names) {
  constexpr int64_t kEarlyBegin = 256, kEarlyEnd = 512, kStreamTail = 512;
  int64_t length = 0;
  for (const auto& w : windows) length = std::max(length, w.end);
  std::string md;
  const auto story_early = nll_within(windows, "story", kEarlyBegin, kEarlyEnd);
  const auto story_late = nll_within(windows, "story", length - kStreamTail, length);
  for (const auto& name : names) {
    const auto early = nll_within(windows, name, kEarlyBegin, kEarlyEnd);
    const auto late = nll_within(windows, name, length - kStreamTail, length);
    if (!early) continue;
    if (name == "story") {
      if (late)
        md += fmt::format("- story (the full cache restarted at every BOS: each token given its own story): NLL {:.4f} over positions "
                          "{}-{} against {:.4f} over {}-{} {}.\n", late->mean, length - kStreamTail, length, early->mean, kEarlyBegin,
                          kEarlyEnd, change_text(*early, *late));
      continue;
    }
    if (!late) {
      md += fmt::format("- {}: NLL {:.4f} over positions {}-{}; it stops before the stream's last {} positions.\n", name, early->mean,
                        kEarlyBegin, kEarlyEnd, kStreamTail);
      continue;
    }
    md += fmt::format("- {}: NLL {:.4f} over positions {}-{} against {:.4f} over {}-{} {}", name, late->mean, length - kStreamTail,
                      length, early->mean, kEarlyBegin, kEarlyEnd, change_text(*early, *late));
    if (story_early && story_late)
      md += fmt::format("; above the story row by {:+.4f} there and {:+.4f} at {}-{}", late->mean - story_late->mean,
                        early->mean - story_early->mean, kEarlyBegin, kEarlyEnd);
    md += ".\n";
  }
  return md.empty() ? md : "\n## What the numbers show\n\n" + md;
}

}  // namespace

std::string eval_table(const std::vector<EvalResult>& results) {
  std::string out = fmt::format("{:<11} {:>6} {:>5} {:>6} {:>5} {:<10} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} {:>8}\n", "policy",
                                "budget", "ring", "window", "pool", "positions", "nll", "nll_gap", "ppl", "agree_tf", "agree16", "agree64",
                                "recall");
  for (const auto& r : results)
    out += fmt::format("{:<11} {:>6} {:>5} {:>6} {:>5} {:<10} {:>8.4f} {:>+8.4f} {:>8.3f} {:>8.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}%\n",
                       r.row.policy, r.row.budget, r.row.ring, r.row.window, r.row.pool_kernel, r.row.positions, r.nll, r.nll_gap(),
                       std::exp(r.nll), 100 * r.greedy_agreement, 100 * r.agree16, 100 * r.agree64, 100 * r.attention_recall);
  if (!results.empty())
    out += fmt::format("full cache: nll {:.4f}, perplexity {:.3f}\n", results.front().nll_full, std::exp(results.front().nll_full));
  return out;
}

std::string eval_csv(const std::vector<EvalResult>& results) {
  std::string out =
      "task,context,policy,budget,ring,window,pool_kernel,positions,documents,nll,nll_full,nll_gap,greedy_agreement,agree16,agree64,"
      "attention_recall,accuracy,values_kept\n";
  for (const auto& r : results)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{}\n", r.task, r.context,
                       r.row.policy, r.row.budget, r.row.ring, r.row.window, r.row.pool_kernel, r.row.positions, r.documents, r.nll,
                       r.nll_full, r.nll_gap(), r.greedy_agreement, r.agree16, r.agree64, r.attention_recall,
                       r.accuracy < 0 ? std::string() : fmt::format("{:.6f}", r.accuracy),
                       r.values_kept < 0 ? std::string() : fmt::format("{:.6f}", r.values_kept));
  return out;
}

void write_eval_report(const std::filesystem::path& dir, const EvalSetting& setting, const std::vector<EvalResult>& results) {
  std::filesystem::create_directories(dir);
  write_report_file(dir / "results.csv", eval_csv(results));
  // One data file per policy (budget, gap, agreement) for the plots.
  std::map<std::string, std::string> series;
  std::vector<std::string> policies;
  for (const auto& r : results) {
    if (!has_default_settings(r.row, setting.plan)) continue;
    if (!series.count(r.row.policy)) policies.push_back(r.row.policy);
    series[r.row.policy] += fmt::format("{},{:.6f},{:.6f}\n", r.row.budget, r.nll_gap(), 100 * r.greedy_agreement);
  }
  for (const auto& [policy, data] : series) write_report_file(dir / (policy + ".dat"), data);
  run_gnuplot(budget_plot_script(dir, policies, "nll_gap.png", 2, "NLL gap to the full cache (nats per token)",
                                 setting.model + ": NLL gap against budget"),
              (dir / "nll_gap.png").string());
  run_gnuplot(budget_plot_script(dir, policies, "agreement.png", 3, "greedy agreement with the full cache (%)",
                                 setting.model + ": teacher-forced top-1 agreement against budget"),
              (dir / "agreement.png").string());
  for (const auto& policy : policies) std::filesystem::remove(dir / (policy + ".dat"));

  std::string md = fmt::format("# SnapStream against simpler cache policies on {}\n\n", setting.model);
  md += fmt::format(
      "{} documents ({}; {} too short were dropped), each a prompt of L = {} tokens and a continuation of M = {}. "
      "The prompt is prefilled under the policy with a cache of C positions per sequence; the continuation is then "
      "teacher-forced through decode steps, so the ring evicts as in serving. Sink S = {}; SnapStream and random keep "
      "a ring of C/2, streaming (StreamingLLM) a ring of C - S. Regenerate with:\n\n```sh\n{}\n```\n\n",
      setting.documents, setting.texts, setting.dropped_short, setting.plan.prompt_length, setting.plan.continue_length,
      setting.plan.sink, setting.command);
  md += "| policy | C | R | window | pool | positions | NLL | NLL gap | perplexity | greedy agreement | agree@16 | agree@64 | "
        "attention recall |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {:.4f} | {:+.4f} | {:.3f} | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% |\n",
                      r.row.policy, r.row.budget, r.row.ring, r.row.window, r.row.pool_kernel, r.row.positions, r.nll, r.nll_gap(),
                      std::exp(r.nll), 100 * r.greedy_agreement, 100 * r.agree16, 100 * r.agree64, 100 * r.attention_recall);
  if (!results.empty())
    md += fmt::format("\nFull cache: NLL {:.4f} nats per token, perplexity {:.3f}.\n", results.front().nll_full,
                      std::exp(results.front().nll_full));
  md += findings(results, setting.plan);
  md += "\n![NLL gap against budget](nll_gap.png)\n\n![Greedy agreement against budget](agreement.png)\n";
  write_report_file(dir / "report.md", md);
}

void write_stream_report(const std::filesystem::path& dir, const StreamSetting& setting, const std::vector<StreamWindow>& windows) {
  std::filesystem::create_directories(dir);
  std::string csv = "policy,budget,ring,positions,begin,end,tokens,nll\n";
  std::map<std::string, std::string> series;
  std::vector<std::string> names;
  for (const auto& w : windows) {
    csv += fmt::format("{},{},{},{},{},{},{},{:.6f}\n", w.row.policy, w.row.budget, w.row.ring, w.row.positions, w.begin, w.end,
                       w.tokens, w.nll);
    const std::string name = cache_name(w.row);
    if (!series.count(name)) names.push_back(name);
    series[name] += fmt::format("{},{:.6f}\n", (w.begin + w.end) / 2, w.nll);
  }
  write_report_file(dir / "stream.csv", csv);
  for (const auto& [name, data] : series) write_report_file(dir / (name + ".dat"), data);
  std::string script = fmt::format(
      "set terminal pngcairo size 800,500 noenhanced font ',10'\nset output '{}'\nset datafile separator ','\n"
      "set title '{}: NLL along a stream ({})'\nset xlabel 'position (window middle)'\nset ylabel 'NLL per token (nats)'\n"
      "set grid\nset key top right\nplot ",
      (dir / "nll_by_position.png").string(), setting.model, setting.task);
  for (size_t i = 0; i < names.size(); ++i)
    script += fmt::format("{}'{}' using 1:2 with linespoints title '{}'", i ? ", " : "", (dir / (names[i] + ".dat")).string(), names[i]);
  run_gnuplot(script + "\n", (dir / "nll_by_position.png").string());
  for (const auto& name : names) std::filesystem::remove(dir / (name + ".dat"));

  std::string md = fmt::format("# Streaming past the context: {}\n\n", setting.model);
  md += fmt::format(
      "{} streams ({}), {}. Each is prefilled over its first tokens, then teacher-forced one decode step at a time; "
      "the NLL of every next token is averaged per window of positions. The full cache and original positions stop at "
      "the model's context; a bounded cache with re-indexed positions goes on. Regenerate with:\n\n```sh\n{}\n```\n\n",
      setting.instances, setting.haystack, setting.task, setting.command);
  md += "| cache | R | positions | window | tokens | NLL |\n|---|---|---|---|---|---|\n";
  for (const auto& w : windows)
    md += fmt::format("| {} | {} | {} | {}-{} | {} | {:.4f} |\n", cache_name(w.row), w.row.ring, w.row.positions, w.begin, w.end,
                      w.tokens, w.nll);
  md += stream_findings(windows, names);
  md += "\n![NLL along the stream](nll_by_position.png)\n";
  write_report_file(dir / "report.md", md);
}

}  // namespace snapstream::eval
