// `snapstream eval`: how much a bounded cache costs on real weights. SnapStream, StreamingLLM
// and a random baseline at the same budgets, against the full cache, on the same documents
// (continuation), retrieval task instances (--task niah ...) or streams past the context
// (--task stream).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "app/cache_options.h"
#include "app/commands.h"
#include "app/model_options.h"
#include "eval/eval_report.h"
#include "eval/eval_run.h"
#include "eval/eval_texts.h"
#include "eval/stream_eval.h"
#include "eval/task_eval.h"
#include "eval/task_report.h"
#include "kernels/thread_pool.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

// Stories sampled from the model for a retrieval task's haystack when no texts are given.
constexpr int64_t kDefaultHaystackStories = 200;
constexpr int64_t kDefaultInstances = 100;
constexpr int64_t kDefaultStreams = 4;
constexpr int64_t kStreamPrompt = 64;  // tokens each stream is prefilled with before teacher forcing
// Stories per stream are at most about this many: the seeds of consecutive streams never meet.
constexpr uint64_t kStreamSeedStride = 10007;

struct EvalArgs {
  ModelFlags model;
  std::vector<std::string> tasks = {"continuation"};
  std::vector<int64_t> contexts = {1024};
  int64_t documents = 0;  // 0: 100 retrieval instances, or 4 streams
  int64_t stream_length = 0;  // 0: four times the model's context
  int64_t stream_window = 256;
  std::string texts;
  int64_t generate = 0;
  std::string haystack_model;
  int64_t prompt_length = 0;
  int64_t continue_length = 0;
  std::vector<std::string> budgets = {"1/2", "1/4", "1/8"};
  std::vector<std::string> policies = {"snapstream", "streaming", "random"};
  std::vector<std::string> rings = {"1/2"};
  std::vector<int64_t> windows = {32};
  std::vector<int64_t> pool_kernels = {7};
  std::vector<std::string> positions = {"original"};
  int64_t sink = 4;
  uint64_t seed = 0;
  int64_t slots = 16;
  kernels::DType kv_dtype = kernels::DType::F32;
  std::string out = "eval-out";
  std::string command;
};

void progress_bar(int64_t done, int64_t total, std::chrono::steady_clock::time_point start) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(kWidth - filled), ' ')
            << "] " << done << "/" << total << " runs, " << static_cast<int64_t>(seconds) << " s" << (done == total ? "\n" : "")
            << std::flush;
}

eval::EvalPlan rows_plan(const EvalArgs& a) {
  eval::EvalPlan plan;
  plan.policies = a.policies;
  plan.rings = a.rings;
  plan.windows = a.windows;
  plan.pool_kernels = a.pool_kernels;
  plan.positions = a.positions;
  plan.sink = a.sink;
  plan.seed = a.seed;
  plan.slots = a.slots;
  plan.kv_dtype = a.kv_dtype;
  return plan;
}

// Retrieval tasks: instances of each at each context length under every policy and budget.
void run_task_command(const EvalArgs& a) {
  eval::TaskPlan plan;
  plan.tasks.clear();
  for (const auto& task : a.tasks) plan.tasks.push_back(eval::parse_retrieval_task(task));
  plan.contexts = a.contexts;
  plan.budgets = a.budgets;
  plan.rows = rows_plan(a);
  plan.instances = a.documents > 0 ? a.documents : kDefaultInstances;
  const auto model = load_model_logged(a.model);
  // The haystack's stories may come from another model: one trained only to answer writes none.
  std::unique_ptr<runtime::Model> haystack_model;
  ModelFlags haystack_flags = a.model;
  if (!a.haystack_model.empty()) {
    haystack_flags = {a.haystack_model, "", a.model.threads};
    haystack_model = load_model_logged(haystack_flags);
  }
  kernels::ThreadPool pool(a.model.threads);
  const auto start = std::chrono::steady_clock::now();
  const auto texts = eval::haystack_texts(haystack_model ? *haystack_model : *model, model_file_name(haystack_flags), pool, a.texts,
                                          a.generate > 0 ? a.generate : kDefaultHaystackStories, a.seed);
  const eval::Haystack haystack(texts.texts, model->tokenizer);
  const auto results = eval::run_task_eval(*model, pool, plan, haystack, [&](int64_t done, int64_t total) { progress_bar(done, total, start); });
  std::cout << eval::task_table(results);
  eval::write_task_report(a.out, {model_file_name(a.model), texts.source, plan, a.command, model->shape.kv_heads}, results);
  std::cout << "wrote " << a.out << "/results.csv, answers.jsonl, report.md and accuracy-TASK.png per task\n";
}

