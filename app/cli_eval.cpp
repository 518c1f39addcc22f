// `snapstream eval`: how much a bounded cache costs on real weights. SnapStream, StreamingLLM
// and a random baseline at the same budgets, against the full cache, on the same documents.
#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>

#include "app/commands.h"
#include "app/model_options.h"
#include "eval/eval_report.h"
#include "eval/eval_run.h"
#include "eval/eval_texts.h"
#include "kernels/thread_pool.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

struct EvalArgs {
  ModelFlags model;
  std::string texts;
  int64_t generate = 0;
  int64_t prompt_length = 0;
  int64_t continue_length = 0;
  std::vector<std::string> budgets = {"1/2", "1/4", "1/8"};
  std::vector<std::string> policies = {"snapstream", "streaming", "random"};
  std::vector<int64_t> windows = {32};
  std::vector<int64_t> pool_kernels = {7};
  std::vector<std::string> positions = {"original"};
  int64_t sink = 4;
  uint64_t seed = 0;
  int64_t slots = 16;
  std::string out = "eval-out";
  std::string command;
};

// "1/4" is a quarter of the prompt length; a plain number is C itself.
int64_t parse_budget(const std::string& text, int64_t prompt_length) {
  try {
    size_t used = 0;
    const auto slash = text.find('/');
    if (slash == std::string::npos) {
      const int64_t c = std::stoll(text, &used);
      if (used == text.size() && c > 0) return c;
    } else {
      const int64_t num = std::stoll(text.substr(0, slash), &used);
      size_t used_den = 0;
      const int64_t den = std::stoll(text.substr(slash + 1), &used_den);
      if (used == slash && used_den == text.size() - slash - 1 && num > 0 && den > 0) return std::max<int64_t>(1, prompt_length * num / den);
    }
  } catch (const std::exception&) {
  }
  throw runtime::ConfigError("a budget is a fraction of the prompt length (1/4) or a number of positions (96), not '" + text + "'");
}

void progress_bar(int64_t done, int64_t total, std::chrono::steady_clock::time_point start) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(kWidth - filled), ' ')
            << "] " << done << "/" << total << " runs, " << static_cast<int64_t>(seconds) << " s" << (done == total ? "\n" : "")
            << std::flush;
}

void run_eval_command(const EvalArgs& a) {
  if (a.texts.empty() == (a.generate == 0)) throw runtime::ConfigError("give either --texts FILE.jsonl or --generate N");
  const auto model = load_model_logged(a.model);
  const int64_t length = a.prompt_length + a.continue_length;
  if (length > model->shape.context_length)
    throw runtime::ConfigError("--prompt-len + --continue-len (" + std::to_string(length) + ") exceed the model's context of " +
                      std::to_string(model->shape.context_length));
  kernels::ThreadPool pool(a.model.threads);
  eval::EvalPlan plan;
  plan.prompt_length = a.prompt_length;
  plan.continue_length = a.continue_length;
  for (const auto& b : a.budgets) plan.budgets.push_back(parse_budget(b, a.prompt_length));
  plan.policies = a.policies;
  plan.windows = a.windows;
  plan.pool_kernels = a.pool_kernels;
  plan.positions = a.positions;
  plan.sink = a.sink;
  plan.seed = a.seed;
  plan.slots = a.slots;
  eval::plan_rows(plan);  // reject a bad plan before sampling or reading anything

  const auto start = std::chrono::steady_clock::now();
  eval::EvalTexts texts;
  std::string source;
  if (!a.texts.empty()) {
    texts = eval::read_eval_texts(a.texts, model->tokenizer, length);
    source = "texts from " + a.texts;
  } else {
    spdlog::info("sampling {} stories of at least {} tokens (temperature 1, seed {})", a.generate, length, a.seed);
    texts = eval::generate_eval_texts(*model, pool, a.generate, length, a.seed);
    source = "stories sampled from the model with the full cache at temperature 1, seed " + std::to_string(a.seed);
  }
  spdlog::info("{} documents of {} tokens ({} too short dropped)", texts.documents.size(), length, texts.dropped_short);
  const auto results = eval::run_eval(*model, pool, plan, texts.documents, [&](int64_t done, int64_t total) { progress_bar(done, total, start); });
  std::cout << eval::eval_table(results);
  eval::EvalSetting setting{std::filesystem::path(a.model.path).filename().string(), source, static_cast<int64_t>(texts.documents.size()),
                      texts.dropped_short, plan, a.command};
  eval::write_eval_report(a.out, setting, results);
  std::cout << "wrote " << a.out << "/results.csv, report.md, nll_gap.png and agreement.png\n";
}

}  // namespace

void add_eval_command(CLI::App& app, int argc, char** argv) {
  auto args = std::make_shared<EvalArgs>();
  for (int i = 0; i < argc; ++i) args->command += (i ? " " : "") + std::string(argv[i]);
  CLI::App* cmd = app.add_subcommand("eval", "Measure SnapStream against the full cache and simpler policies on real weights");
  add_model_options(cmd, args->model);
  auto* texts = cmd->add_option("--texts", args->texts, "JSONL of {\"text\": ...}, one document per line")->check(CLI::ExistingFile);
  cmd->add_option("--generate", args->generate, "sample N documents from the model instead")->check(CLI::PositiveNumber)->excludes(texts);
  cmd->add_option("--prompt-len", args->prompt_length, "L: prompt tokens per document")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--continue-len", args->continue_length, "M: continuation tokens per document")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--budgets", args->budgets, "cache sizes C: fractions of L (1/4) or positions (96)")->delimiter(',')->capture_default_str();
  cmd->add_option("--policies", args->policies, "snapstream, streaming, random")->delimiter(',')->capture_default_str();
  cmd->add_option("--windows", args->windows, "SnapKV observation windows; the first is the default")->delimiter(',')->capture_default_str();
  cmd->add_option("--pool-kernels", args->pool_kernels, "SnapKV pooling widths; the first is the default")->delimiter(',')->capture_default_str();
  cmd->add_option("--positions", args->positions, "original and/or reindexed; the first is the default")->delimiter(',')->capture_default_str();
  cmd->add_option("--sink", args->sink, "attention sinks S")->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of --generate's sampling and of the random policy")->capture_default_str();
  cmd->add_option("--slots", args->slots, "documents run together")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--out", args->out, "folder for results.csv, report.md and the plots")->capture_default_str();
  cmd->add_option("--report-command", args->command, "how report.md says to regenerate it (default: this command line)");
  cmd->callback([args] { run_eval_command(*args); });
}

}  // namespace snapstream::app
