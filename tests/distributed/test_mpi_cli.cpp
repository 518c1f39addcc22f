// The real binary as MPI ranks: `mpirun -np P snapstream generate --tp P` prints the tokens of
// one process (stories260K and quantised parity models, through SnapKV compaction and ring
// eviction; 4 ranks replicate the parity models' 2 KV heads), the server as ranks answers
// completions as one process does (stories260K and a parity model, at 2 and 4 ranks), bench as
// ranks reports each rank's time, ranks that disagree on --tp or on their arguments all stop
// with one clear error, and a rank killed mid-request ends the job within seconds with the
// client's stream cut, not hanging.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <thread>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/code_prompt.h"
#include "tests/support/http_client.h"
#include "tests/support/metric_sample.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;

namespace {

// mpirun, allowed to start ranks as root (containers, CI), with more ranks than cores allowed.
std::string mpirun() { return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + std::string(SNAPSTREAM_MPIEXEC) + " --oversubscribe "; }

std::string mpirun(int ranks) { return mpirun() + "-np " + std::to_string(ranks) + " "; }

// The real server started by mpirun as `ranks` ranks, with --tp ranks added to `args`.
std::unique_ptr<test::ServerProcess> server_as_ranks(std::vector<std::string> args, int ranks) {
  args.insert(args.end(), {"--tp", std::to_string(ranks)});
  return std::make_unique<test::ServerProcess>(args, std::vector<std::string>{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"},
                                               std::vector<std::string>{SNAPSTREAM_MPIEXEC, "-np", std::to_string(ranks), "--oversubscribe"});
}

std::string generate(const std::filesystem::path& model, const std::string& prompt, const std::string& extra) {
  return test::shell_quote(test::snapstream_binary().string()) + " generate --model " + test::shell_quote(model.string()) +
         " --prompt " + test::shell_quote(prompt) + " --temperature 0 --json --threads 1 " + extra;
}

// The process of MPI rank `rank` among the children of mpirun `launcher`, found by the rank
// Open MPI puts in each one's environment; -1 when there is none.
pid_t rank_process(pid_t launcher, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream status(entry.path() / "status");
    std::string line, parent;
    while (std::getline(status, line))
      if (line.rfind("PPid:", 0) == 0) parent = line.substr(5);
    if (parent.empty() || std::stoi(parent) != launcher) continue;
    std::ifstream environ(entry.path() / "environ");
    std::string variable;
    while (std::getline(environ, variable, '\0'))
      if (variable == wanted) return std::stoi(entry.path().filename().string());
  }
  return -1;
}

std::vector<int32_t> ids_of(const test::CommandResult& r) {
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out).at("ids").get<std::vector<int32_t>>();
}

}  // namespace

TEST_CASE("generate as 2 and 4 ranks prints the tokens of one process", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = *models / "stories260K.gguf";
  // A prompt of about 150 tokens into a cache of 64: SnapKV compacts it, and 120 generated
  // tokens go round the ring.
  std::ifstream in(*models / "stories260K.golden.json");
  const auto golden = nlohmann::json::parse(in);
  std::string prompt;
  for (const auto& c : golden.at("cases")) prompt += c.at("text").get<std::string>() + " ";
  prompt = prompt.substr(0, 600);
  // f32 weights sum the shards' outputs in another order; an f32 cache keeps that last-bit
  // difference from being rounded into a different f16 key.
  const std::string options = "--max-tokens 120 --kv-capacity 64 --kv-dtype f32";
  const auto alone = ids_of(test::run_command(generate(model, prompt, options)));
  REQUIRE(alone.size() > 20);
  for (const int ranks : {2, 4}) {
    INFO(ranks << " ranks");
    CHECK(ids_of(test::run_command(mpirun(ranks) + generate(model, prompt, options + " --tp " + std::to_string(ranks)))) == alone);
  }
}

TEST_CASE("batch as 2 ranks gives every request the output of one process", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::TempDir dir;
  {
    std::ofstream prompts(dir / "prompts.jsonl");
    prompts << R"({"prompt": "Once upon a time", "max_tokens": 40})" << "\n"
            << R"({"prompt": "The dog ran to the park. He saw a big ball and a little cat. The cat was sad.", "max_tokens": 80})" << "\n"
            << R"({"prompt": "Lily", "max_tokens": 50, "temperature": 0.8, "seed": 7})" << "\n";
  }
  const std::string command = test::shell_quote(test::snapstream_binary().string()) + " batch --model " +
                              test::shell_quote((*models / "stories260K.gguf").string()) + " --prompts " +
                              test::shell_quote((dir / "prompts.jsonl").string()) + " --json --kv-capacity 32 --threads 1";
  // Every line but the last (the aggregate, with its timing).
  auto requests = [](const test::CommandResult& r) {
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.rfind("{\"aggregate\""));
  };
  const std::string alone = requests(test::run_command(command));
  CHECK(alone.find("\"index\":2") != std::string::npos);
  CHECK(requests(test::run_command(mpirun(2) + command + " --tp 2")) == alone);
}