// Streaming: NLL per window along streams longer than the context, under each cache.
void run_stream_command(const EvalArgs& a) {
  const auto model = load_model_logged(a.model);
  const int64_t context = model->shape.context_length;
  const int64_t length = a.stream_length > 0 ? a.stream_length : 4 * context;
  const int64_t prompt = a.prompt_length > 0 ? a.prompt_length : kStreamPrompt;
  const int64_t streams = a.documents > 0 ? a.documents : kDefaultStreams;
  eval::EvalPlan plan = rows_plan(a);
  std::vector<eval::EvalRow> rows;
  if (eval::take_policy(plan.policies, "full")) rows.push_back(eval::full_cache_row(plan, context));
  if (eval::take_policy(plan.policies, "story")) {
    rows.push_back(eval::full_cache_row(plan, context));
    rows.back().policy = "story";
  }
  for (const auto& b : a.budgets) plan.budgets.push_back(eval::resolve_budget(b, context));
  if (!plan.policies.empty())
    for (auto& row : eval::plan_rows(plan)) rows.push_back(std::move(row));
  for (const auto& row : rows) row.cache.resolved(context);
  kernels::ThreadPool pool(a.model.threads);
  const auto start = std::chrono::steady_clock::now();
  spdlog::info("sampling {} streams of {} tokens (stories joined, temperature 1, seed {})", streams, length, a.seed);
  std::vector<std::vector<int32_t>> texts;
  for (int64_t d = 0; d < streams; ++d)
    texts.push_back(eval::sample_story_stream(*model, pool, length, a.seed + static_cast<uint64_t>(d) * kStreamSeedStride));
  const auto windows = eval::run_stream_eval(*model, pool, rows, texts, prompt, a.stream_window, a.slots,
                                             [&](int64_t done, int64_t total) { progress_bar(done, total, start); });
  for (const auto& w : windows)
    std::cout << fmt::format("{:<11} C={:<5} {:<10} {:>5}-{:<5} nll {:.4f}\n", w.row.policy, w.row.budget, w.row.positions, w.begin,
                             w.end, w.nll);
  const std::string what = std::to_string(length) + " tokens each, " + std::to_string(prompt) + " prefilled, windows of " +
                           std::to_string(a.stream_window);
  eval::write_stream_report(a.out, {model_file_name(a.model), what,
                                    "stories the model samples, joined", streams, a.command}, windows);
  std::cout << "wrote " << a.out << "/stream.csv, report.md and nll_by_position.png\n";
}

void run_eval_command(const EvalArgs& a) {
  const auto listed = [&](const char* name) { return std::find(a.tasks.begin(), a.tasks.end(), name) != a.tasks.end(); };
  if ((listed("stream") || listed("continuation")) && a.tasks.size() > 1)
    throw runtime::ConfigError("--task continuation and --task stream run alone; only retrieval tasks may be listed together");
  if (a.tasks.empty()) throw runtime::ConfigError("--task names no task");
  if (listed("stream")) return run_stream_command(a);
  if (!listed("continuation")) return run_task_command(a);
  if (a.prompt_length == 0 || a.continue_length == 0)
    throw runtime::ConfigError("--task continuation needs --prompt-len and --continue-len");
  if (a.texts.empty() == (a.generate == 0)) throw runtime::ConfigError("give either --texts FILE.jsonl or --generate N");
  const auto model = load_model_logged(a.model);
  const int64_t length = a.prompt_length + a.continue_length;
  if (length > model->shape.context_length)
    throw runtime::ConfigError("--prompt-len + --continue-len (" + std::to_string(length) + ") exceed the model's context of " +
                      std::to_string(model->shape.context_length));
  kernels::ThreadPool pool(a.model.threads);
  eval::EvalPlan plan = rows_plan(a);
  plan.prompt_length = a.prompt_length;
  plan.continue_length = a.continue_length;
  for (const auto& b : a.budgets) plan.budgets.push_back(eval::resolve_budget(b, a.prompt_length));
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
  eval::EvalSetting setting{model_file_name(a.model), source, static_cast<int64_t>(texts.documents.size()),
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
  auto* texts = cmd->add_option("--texts", args->texts, "JSONL of {\"text\": ...}: documents, or a retrieval task's haystack")
                    ->check(CLI::ExistingFile);
  cmd->add_option("--generate", args->generate, "sample N documents (or haystack stories, default 200) from the model instead")
      ->check(CLI::PositiveNumber)
      ->excludes(texts);
  cmd->add_option("--task", args->tasks, "continuation, stream, or retrieval tasks: niah, multikey, multivalue, multiquery, vt")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--haystack-model", args->haystack_model, "retrieval: sample the haystack's stories from this model instead")
      ->check(CLI::ExistingFile)
      ->excludes(texts);
  cmd->add_option("--prompt-len", args->prompt_length, "continuation: L, prompt tokens per document")->check(CLI::PositiveNumber);
  cmd->add_option("--continue-len", args->continue_length, "continuation: M, continuation tokens per document")->check(CLI::PositiveNumber);
  cmd->add_option("--contexts,--context", args->contexts, "retrieval: instance lengths (prompt and answer)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--documents", args->documents, "retrieval: instances per context (100); stream: streams (4)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--stream-length", args->stream_length, "stream: tokens per stream (default 4x the context)")->check(CLI::PositiveNumber);
  cmd->add_option("--stream-window", args->stream_window, "stream: positions per NLL window")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--budgets", args->budgets, "cache sizes C: fractions of L or of the context (1/4), or positions (96)")->delimiter(',')->capture_default_str();
  cmd->add_option("--policies", args->policies, "snapstream, streaming, random; full (the full cache's own row); story (streams: the full cache restarted at every BOS)")->delimiter(',')->capture_default_str();
  cmd->add_option("--rings", args->rings, "SnapStream's ring R: fractions of C (1/2) or positions; the first is the default")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--windows", args->windows, "SnapKV observation windows; the first is the default")->delimiter(',')->capture_default_str();
  cmd->add_option("--pool-kernels", args->pool_kernels, "SnapKV pooling widths; the first is the default")->delimiter(',')->capture_default_str();
  cmd->add_option("--positions", args->positions, "original and/or reindexed; the first is the default")->delimiter(',')->capture_default_str();
  cmd->add_option("--sink", args->sink, "attention sinks S")->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of --generate's sampling and of the random policy")->capture_default_str();
  cmd->add_option("--slots", args->slots, "documents run together")->check(CLI::PositiveNumber)->capture_default_str();
  add_kv_dtype_option(cmd, args->kv_dtype, "f32 by default here, so that policies differ only in what they keep");
  cmd->add_option("--out", args->out, "folder for results.csv, report.md and the plots")->capture_default_str();
  cmd->add_option("--report-command", args->command, "how report.md says to regenerate it (default: this command line)");
  cmd->callback([args] { run_eval_command(*args); });
}

}  // namespace snapstream::app
