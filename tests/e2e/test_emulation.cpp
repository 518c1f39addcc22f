// `snapstream serve --emulate --system --pace` end to end: responses and metrics say that the
// timings are a proxy's, and `snapstream simulate` prints the JSON keys scripts rely on.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using json = nlohmann::json;

TEST_CASE("a proxy-emulated server says so in its responses and metrics", "[e2e][server][emulation]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", (*models / "stories260K.gguf").string(), "--slots", "2", "--emulate", "deepseek-r1-671b",
                              "--system", "sn40l-16", "--pace"});
  CHECK(server.log().find("proxy: steps priced as deepseek-r1-671b on sn40l-16") != std::string::npos);
  const auto reply = test::http_call(server.port(), "POST", "/v1/completions",
                                     R"({"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0})");
  REQUIRE(reply.status == 200);
  const json body = json::parse(reply.body);
  const json& emulation = body.at("snapstream_emulation");
  CHECK(emulation.at("proxy") == true);
  CHECK(emulation.at("priced_as_model") == "deepseek-r1-671b");
  CHECK(emulation.at("system") == "sn40l-16");
  const double ttft = emulation.at("time_to_first_token_seconds");
  CHECK(ttft > 0);
  CHECK(emulation.at("device_seconds").get<double>() > ttft);

  const auto streamed = test::http_call(server.port(), "POST", "/v1/chat/completions",
                                        R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stream": true,
                                            "stream_options": {"include_usage": true}})");
  REQUIRE(streamed.status == 200);
  const auto events = test::sse_events(streamed.body);
  REQUIRE(events.size() >= 3);
  CHECK(json::parse(events[events.size() - 2]).at("snapstream_emulation").at("proxy") == true);

  const std::string metrics = test::http_call(server.port(), "GET", "/metrics").body;
  CHECK(metrics.find(R"(snapstream:emulation_info{emulated_model="deepseek-r1-671b",model_name="stories260K",proxy="true",system="sn40l-16",tp="16"} 1)") !=
        std::string::npos);
  CHECK(metrics.find("snapstream:emulated_time_to_first_token_seconds_count{model_name=\"stories260K\"} 2") != std::string::npos);
  CHECK(metrics.find("snapstream:emulated_inter_token_latency_seconds_bucket") != std::string::npos);
  for (const char* name : {"emulated_device_seconds_total", "emulated_generation_tokens_per_second", "emulated_hbm_bytes_held",
                           "emulated_sram_bytes_held", "emulated_pcu_utilisation", "emulated_pmu_utilisation"})
    CHECK(metrics.find(std::string("snapstream:") + name + "{") != std::string::npos);
  CHECK(server.stop() == 0);
}

TEST_CASE("simulate prints the JSON keys of a priced step, and --batch max fills memory", "[e2e][emulation]") {
  const auto result = test::run_command(test::snapstream_binary().string() +
                                        " simulate --model deepseek-r1-671b --system sn40l-16 --context 131072 --batch max"
                                        " --kv-capacity 32768 --format json");
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const json r = json::parse(result.out);
  for (const char* key : {"step_seconds", "tokens_per_s_per_user", "tokens_per_s_aggregate", "batch", "max_batch",
                          "kv_bytes_per_sequence", "weight_bytes_per_socket", "hbm_bytes_per_socket", "sram_bytes_per_socket"})
    CHECK(r.contains(key));
  CHECK(r.at("batch") == r.at("max_batch"));
  CHECK(r.at("tokens_per_s_aggregate").get<double>() == Approx(r.at("batch").get<double>() / r.at("step_seconds").get<double>()));
  const auto bad = test::run_command(test::snapstream_binary().string() +
                                     " simulate --model deepseek-r1-671b --system sn40l-16 --context 131072 --batch 100000");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("only") != std::string::npos);
  const auto unknown = test::run_command(test::snapstream_binary().string() + " simulate --model nope --system sn40l --context 10");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("no models config 'nope'") != std::string::npos);
}

TEST_CASE("simulate --sweep writes a CSV of full cache against SnapStream and a PNG plot", "[e2e][emulation]") {
  test::TempDir dir;
  const auto result = test::run_command(test::snapstream_binary().string() +
                                        " simulate --model deepseek-r1-671b --system sn40l-16 --context 131072 --batch max"
                                        " --sweep context --sweep-values 8192,131072 --out " + (dir / "sweep").string());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  std::ifstream csv(dir / "sweep.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("context,cache,model,", 0) == 0);
  CHECK(lines[1].rfind("8192,full,", 0) == 0);
  CHECK(lines[4].rfind("131072,snapstream,", 0) == 0);
  std::ifstream png(dir / "sweep.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  CHECK(std::string(magic + 1, 3) == "PNG");
}

TEST_CASE("plan prints the cheapest deployments, writes every point and the frontier plot, and refuses a bad load", "[e2e][emulation]") {
  test::TempDir dir;
  const auto result = test::run_command(test::snapstream_binary().string() +
                                        " plan --model llama-1b --systems sn40l-8 --context 2048 --concurrency 64"
                                        " --min-tokens-per-user 1200 --capacities full,512 --out " + (dir / "plan").string());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("sockets systems") != std::string::npos);
  CHECK(result.out.find("binding") != std::string::npos);
  std::ifstream csv(dir / "plan.csv");
  std::string header;
  std::getline(csv, header);
  CHECK(header.rfind("system,tp,cache,capacity,attention,batch,", 0) == 0);
  int rows = 0, frontier = 0;
  for (std::string line; std::getline(csv, line); ++rows) frontier += line.back() == '1';
  CHECK(rows > 10);
  CHECK(frontier >= 1);
  std::ifstream png(dir / "plan.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  CHECK(std::string(magic + 1, 3) == "PNG");
  const auto both = test::run_command(test::snapstream_binary().string() +
                                      " plan --model llama-1b --context 2048 --request-rate 5 --output-tokens 100 --capacities 1/0");
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--capacities takes") != std::string::npos);
}
