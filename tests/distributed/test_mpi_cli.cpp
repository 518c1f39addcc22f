// The real binary as MPI ranks: `mpirun -np P snapstream generate --tp P` prints the tokens of
// one process (stories260K through SnapKV compaction and ring eviction, and a quantised parity
// model), and ranks that disagree on --tp or on their arguments all stop with one clear error.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/test_paths.h"

using namespace snapstream;

namespace {

// mpirun, allowed to start ranks as root (containers, CI), with more ranks than cores allowed.
std::string mpirun() { return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + std::string(SNAPSTREAM_MPIEXEC) + " --oversubscribe "; }

std::string mpirun(int ranks) { return mpirun() + "-np " + std::to_string(ranks) + " "; }

std::string generate(const std::filesystem::path& model, const std::string& prompt, const std::string& extra) {
  return test::shell_quote(test::snapstream_binary().string()) + " generate --model " + test::shell_quote(model.string()) +
         " --prompt " + test::shell_quote(prompt) + " --temperature 0 --json --threads 1 " + extra;
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
  const std::string options = "--max-tokens 120 --kv-capacity 64";
  const auto alone = ids_of(test::run_command(generate(model, prompt, options)));
  REQUIRE(alone.size() > 20);
  for (const int ranks : {2, 4}) {
    INFO(ranks << " ranks");
    CHECK(ids_of(test::run_command(mpirun(ranks) + generate(model, prompt, options + " --tp " + std::to_string(ranks)))) == alone);
  }
}

TEST_CASE("a quantised parity model as 2 ranks prints the tokens of one process", "[distributed][e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  for (const char* name : {"llama-spm-q4_k_m", "qwen2-gpt2-q4_k_m"}) {
    INFO(name);
    const auto model = *models / "parity" / (std::string(name) + ".gguf");
    std::ifstream in(*models / "parity" / (std::string(name) + ".golden.json"));
    const std::string prompt = nlohmann::json::parse(in).at("cases").at(0).at("prompt").get<std::string>();
    const auto alone = ids_of(test::run_command(generate(model, prompt, "--max-tokens 24")));
    CHECK(ids_of(test::run_command(mpirun(2) + generate(model, prompt, "--max-tokens 24 --tp 2"))) == alone);
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
