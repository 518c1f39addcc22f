// `snapstream generate`: one prompt through the model, text streamed to stdout as it is made,
// or one JSON object at the end with --json.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/engine_options.h"
#include "app/model_options.h"
#include "app/process_ranks.h"
#include "app/rank_report.h"
#include "kernels/thread_pool.h"
#include "runtime/generator.h"
#include "runtime/prompt_check.h"
#include "runtime/text_stream.h"

namespace snapstream::app {
namespace {

struct GenerateArgs {
  ModelFlags model;
  std::string prompt;
  int64_t max_tokens = 256;
  float temperature = 0.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;
  bool ignore_eos = false;
  bool json = false;
  EngineFlags engine;
};

void run_generate(const GenerateArgs& args) {
  const auto model = load_model_logged(args.model);
  kernels::ThreadPool pool(args.model.threads);
  const runtime::Tokenizer& tokenizer = model->tokenizer;
  const std::vector<int32_t> prompt_ids = tokenizer.encode(args.prompt, true, true);

  runtime::GenerationOptions options;
  options.max_tokens = args.max_tokens;
  options.sampling.temperature = args.temperature;
  options.sampling.top_k = args.top_k;
  options.sampling.top_p = args.top_p;
  options.sampling.min_p = args.min_p;
  options.sampling.repetition_penalty = args.repetition_penalty;
  options.sampling.seed = args.seed;
  options.ignore_eos = args.ignore_eos;
  options.cache = args.engine.cache;
  options.graphs = plan_for_this_rank(args.engine.graphs);
  // Compiled before anything is printed: a plan the shape cannot take fails with nothing on stdout.
  runtime::Generator generator(*model, pool, options);
  if (args.engine.list_graphs) {
    std::cout << describe_plan(*model, generator.runner(), generator.cache());
    return;
  }
  if (!lead_or_follow(generator.runner(), *model)) return;
  spdlog::info("KV cache: {}", generator.cache().config().describe());

  runtime::check_prompt(prompt_ids, model->shape.context_length, tokenizer);
  runtime::TextStream stream(tokenizer, prompt_ids.back());
  std::string text;
  auto on_token = [&](int32_t id) {
    const std::string piece = stream.push(id);
    text += piece;
    if (!args.json) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
  };
  if (!args.json) {
    std::fwrite(args.prompt.data(), 1, args.prompt.size(), stdout);
    std::fflush(stdout);
  }
  const runtime::GenerationResult result = generator.run(prompt_ids, on_token);
  const std::string tail = stream.finish();
  text += tail;

  const runtime::StepRelay* relay = generator.runner().step_relay();
  const std::vector<runtime::RankSeconds> ranks = relay != nullptr ? relay->rank_seconds() : std::vector<runtime::RankSeconds>{};
  if (args.json) {
    nlohmann::json out = {
        {"prompt_ids", result.prompt_ids},
        {"ids", result.ids},
        {"text", text},
        {"finish_reason", result.finish_reason},
        {"prefill_tokens_per_s", result.prefill_tokens_per_s()},
        {"decode_tokens_per_s", result.decode_tokens_per_s()},
    };
    if (!ranks.empty()) out["ranks"] = rank_seconds_json(ranks);
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    std::cout << tail << std::endl;
  }
  spdlog::info("{} prompt tokens at {:.1f} tokens/s, {} generated at {:.1f} tokens/s, finish: {}", result.prompt_ids.size(),
               result.prefill_tokens_per_s(), result.ids.size(), result.decode_tokens_per_s(), result.finish_reason);
  if (!ranks.empty()) spdlog::info("tensor-parallel ranks:\n{}", describe_rank_seconds(ranks));
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text for one prompt");
  add_model_options(cmd, args->model);
  cmd->add_option("--prompt", args->prompt, "prompt text (may be empty)")->required();
  cmd->add_option("--max-tokens", args->max_tokens, "tokens to generate at most")->check(CLI::NonNegativeNumber);
  cmd->add_option("--temperature", args->temperature, "0 for greedy decoding")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-k", args->top_k, "keep the k most likely tokens (0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", args->top_p, "nucleus sampling mass in (0, 1]")->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--min-p", args->min_p, "drop tokens less likely than this times the likeliest (0: none)")
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--repetition-penalty", args->repetition_penalty,
                  "divide the positive logits (multiply the negative ones) of tokens already in the text by this (1: none)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "sampling seed");
  cmd->add_flag("--ignore-eos", args->ignore_eos, "generate through end-of-text tokens: only --max-tokens ends the text");
  cmd->add_flag("--json", args->json, "print one JSON object with ids, text and speeds instead of streaming text");
  add_engine_options(cmd, args->engine);
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace snapstream::app
