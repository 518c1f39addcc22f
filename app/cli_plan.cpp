// `snapstream plan`: the cheapest SN40L deployments (fewest sockets) of a model config that
// serve a load at a context with a speed per user and a time to first token.
#include <fmt/format.h>

#include <iostream>

#include "app/commands.h"
#include "app/config_files.h"
#include "app/deployment_options.h"
#include "app/plan_report.h"
#include "dataflow_sim/planner.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

struct PlanArgs {
  std::string model;
  std::vector<std::string> systems{"sn40l-8", "sn40l-16"};
  int64_t context = 0;
  int64_t concurrency = 0;
  double request_rate = 0;
  int64_t output_tokens = 0;
  double min_tokens_per_user = 0;
  double max_ttft = 0;
  std::vector<int32_t> tp;
  std::vector<std::string> capacities{"full"};
  std::vector<int64_t> batches;
  int64_t prefill_chunk = 1024;
  bool no_kernel_looping = false;
  size_t top = 10;
  std::string out;
  DeploymentArgs deployment;
};

// "full", a number of positions, or a fraction of the context such as "1/4".
int64_t parse_capacity(const std::string& text, int64_t context) {
  if (text == "full") return 0;
  try {
    size_t used = 0;
    const size_t slash = text.find('/');
    if (slash != std::string::npos) {
      const int64_t num = std::stoll(text.substr(0, slash), &used);
      if (used != slash) throw std::invalid_argument(text);
      const std::string below = text.substr(slash + 1);
      const int64_t den = std::stoll(below, &used);
      if (used != below.size() || num < 1 || den < num) throw std::invalid_argument(text);
      return std::max<int64_t>(1, context * num / den);
    }
    const int64_t positions = std::stoll(text, &used);
    if (used != text.size() || positions < 1) throw std::invalid_argument(text);
    return positions;
  } catch (const std::exception&) {
    throw runtime::ConfigError("--capacities takes 'full', a number of positions or a fraction of the context such as 1/4, not '" + text + "'");
  }
}

void run(const PlanArgs& a) {
  const auto model = load_model_config(a.model);
  dataflow_sim::PlanSpace space;
  for (const auto& name : a.systems) space.systems.push_back(dataflow_sim::load_system(resolve_config("hardware", name)));
  space.tp = a.tp;
  for (const auto& c : a.capacities) space.capacities.push_back(parse_capacity(c, a.context));
  space.batches = a.batches;
  space.prefill_chunk = a.prefill_chunk;
  space.base.kernel_looping = !a.no_kernel_looping;
  apply_deployment_options(a.deployment, space.base);
  dataflow_sim::PlanTraffic traffic{a.context, a.concurrency, a.request_rate, a.output_tokens};
  dataflow_sim::PlanObjectives objectives;
  objectives.min_tokens_per_user = a.min_tokens_per_user;
  if (a.max_ttft > 0) objectives.max_ttft_seconds = a.max_ttft;
  const auto result = dataflow_sim::plan_deployments(model, space, traffic, objectives);
  std::string load = a.concurrency > 0   ? fmt::format("{} sequences at once", a.concurrency)
                     : a.request_rate > 0 ? fmt::format("{:g} requests/s of {} tokens", a.request_rate, a.output_tokens)
                                          : std::string("one replica");
  std::cout << fmt::format("{} at context {}, {}: at least {:g} tokens/s per user{}; {} points priced\n", model.name, a.context, load,
                           a.min_tokens_per_user, a.max_ttft > 0 ? fmt::format(", first token within {:g} s", a.max_ttft) : "",
                           result.points.size());
  std::cout << plan_table(result, a.top);
  if (!a.out.empty()) {
    write_plan_files(result, a.out, fmt::format("{} at context {}: deployments priced (frontier circled)", model.name, a.context));
    std::cout << "wrote " << a.out << ".csv and " << a.out << ".png\n";
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "Find the cheapest SN40L deployments of a model config that meet a load and objectives");
  cmd->add_option("--model", args->model, "model config: a name under configs/models or a file")->required();
  cmd->add_option("--systems", args->systems, "hardware configs to search, comma-separated")->delimiter(',')->capture_default_str();
  cmd->add_option("--context", args->context, "tokens per sequence")->required()->check(CLI::PositiveNumber);
  auto* concurrency = cmd->add_option("--concurrency", args->concurrency, "sequences decoding at once")->check(CLI::PositiveNumber);
  auto* rate = cmd->add_option("--request-rate", args->request_rate, "requests per second (sequences at once then follow from Little's law)")
                   ->check(CLI::PositiveNumber)->excludes(concurrency);
  cmd->add_option("--output-tokens", args->output_tokens, "tokens each request generates (with --request-rate)")
      ->check(CLI::PositiveNumber)->needs(rate);
  cmd->add_option("--min-tokens-per-user", args->min_tokens_per_user, "the slowest decode speed a user may see")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--max-ttft", args->max_ttft, "the longest time to the first token, seconds (prefill of the whole context)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tp", args->tp, "tensor-parallel degrees to try (default: powers of two up to each system's sockets)")->delimiter(',');
  cmd->add_option("--capacities", args->capacities, "caches to try: 'full', positions, or fractions of the context such as 1/4")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--batches", args->batches, "batches to try (default: powers of two up to the largest that fits, and that)")
      ->delimiter(',');
  cmd->add_option("--prefill-chunk", args->prefill_chunk, "positions per prefill chunk when pricing the first token")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_flag("--no-kernel-looping", args->no_kernel_looping, "one kernel call per layer instead of one per run of layers");
  cmd->add_option("--top", args->top, "plans to print")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--out", args->out, "write PREFIX.csv (every point priced) and PREFIX.png (the frontier plot)");
  add_deployment_options(cmd, args->deployment);
  cmd->callback([args] { run(*args); });
}

}  // namespace snapstream::app
