// Retrieval reports: accuracy tables, statements read off the numbers, and plots per task.
#include "eval/task_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "eval/eval_report.h"
#include "eval/gnuplot.h"
#include "eval/instance_answers.h"

namespace snapstream::eval {
namespace {

// A summary keeps at least this share of the full cache's accuracy as "kept".
constexpr double kKeptShare = 0.9;

std::string percent(double share) { return fmt::format("{:.1f}%", 100 * share); }

// The default-setting results by (task, context, policy, budget C).
class Lookup {
 public:
  Lookup(const std::vector<EvalResult>& results, const EvalPlan& plan) {
    for (const auto& r : results)
      if (has_default_settings(r.row, plan)) accuracy_[{r.task, r.context, r.row.policy, r.row.budget}] = r.accuracy;
  }
  std::optional<double> find(const std::string& task, int64_t context, const std::string& policy, int64_t budget) const {
    const auto it = accuracy_.find({task, context, policy, budget});
    if (it == accuracy_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<double> full(const std::string& task, int64_t context) const { return find(task, context, "full", context); }

 private:
  std::map<std::tuple<std::string, int64_t, std::string, int64_t>, double> accuracy_;
};

std::vector<std::string> task_names(const TaskPlan& plan) {
  std::vector<std::string> names;
  for (const auto task : plan.tasks) names.emplace_back(retrieval_task_name(task));
  return names;
}

// The policies of the plan other than the full cache, in its order.
std::vector<std::string> bounded_policies(const TaskPlan& plan) {
  std::vector<std::string> policies;
  for (const auto& policy : plan.rows.policies)
    if (policy != "full") policies.push_back(policy);
  return policies;
}

// Accuracy of every task, context and policy at each budget, default settings.
std::string summary_table(const TaskSetting& s, const Lookup& lookup) {
  std::string md = "| task | context | full cache | policy |";
  for (const auto& budget : s.plan.budgets) md += fmt::format(" C = {} |", budget);
  md += "\n|---|---|---|---|";
  for (size_t i = 0; i < s.plan.budgets.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& task : task_names(s.plan))
    for (const int64_t context : s.plan.contexts) {
      const auto full = lookup.full(task, context);
      for (const auto& policy : bounded_policies(s.plan)) {
        md += fmt::format("| {} | {} | {} | {} |", task, context, full ? percent(*full) : "-", policy);
        for (const auto& budget : s.plan.budgets) {
          const auto accuracy = lookup.find(task, context, policy, resolve_budget(budget, context));
          md += fmt::format(" {} |", accuracy ? percent(*accuracy) : "-");
        }
        md += "\n";
      }
    }
  return md;
}

// Plain statements read off the default-setting rows: each task's accuracy per budget beside the
// full cache's, and where SnapStream keeps kKeptShare of it.
std::string findings(const TaskSetting& s, const Lookup& lookup) {
  std::string md = "\n## What the numbers show\n\n";
  const auto policies = bounded_policies(s.plan);
  for (const auto& task : task_names(s.plan))
    for (const int64_t context : s.plan.contexts) {
      const auto full = lookup.full(task, context);
      md += fmt::format("- {} at {} tokens:", task, context);
      if (full) md += fmt::format(" the full cache answers {}.", percent(*full));
      for (const auto& budget : s.plan.budgets) {
        const int64_t c = resolve_budget(budget, context);
        std::vector<std::string> parts;
        for (const auto& policy : policies) {
          const auto accuracy = lookup.find(task, context, policy, c);
          if (!accuracy) continue;
          std::string part = policy + " " + percent(*accuracy);
          if (full && *full > 0) part += fmt::format(" ({:.0f}% of the full cache's)", 100 * *accuracy / *full);
          parts.push_back(part);
        }
        if (!parts.empty()) md += fmt::format(" C = {} ({}): {}.", budget, c, fmt::join(parts, ", "));
      }
      md += "\n";
    }
  for (const auto& policy : policies)
    for (const auto& budget : s.plan.budgets) {
      std::vector<std::string> kept, lost;
      for (const auto& task : task_names(s.plan))
        for (const int64_t context : s.plan.contexts) {
          const auto full = lookup.full(task, context);
          const auto accuracy = lookup.find(task, context, policy, resolve_budget(budget, context));
          if (!full || !accuracy || *full <= 0) continue;
          const std::string where = fmt::format("{} at {}", task, context);
          if (*accuracy >= kKeptShare * *full)
            kept.push_back(where);
          else
            lost.push_back(fmt::format("{} ({} against {})", where, percent(*accuracy), percent(*full)));
        }
      if (kept.empty() && lost.empty()) continue;
      md += fmt::format("- {} at C = {} keeps at least {:.0f}% of the full cache's accuracy on {} of {}", policy, budget,
                        100 * kKeptShare, kept.size(), kept.size() + lost.size());
      md += lost.empty() ? ".\n" : fmt::format("; not on {}.\n", fmt::join(lost, ", "));
    }
  return md;
}

// Where SnapStream's lost answers went. For each default-setting SnapStream row, the instances
// the full cache answers are split into those SnapStream still answers and those it loses, and
// each layer's KV groups are read for how often their cache held every token the answer copies
// right after prefill; the cache whose share differs most between the two is named.
std::string lost_answers(const TaskSetting& s, const std::vector<EvalResult>& results) {
  std::map<std::pair<std::string, int64_t>, const EvalResult*> full;
  for (const auto& r : results)
    if (r.row.policy == "full") full[{r.task, r.context}] = &r;
  const int64_t groups = std::max<int64_t>(1, s.kv_groups);
  std::string statements, rows;
  size_t caches = 0;
  for (const auto& r : results) {
    if (r.row.policy != "snapstream" || !has_default_settings(r.row, s.plan.rows)) continue;
    const auto it = full.find({r.task, r.context});
    if (it == full.end() || it->second->answers.size() != r.answers.size() || r.answers.empty()) continue;
    if (r.answers.front().values_held.empty()) continue;
    caches = r.answers.front().values_held.size();
    std::vector<double> held_answered(caches, 0), held_lost(caches, 0);
    int64_t answered = 0, lost = 0;
    for (size_t i = 0; i < r.answers.size(); ++i) {
      const InstanceAnswer& answer = r.answers[i];
      if (!it->second->answers[i].right || answer.values_held.size() != caches) continue;
      auto& held = answer.right ? held_answered : held_lost;
      ++(answer.right ? answered : lost);
      for (size_t k = 0; k < caches; ++k) held[k] += answer.values_held[k];
    }
    if (lost == 0 || answered == 0) continue;
    std::string answered_row = fmt::format("| {} | {} | {} | answered ({}) |", r.task, r.context, r.row.budget, answered);
    std::string lost_row = fmt::format("| {} | {} | {} | lost ({}) |", r.task, r.context, r.row.budget, lost);
    size_t widest = 0;
    for (size_t k = 0; k < caches; ++k) {
      held_answered[k] /= static_cast<double>(answered);
      held_lost[k] /= static_cast<double>(lost);
      answered_row += fmt::format(" {:.0f}% |", 100 * held_answered[k]);
      lost_row += fmt::format(" {:.0f}% |", 100 * held_lost[k]);
      if (held_answered[k] - held_lost[k] > held_answered[widest] - held_lost[widest]) widest = k;
    }
    rows += answered_row + "\n" + lost_row + "\n";
    statements += fmt::format("- {} at {} tokens, C = {}: of {} answers the full cache gets right, SnapStream loses {}; layer {} KV group {} "
                             "held the answer's values for {} of those answered and {} of those lost.\n",
                             r.task, r.context, r.row.budget, answered + lost, lost, widest / static_cast<size_t>(groups),
                             widest % static_cast<size_t>(groups), percent(held_answered[widest]), percent(held_lost[widest]));
  }
  if (rows.empty()) return rows;
  std::string header = "| task | context | C | full cache's right answers |";
  std::string rule = "|---|---|---|---|";
  for (size_t k = 0; k < caches; ++k) {
    header += fmt::format(" layer {} group {} |", k / static_cast<size_t>(groups), k % static_cast<size_t>(groups));
    rule += "---|";
  }
  return "\n## Where SnapStream's lost answers went\n\nThe instances the full cache answers, split by whether SnapStream (default "
         "settings) still answers them; for each layer and KV group, the share of them whose cache held every token the answer "
         "copies (the planted values: numbers, or the names a chain passes through) right after prefill. SnapKV selects per KV "
         "group, so one group can drop a value its neighbour keeps.\n\n" +
         statements + "\n" + header + "\n" + rule + "\n" + rows;
}

// Rows that vary one knob against the default SnapStream row of the same task, context and budget.
std::string knob_table(const TaskSetting& s, const std::vector<EvalResult>& results, const Lookup& lookup) {
  std::string md;
  for (const auto& r : results) {
    if (has_default_settings(r.row, s.plan.rows)) continue;
    const auto base = lookup.find(r.task, r.context, r.row.policy, r.row.budget);
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.task, r.context, r.row.policy, r.row.budget, r.row.ring,
                      r.row.window, r.row.pool_kernel, r.row.positions, percent(r.accuracy), base ? percent(*base) : "-",
                      r.values_kept < 0 ? "-" : percent(r.values_kept));
  }
  if (md.empty()) return md;
  return fmt::format(
      "\n## SnapStream's settings\n\nRows that change one setting from the default (R = {} of C, window {}, pooling {}, positions "
      "{}), beside the default row's accuracy on the same instances and budget.\n\n"
      "| task | context | policy | C | R | window | pool | positions | accuracy | default's accuracy | values kept |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n{}",
      s.plan.rows.rings.front(), s.plan.rows.windows.front(), s.plan.rows.pool_kernels.front(), s.plan.rows.positions.front(), md);
}

// accuracy-TASK.png: accuracy against budget, a line per policy and context; the full cache is
// drawn at its whole context.
void plot_task(const std::filesystem::path& dir, const TaskSetting& s, const std::string& task, const std::vector<EvalResult>& results) {
  std::map<std::string, std::string> series;
  std::vector<std::string> names;
  for (const auto& r : results) {
    if (r.task != task || !has_default_settings(r.row, s.plan.rows)) continue;
    const std::string name = fmt::format("{}-{}", r.row.policy, r.context);
    if (!series.count(name)) names.push_back(name);
    series[name] += fmt::format("{},{:.6f}\n", r.row.budget, 100 * r.accuracy);
  }
  for (const auto& [name, data] : series) write_report_file(dir / (name + ".dat"), data);
  const std::string png = "accuracy-" + task + ".png";
  run_gnuplot(budget_plot_script(dir, names, png, 2, "answers exactly right (%)", s.model + ": " + task + " accuracy against budget",
                                 "set yrange [-2:102]\n"),
              (dir / png).string());
  for (const auto& name : names) std::filesystem::remove(dir / (name + ".dat"));
}

// How far an accuracy over `instances` may be from the model's true one, as a sentence: the
// binomial standard error at 50% and at 90%, so that small differences between rows are read as such.
std::string sampling_error_text(int64_t instances) {
  if (instances <= 0) return "";
  auto error = [&](double p) { return 100 * std::sqrt(p * (1 - p) / static_cast<double>(instances)); };
  return fmt::format("Over {} instances an accuracy near 50% has a standard error of {:.1f} points, near 90% of {:.1f}.",
                     instances, error(0.5), error(0.9));
}

}  // namespace

std::string task_table(const std::vector<EvalResult>& results) {
  std::string out = fmt::format("{:<10} {:>7} {:<11} {:>6} {:>5} {:>9} {:>10} {:>8} {:>8} {:>8} {:>8}\n", "task", "context", "policy",
                                "budget", "ring", "accuracy", "answer_nll", "nll_gap", "agree16", "recall", "values");
  for (const auto& r : results)
    out += fmt::format("{:<10} {:>7} {:<11} {:>6} {:>5} {:>8.1f}% {:>10.4f} {:>+8.4f} {:>7.1f}% {:>7.1f}% {:>7.1f}%\n", r.task, r.context,
                       r.row.policy, r.row.budget, r.row.ring, 100 * r.accuracy, r.nll, r.nll_gap(), 100 * r.agree16, 100 * r.attention_recall,
                       100 * r.values_kept);
  return out;
}

void write_task_report(const std::filesystem::path& dir, const TaskSetting& setting, const std::vector<EvalResult>& results) {
  std::filesystem::create_directories(dir);
  write_report_file(dir / "results.csv", eval_csv(results));
  write_report_file(dir / "answers.jsonl", instance_answers_jsonl(results));
  const Lookup lookup(results, setting.plan.rows);
  const auto tasks = task_names(setting.plan);
  for (const auto& task : tasks) plot_task(dir, setting, task, results);

  std::string md = fmt::format("# Retrieval under cache policies: {} on {}\n\n", fmt::join(tasks, ", "), setting.model);
  md += fmt::format(
      "{} instances per task and context length, facts planted in haystack text ({}) and a question at the end; each prompt "
      "is prefilled under the policy with a cache of C positions per sequence (budgets are fractions of the context), then "
      "answered greedily and scored by exact match. Sink S = {}; SnapStream and random keep a ring of R = {} of C, streaming "
      "(StreamingLLM) a ring of C - S. Answer NLL and its gap are teacher-forced over the answer's tokens, against the full "
      "cache on the same instances. {} Regenerate with:\n\n```sh\n{}\n```\n\n",
      setting.plan.instances, setting.haystack, setting.plan.rows.sink, setting.plan.rows.rings.front(),
      sampling_error_text(setting.plan.instances), setting.command);
  md += "## Accuracy by task, policy and budget\n\n" + summary_table(setting, lookup);
  md += findings(setting, lookup);
  md += lost_answers(setting, results);
  md += knob_table(setting, results, lookup);
  for (const auto& task : tasks) {
    md += fmt::format("\n## {}\n\n![{} accuracy against budget](accuracy-{}.png)\n\n", task, task, task);
    md += "| context | policy | C | R | window | pool | positions | accuracy | answer NLL | NLL gap | agree@16 | attention recall | values kept |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : results)
      if (r.task == task)
        md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.4f} | {:+.4f} | {:.1f}% | {:.1f}% | {} |\n", r.context, r.row.policy,
                          r.row.budget, r.row.ring, r.row.window, r.row.pool_kernel, r.row.positions, percent(r.accuracy), r.nll,
                          r.nll_gap(), 100 * r.agree16, 100 * r.attention_recall, r.values_kept < 0 ? "-" : percent(r.values_kept));
  }
  write_report_file(dir / "report.md", md);
}

}  // namespace snapstream::eval
