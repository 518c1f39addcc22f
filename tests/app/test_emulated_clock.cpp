// The engine's emulated device clock: each step is charged exactly the start-up price of the
// graph it ran, a proxy changes the timings but never the tokens, and pacing holds tokens
// back until the emulated device would have produced them.
#include <catch2/catch.hpp>

#include "app/emulated_device.h"
#include "graph/model_config_file.h"
#include "runtime/engine.h"
#include "tests/support/stories_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

EngineOptions emulated(bool proxy, bool pace) {
  EngineOptions options;
  options.slots = 4;
  app::EmulationOptions emulation;
  emulation.system = dataflow_sim::load_system(test::configs_dir() / "hardware" / "sn40l-16.json");
  if (proxy) emulation.proxy = graph::read_model_config(test::configs_dir() / "models" / "deepseek-r1-671b.json");
  options.step_clock = app::emulated_step_clock(emulation);
  options.pace = pace;
  return options;
}

RequestSpec story_request(const Model& model) {
  RequestSpec spec;
  spec.prompt_ids = model.tokenizer.encode("Once upon a time, there was a little", true);
  spec.max_tokens = 12;
  spec.sampling.temperature = 0.0f;
  return spec;
}

std::vector<TokenEvent> run(Engine& engine, RequestSpec spec, double& submitted) {
  auto stream = engine.submit(std::move(spec));
  submitted = stream->device_submitted_at();
  std::vector<TokenEvent> events;
  while (auto event = stream->next_event()) events.push_back(*event);
  return events;
}

}  // namespace

TEST_CASE("every step advances the emulated clock by its graph's start-up price", "[engine][emulation]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  const bool proxy = GENERATE(false, true);
  INFO((proxy ? "priced as DeepSeek-R1 on 16 sockets" : "priced as itself on 16 sockets"));
  Engine engine(*model, pool, emulated(proxy, false));
  REQUIRE(engine.step_clock() != nullptr);
  const RequestSpec spec = story_request(*model);
  const auto prompt_length = static_cast<int64_t>(spec.prompt_ids.size());
  double submitted = -1;
  const auto events = run(engine, spec, submitted);
  REQUIRE(events.size() == 12);
  CHECK(submitted == 0.0);
  const auto& graphs = engine.runner().graphs();
  const double prefill = engine.step_clock()->seconds(graphs.prefill(prompt_length).key, 0);
  const double decode = engine.step_clock()->seconds(graphs.decode(1).key, 0);
  CHECK(prefill > 0);
  CHECK(decode > 0);
  CHECK(events.front().device_at - submitted == Approx(prefill).epsilon(1e-12));
  for (size_t i = 1; i < events.size(); ++i) CHECK(events[i].device_at - events[i - 1].device_at == Approx(decode).epsilon(1e-9));
  CHECK(engine.stats().device_seconds == Approx(prefill + 11 * decode).epsilon(1e-9));
  CHECK(engine.step_clock()->footprint().proxy == proxy);
}

TEST_CASE("a proxy prices steps as another model but leaves the tokens alone", "[engine][emulation]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  double submitted = 0;
  Engine plain(*model, pool, EngineOptions{});
  CHECK(plain.step_clock() == nullptr);
  const auto reference = run(plain, story_request(*model), submitted);
  CHECK(reference.front().device_at == -1.0);
  Engine proxied(*model, pool, emulated(true, false));
  const auto priced = run(proxied, story_request(*model), submitted);
  REQUIRE(priced.size() == reference.size());
  for (size_t i = 0; i < priced.size(); ++i) CHECK(priced[i].id == reference[i].id);
  // DeepSeek-R1 on 16 sockets is far slower per step than the 260K-parameter model on them:
  // gigabytes of weights a step against a step made of kernel-call synchronisation (tens of
  // microseconds per call, a calibrated value), so the factor moves with the calibration.
  Engine itself(*model, pool, emulated(false, false));
  const auto own = run(itself, story_request(*model), submitted);
  INFO("DeepSeek-priced run " << priced.back().device_at << " s, the model's own " << own.back().device_at << " s");
  CHECK(priced.back().device_at > 20 * own.back().device_at);
}

TEST_CASE("pacing holds each token until the emulated device would have produced it", "[engine][emulation]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  Engine engine(*model, pool, emulated(true, true));
  double submitted = 0;
  const auto events = run(engine, story_request(*model), submitted);
  REQUIRE(events.size() == 12);
  // Real time between tokens is at least the device time between them (the CPU is faster).
  for (size_t i = 1; i < events.size(); ++i) {
    const double real = std::chrono::duration<double>(events[i].at - events[i - 1].at).count();
    CHECK(real >= 0.999 * (events[i].device_at - events[i - 1].device_at));
  }
}

TEST_CASE("pacing without an emulated device is refused", "[engine][emulation]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(1);
  EngineOptions options;
  options.pace = true;
  CHECK_THROWS_AS(Engine(*model, pool, options), ConfigError);
}