TEST_CASE("bench as 2 ranks reports each rank's decode time and its collective share", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto r = test::run_command(mpirun(2) + test::shell_quote(test::snapstream_binary().string()) + " bench --model " +
                                   test::shell_quote((*models / "stories260K.gguf").string()) +
                                   " --tp 2 --threads 1 --prompt-tokens 32 --decode-tokens 16 --repeats 1 --bandwidth-mib 0 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto out = nlohmann::json::parse(r.out);  // one report: rank 1 prints nothing
  CHECK(out.at("decode_tokens_per_s").get<double>() > 0.0);
  const auto& ranks = out.at("decode_ranks");
  REQUIRE(ranks.size() == 2);
  for (const auto& rank : ranks) {
    CHECK(rank.at("step_seconds").get<double>() > 0.0);
    CHECK(rank.at("collective_share").get<double>() > 0.0);
    CHECK(rank.at("collective_share").get<double>() < 1.0);
  }
}

TEST_CASE("a quantised parity model as 2 and 4 ranks prints the tokens of one process", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  for (const char* name : {"llama-spm-q4_k_m", "qwen2-gpt2-q4_k_m"}) {
    INFO(name);
    const auto model = *models / "parity" / (std::string(name) + ".gguf");
    const std::string options = "--max-tokens 24 --kv-capacity 32";
    const auto alone = ids_of(test::run_command(generate(model, test::repeated_function_prompt(), options)));
    // 4 ranks replicate each of the 2 KV heads on two of them.
    for (const int ranks : {2, 4}) {
      INFO(ranks << " ranks");
      CHECK(ids_of(test::run_command(mpirun(ranks) + generate(model, test::repeated_function_prompt(), options + " --tp " + std::to_string(ranks)))) ==
            alone);
    }
  }
}

TEST_CASE("the server as 2 and 4 ranks answers concurrent completions as one process does", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const std::vector<std::string> args = {"--model", (*models / "stories260K.gguf").string(), "--threads", "1", "--slots", "4",
                                         "--kv-capacity", "64"};
  test::ServerProcess alone(args);
  // Six requests at once through four slots: they share decode batches, wait for slots, and the
  // longer prompts are compacted into the 64-entry caches.
  std::vector<std::string> prompts;
  for (int i = 0; i < 6; ++i) {
    std::string prompt = "Once upon a time, there was a little " + std::string(i % 2 ? "dog" : "girl") + " named " +
                         std::to_string(i) + ".";
    for (int repeat = 0; repeat < i; ++repeat) prompt += " She liked to play in the park with her friends every day.";
    prompts.push_back(prompt);
  }
  auto texts = [&](int port) {
    std::vector<std::future<std::string>> replies;
    for (const std::string& prompt : prompts)
      replies.push_back(std::async(std::launch::async, [port, prompt] {
        const nlohmann::json body = {{"prompt", prompt}, {"max_tokens", 60}, {"temperature", 0}};
        const test::HttpReply reply = test::http_call(port, "POST", "/v1/completions", body.dump());
        return reply.status == 200 ? nlohmann::json::parse(reply.body).at("choices").at(0).at("text").get<std::string>()
                                   : "status " + std::to_string(reply.status) + ": " + reply.body;
      }));
    std::vector<std::string> out;
    for (auto& reply : replies) out.push_back(reply.get());
    return out;
  };
  const std::vector<std::string> expected = texts(alone.port());
  CHECK_FALSE(test::http_call(alone.port(), "GET", "/metrics").body.find("rank_step_seconds") != std::string::npos);
  for (const int count : {2, 4}) {
    const auto ranks = server_as_ranks(args, count);
    const std::vector<std::string> got = texts(ranks->port());
    for (size_t i = 0; i < prompts.size(); ++i) {
      INFO(count << " ranks, prompt " << i);
      CHECK_FALSE(expected[i].empty());
      CHECK(got[i] == expected[i]);
    }
    // Rank 0's metrics carry every rank's time in steps and in collectives.
    const std::string metrics = test::http_call(ranks->port(), "GET", "/metrics").body;
    INFO(metrics);
    for (int rank = 0; rank < count; ++rank) {
      const std::string label = "rank=\"" + std::to_string(rank) + "\"";
      const double steps = test::metric_sample(metrics, "snapstream:rank_step_seconds_total", label);
      const double collectives = test::metric_sample(metrics, "snapstream:rank_collective_seconds_total", label);
      CHECK(steps > 0.0);
      CHECK(collectives > 0.0);
      CHECK(collectives < steps);
    }
    ranks->stop();
    CHECK_THAT(ranks->log(), Catch::Contains("stopped"));
  }
}

TEST_CASE("a quantised parity model served as 2 and 4 ranks completes as one process does", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const std::vector<std::string> args = {"--model", (*models / "parity" / "llama-starcoder-q8_0.gguf").string(), "--threads", "1",
                                         "--slots", "2", "--kv-capacity", "32"};
  test::ServerProcess alone(args);
  const std::vector<std::string> prompts = {"def fibonacci(n):", test::repeated_function_prompt()};
  std::vector<std::string> expected;
  for (const std::string& prompt : prompts) {
    const nlohmann::json body = {{"prompt", prompt}, {"max_tokens", 40}, {"temperature", 0}};
    const test::HttpReply reply = test::http_call(alone.port(), "POST", "/v1/completions", body.dump());
    REQUIRE(reply.status == 200);
    expected.push_back(nlohmann::json::parse(reply.body).at("choices").at(0).at("text").get<std::string>());
    CHECK_FALSE(expected.back().empty());
  }
  for (const int count : {2, 4}) {
    const auto ranks = server_as_ranks(args, count);
    for (size_t i = 0; i < prompts.size(); ++i) {
      INFO(count << " ranks, prompt " << i);
      const nlohmann::json body = {{"prompt", prompts[i]}, {"max_tokens", 40}, {"temperature", 0}};
      const test::HttpReply got = test::http_call(ranks->port(), "POST", "/v1/completions", body.dump());
      REQUIRE(got.status == 200);
      CHECK(nlohmann::json::parse(got.body).at("choices").at(0).at("text").get<std::string>() == expected[i]);
    }
  }
}

TEST_CASE("ranks that disagree stop together with one clear error", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = *models / "stories260K.gguf";
  const auto no_tp = test::run_command(mpirun(2) + generate(model, "Once", "--max-tokens 4"));
  CHECK(no_tp.exit_code == 2);
  CHECK_THAT(no_tp.err, Catch::Contains("give --tp 2"));
  CHECK(no_tp.out.empty());
  // Two programs of one job, each rank started with its own prompt.
  const std::string one = generate(model, "Once", "--max-tokens 4 --tp 2");
  const std::string other = generate(model, "Twice", "--max-tokens 4 --tp 2");
  const auto differ = test::run_command(mpirun() + "-np 1 " + one + " : -np 1 " + other);
  CHECK(differ.exit_code == 2);
  CHECK_THAT(differ.err, Catch::Contains("different command lines"));
}

TEST_CASE("killing one of 2 ranks mid-request ends the job within seconds and cuts the client's stream", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  // A model slow enough that a 1000-token stream is still running when rank 1 is killed.
  const auto ranks = server_as_ranks({"--model", (*models / "parity" / "llama-starcoder-q8_0.gguf").string(), "--threads", "1"}, 2);
  const pid_t follower = rank_process(ranks->pid(), 1);
  REQUIRE(follower > 0);
  test::TcpConnection client(ranks->port());
  const std::string body = R"({"prompt": "def main", "max_tokens": 1000, "temperature": 0, "stream": true})";
  client.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(body.size()) + "\r\n\r\n" + body);
  const std::vector<std::string> first = client.first_events(3);
  REQUIRE(first.size() == 3);
  const auto killed = std::chrono::steady_clock::now();
  REQUIRE(::kill(follower, SIGKILL) == 0);
  // The stream is cut before its [DONE]: the client sees an error, not a hang.
  const std::vector<std::string> rest = client.first_events(100000);
  CHECK(first.size() + rest.size() < 1000);
  CHECK((rest.empty() || rest.back() != "[DONE]"));
  CHECK(client.closed_within(1000));
  bool ended = false;
  while (!ended && std::chrono::steady_clock::now() - killed < std::chrono::seconds(30)) {
    ended = !ranks->running();
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  INFO("the job ended " << seconds << " s after rank 1 was killed\n" << ranks->log());
  CHECK(ended);
  CHECK(ranks->stop() != 0);
  CHECK_THAT(ranks->log(), Catch::Contains("rank 1") && Catch::Contains("signal 9"));
}
