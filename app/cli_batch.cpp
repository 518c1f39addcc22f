// `snapstream batch`: many prompts through the continuous-batching engine at once.
#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/engine_options.h"
#include "app/model_options.h"
#include "app/process_ranks.h"
#include "app/rank_report.h"
#include "app/prompt_file.h"
#include "kernels/thread_pool.h"
#include "runtime/engine.h"
#include "runtime/errors.h"
#include "runtime/text_stream.h"

namespace snapstream::app {
namespace {

struct BatchArgs {
  ModelFlags model;
  std::string prompts;
  int64_t slots = 8;
  bool json = false;
  EngineFlags engine;
};

void run_batch(const BatchArgs& args) {
  const auto prompts = args.engine.list_graphs ? std::vector<PromptLine>{} : read_prompt_file(args.prompts);
  const auto model = load_model_logged(args.model);
  kernels::ThreadPool pool(args.model.threads);
  runtime::EngineOptions options;
  options.slots = args.slots;
  options.max_waiting = std::max<int64_t>(1, static_cast<int64_t>(prompts.size()));
  options.cache = args.engine.cache;
  options.graphs = plan_for_this_rank(args.engine.graphs);
  apply_emulation(args.engine, options);
  runtime::Engine engine(*model, pool, options);
  const std::string plan = describe_plan(*model, engine.runner(), engine.cache());
  if (args.engine.list_graphs) {
    std::cout << plan;
    return;
  }
  if (!lead_or_follow(engine.runner(), *model)) return;
  spdlog::info("{} requests, {} slots\n{}", prompts.size(), args.slots, plan);

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<int32_t>> prompt_ids;
  std::vector<std::shared_ptr<runtime::RequestStream>> streams;
  for (const auto& prompt : prompts) {
    prompt_ids.push_back(model->tokenizer.encode(prompt.prompt, true, true));
    streams.push_back(engine.submit({prompt_ids.back(), prompt.max_tokens, prompt.sampling, -1, prompt.ignore_eos}));
  }
  std::vector<std::vector<int32_t>> outputs;
  int64_t generated = 0;
  for (auto& stream : streams) {
    outputs.push_back(stream->collect());
    generated += static_cast<int64_t>(outputs.back().size());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string text = runtime::detokenize(model->tokenizer, outputs[i], prompt_ids[i].back());
    const auto reason = runtime::finish_reason_name(streams[i]->finish_reason());
    if (args.json) {
      nlohmann::json line = {{"index", i}, {"prompt_ids", prompt_ids[i]}, {"ids", outputs[i]}, {"text", text},
                             {"finish_reason", reason}};
      if (!streams[i]->error().empty()) line["error"] = streams[i]->error();
      std::cout << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << "### request " << i << " (" << reason << ")\n" << prompts[i].prompt << text << "\n\n";
    }
  }
  const double tokens_per_s = seconds > 0 ? static_cast<double>(generated) / seconds : 0.0;
  const std::vector<runtime::RankSeconds> ranks = engine.stats().ranks;
  if (args.json) {
    nlohmann::json aggregate = {{"requests", prompts.size()}, {"generated_tokens", generated}, {"seconds", seconds},
                                {"tokens_per_s", tokens_per_s}};
    if (!ranks.empty()) aggregate["ranks"] = rank_seconds_json(ranks);
    std::cout << nlohmann::json{{"aggregate", aggregate}}.dump() << std::endl;
  }
  spdlog::info("{} requests, {} tokens generated in {:.2f} s: {:.1f} tokens/s aggregate", prompts.size(), generated, seconds,
               tokens_per_s);
  if (!ranks.empty()) spdlog::info("tensor-parallel ranks:\n{}", describe_rank_seconds(ranks));
}

}  // namespace

void add_batch_command(CLI::App& app) {
  auto args = std::make_shared<BatchArgs>();
  CLI::App* cmd = app.add_subcommand("batch", "Run many prompts through the continuous-batching engine");
  add_model_options(cmd, args->model);
  cmd->add_option("--prompts", args->prompts, "JSONL file: one {\"prompt\": ...} object per line")
      ->check(CLI::ExistingFile);
  cmd->add_option("--slots", args->slots, "sequences decoded together at most")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", args->json, "one JSON object per request in input order, then the aggregate");
  add_engine_options(cmd, args->engine);
  add_emulation_options(cmd, args->engine);
  cmd->callback([args] {
    if (args->prompts.empty() && !args->engine.list_graphs) throw runtime::InvalidRequestError("batch needs --prompts FILE");
    run_batch(*args);
  });
}

}  // namespace snapstream::app
