// The `snapstream` binary end to end: golden generation through the CLI, streaming output,
// make-model -> info -> generate, eval and task instances, and one-line errors with exit code 2 for broken files.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "tests/support/eval_answers.h"
#include "tests/support/test_paths.h"

using namespace snapstream;

namespace {
using test::shell_quote;
std::string binary() { return shell_quote(test::snapstream_binary().string()); }
}  // namespace

TEST_CASE("generate --json reproduces every golden case from both model files", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  std::ifstream in(*models / "stories260K.golden.json");
  const auto golden = nlohmann::json::parse(in);
  const std::string cache = GENERATE(" --full-cache", " --kv-capacity 512");
  INFO("cache options:" << cache);
  for (const std::string file : {"stories260K.bin", "stories260K.gguf"}) {
    for (const auto& c : golden.at("cases")) {
      const auto prompt = c.at("prompt").get<std::string>();
      INFO(file << ", prompt '" << prompt << "'");
      const auto result = test::run_command(binary() + " generate --json --model " + shell_quote((*models / file).string()) +
                                            " --prompt " + shell_quote(prompt) + " --max-tokens " +
                                            std::to_string(c.at("max_tokens").get<int>()) + cache);
      INFO(result.err);
      REQUIRE(result.exit_code == 0);
      const auto out = nlohmann::json::parse(result.out);
      CHECK(out.at("prompt_ids") == c.at("prompt_ids"));
      CHECK(out.at("ids") == c.at("greedy_ids"));
      CHECK(out.at("finish_reason") == c.at("finish_reason"));
      CHECK(prompt + out.at("text").get<std::string>() == c.at("text").get<std::string>());
      CHECK(out.at("decode_tokens_per_s").get<double>() > 0.0);
      CHECK(out.at("prefill_tokens_per_s").get<double>() > 0.0);
    }
  }
}

TEST_CASE("generate --ignore-eos and batch's ignore_eos run a story that ends itself on to the token limit", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  std::ifstream in(*models / "stories260K.golden.json");
  const auto golden = nlohmann::json::parse(in);
  nlohmann::json ended;
  for (const auto& c : golden.at("cases"))
    if (c.at("finish_reason") == "stop") ended = c;
  REQUIRE(ended.is_object());
  const auto greedy = ended.at("greedy_ids").get<std::vector<int32_t>>();
  const auto limit = static_cast<int64_t>(greedy.size()) + 6;
  const std::string model = shell_quote((*models / "stories260K.gguf").string());
  const std::string prompt = ended.at("prompt").get<std::string>();

  const auto result = test::run_command(binary() + " generate --json --ignore-eos --full-cache --model " + model + " --prompt " +
                                        shell_quote(prompt) + " --max-tokens " + std::to_string(limit));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto out = nlohmann::json::parse(result.out);
  const auto ids = out.at("ids").get<std::vector<int32_t>>();
  CHECK(out.at("finish_reason") == "length");
  REQUIRE(static_cast<int64_t>(ids.size()) == limit);
  CHECK(std::equal(greedy.begin(), greedy.end(), ids.begin()));

  test::TempDir dir;
  {
    std::ofstream prompts(dir / "prompts.jsonl");
    prompts << nlohmann::json{{"prompt", prompt}, {"max_tokens", limit}}.dump() << "\n";
    prompts << nlohmann::json{{"prompt", prompt}, {"max_tokens", limit}, {"ignore_eos", true}}.dump() << "\n";
  }
  const auto batch = test::run_command(binary() + " batch --json --full-cache --model " + model + " --prompts " +
                                       shell_quote((dir / "prompts.jsonl").string()));
  INFO(batch.err);
  REQUIRE(batch.exit_code == 0);
  std::istringstream lines(batch.out);
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(nlohmann::json::parse(line).at("ids") == greedy);
  CHECK(nlohmann::json::parse(line).at("finish_reason") == "stop");
  REQUIRE(std::getline(lines, line));
  CHECK(nlohmann::json::parse(line).at("ids") == ids);
  CHECK(nlohmann::json::parse(line).at("finish_reason") == "length");

  {
    std::ofstream bad(dir / "bad.jsonl");
    bad << "{\"prompt\": \"x\", \"ignore_eos\": \"yes\"}\n";
  }
  const auto refused = test::run_command(binary() + " batch --model " + model + " --prompts " + shell_quote((dir / "bad.jsonl").string()));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("bad.jsonl:1: 'ignore_eos' must be true or false") != std::string::npos);
  {
    std::ofstream misspelt(dir / "misspelt.jsonl");
    misspelt << "{\"prompt\": \"x\", \"max_tokens\": 3}\n{\"prompt\": \"x\", \"max_token\": 3}\n";
  }
  const auto unknown =
      test::run_command(binary() + " batch --model " + model + " --prompts " + shell_quote((dir / "misspelt.jsonl").string()));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("misspelt.jsonl:2: unknown key 'max_token'; a line takes prompt, max_tokens") != std::string::npos);
}

TEST_CASE("generate streams the prompt and its continuation as text", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  std::ifstream in(*models / "stories260K.golden.json");
  const auto first = nlohmann::json::parse(in).at("cases").at(0);
  const auto result = test::run_command(binary() + " generate --model " + shell_quote((*models / "stories260K.bin").string()) +
                                        " --prompt " + shell_quote(first.at("prompt").get<std::string>()) + " --max-tokens " +
                                        std::to_string(first.at("max_tokens").get<int>()) + " --full-cache");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out == first.at("text").get<std::string>() + "\n");
}

TEST_CASE("make-model writes a GGUF that info describes and generate runs", "[e2e]") {
  test::TempDir dir;
  const auto path = shell_quote((dir / "random.gguf").string());
  for (const std::string dtype : {"f32", "q8_0"}) {
    INFO(dtype);
    auto made = test::run_command(binary() + " make-model --shape tiny-test --dtype " + dtype + " --out " + path + " --seed 3");
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
    CHECK(made.err.find("meaningless") != std::string::npos);
    const auto info = test::run_command(binary() + " info " + path);
    REQUIRE(info.exit_code == 0);
    CHECK(info.out.find("GGUF v3") != std::string::npos);
    CHECK(info.out.find("blk.1.ffn_down.weight") != std::string::npos);
    CHECK(info.out.find(dtype == "f32" ? "F32" : "Q8_0") != std::string::npos);
    const auto run = test::run_command(binary() + " generate --json --model " + path +
                                       " --prompt 'the end' --max-tokens 8 --temperature 0.8 --seed 5");
    REQUIRE(run.exit_code == 0);
    const auto again = test::run_command(binary() + " generate --json --model " + path +
                                         " --prompt 'the end' --max-tokens 8 --temperature 0.8 --seed 5");
    CHECK(nlohmann::json::parse(run.out).at("ids") == nlohmann::json::parse(again.out).at("ids"));
  }
  const auto unknown = test::run_command(binary() + " make-model --shape no-such-shape --out " + path);
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("llama-110m") != std::string::npos);  // lists the known shapes
  // 64-wide rows are not whole K-quant blocks: one dtype is refused, the Q4_K_M mix falls back.
  const auto q4_k = test::run_command(binary() + " make-model --shape tiny-test --dtype q4_k --out " + path);
  CHECK(q4_k.exit_code == 2);
  CHECK(q4_k.err.find("multiples of 256") != std::string::npos);
}

TEST_CASE("make-model writes the Q4_K_M mix and Qwen2 shapes that load and run, with --tp 2 too", "[e2e]") {
  test::TempDir dir;
  // Qwen2 with 256-wide rows (Q4_K and Q6_K) and 384-wide MLP rows (Q5_0 and Q8_0 fallbacks).
  std::ofstream(dir / "qwen2-small.json") << R"({"name": "qwen2-small", "architecture": "qwen2", "dim": 256,
      "hidden_dim": 384, "n_layers": 8, "n_heads": 8, "n_kv_heads": 2, "head_dim": 32, "vocab_size": 400,
      "context_length": 128, "rope_theta": 1000000.0, "norm_eps": 1e-06, "tied_embeddings": true})";
  const auto path = shell_quote((dir / "qwen2.gguf").string());
  const auto made = test::run_command(binary() + " make-model --shape " + shell_quote((dir / "qwen2-small.json").string()) +
                                      " --dtype q4_k_m --out " + path);
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const auto info = test::run_command(binary() + " info " + path);
  REQUIRE(info.exit_code == 0);
  CHECK(info.out.find("architecture: qwen2") != std::string::npos);
  // Q6_K: the tied embedding and attn_v of the favoured layers 0, 3, 6 and 7; their ffn_down (384
  // wide) falls back to Q8_0, the other layers' to Q5_0.
  CHECK(info.out.find("tensor types: F32 x41 Q4_K x44 Q5_0 x4 Q6_K x5 Q8_0 x4") != std::string::npos);
  CHECK(info.out.find("general.file_type (u32) = 15") != std::string::npos);
  CHECK(info.out.find("blk.7.attn_q.bias") != std::string::npos);
  std::string ids;
  for (const std::string tp : {"1", "2"}) {
    const auto run = test::run_command(binary() + " generate --json --model " + path + " --prompt 'the end' --max-tokens 8 --tp " + tp);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    const auto out = nlohmann::json::parse(run.out).at("ids").dump();
    if (ids.empty()) ids = out;
    CHECK(out == ids);
  }
}

TEST_CASE("a broken model file gives a one-line error and exit code 2", "[e2e]") {
  test::TempDir dir;
  const auto path = dir / "broken.gguf";
  {
    std::ofstream out(path, std::ios::binary);
    out.write("GGUF\x03\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f", 16);
  }
  for (const std::string command : {" generate --prompt hi --model ", " info "}) {
    const auto result = test::run_command(binary() + command + shell_quote(path.string()));
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(path.string()) != std::string::npos);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  }
}

TEST_CASE("tokenize prints the ids of a text under a vocabulary-only file, and info describes the tokenizer", "[e2e]") {
  const auto vocab = test::vocab_dir_or_skip();
  if (!vocab) return;
  const std::string gpt2 = " --model " + shell_quote((*vocab / "ggml-vocab-gpt-2.gguf").string());
  const auto special = test::run_command(binary() + " tokenize" + gpt2 + " --text 'Hello world<|endoftext|>' --parse-special --json");
  INFO(special.err);
  REQUIRE(special.exit_code == 0);
  CHECK(nlohmann::json::parse(special.out) == nlohmann::json::parse(R"({"ids": [15496, 995, 50256]})"));
  const auto literal = test::run_command(binary() + " tokenize" + gpt2 + " --text 'Hello world<|endoftext|>'");
  CHECK(literal.out == "15496 995 27 91 437 1659 5239 91 29\n");  // the marker as plain text
  test::TempDir dir;
  std::ofstream(dir / "text.txt") << "Hello world";
  const auto from_file = test::run_command(binary() + " tokenize" + gpt2 + " --file " + shell_quote((dir / "text.txt").string()));
  CHECK(from_file.out == "15496 995\n");
  const auto spm = " --model " + shell_quote((*vocab / "ggml-vocab-llama-spm.gguf").string());
  CHECK(test::run_command(binary() + " tokenize" + spm + " --text Hello --add-special").out == "1 15043\n");
  CHECK(test::run_command(binary() + " tokenize" + spm + " --text Hello").out == "15043\n");
  const auto nothing = test::run_command(binary() + " tokenize" + spm);
  CHECK(nothing.exit_code == 2);
  CHECK(nothing.err.find("--text or --file") != std::string::npos);

  const auto info = test::run_command(binary() + " info " + shell_quote((*vocab / "ggml-vocab-gpt-2.gguf").string()));
  REQUIRE(info.exit_code == 0);
  CHECK(info.out.find("tokenizer: byte-level BPE (gpt2), pre-tokenizer gpt-2, 50257 tokens") != std::string::npos);
  CHECK(info.out.find("end of generation: 50256 '<|endoftext|>'") != std::string::npos);
  CHECK(info.out.find("tensor types: none (a vocabulary-only file)") != std::string::npos);
}

TEST_CASE("a tensor-parallel plan the shape cannot take exits 2 before any output", "[e2e]") {
  test::TempDir dir;
  // 3 KV heads split over 3 shards, but the MLP's 128 columns do not.
  std::ofstream(dir / "odd.json") << R"({"name": "odd", "dim": 96, "hidden_dim": 128, "n_layers": 2, "n_heads": 6,
                                        "n_kv_heads": 3, "vocab_size": 300, "context_length": 64})";
  const auto model = shell_quote((dir / "odd.gguf").string());
  const auto made = test::run_command(binary() + " make-model --shape " + shell_quote((dir / "odd.json").string()) + " --out " + model);
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  REQUIRE(test::run_command(binary() + " generate --model " + model + " --prompt 'once upon' --max-tokens 4 --tp 1").exit_code == 0);
  for (const std::string json : {"", " --json"}) {
    INFO("generate --tp 3" << json);
    const auto result = test::run_command(binary() + " generate --model " + model + " --prompt 'once upon' --max-tokens 4 --tp 3" + json);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(result.err.find("must divide by 3") != std::string::npos);
  }
  const auto deepseek = test::run_command(binary() + " make-model --shape deepseek-r1-671b --out " + model);
  CHECK(deepseek.exit_code == 2);
  CHECK(deepseek.err.find("not a Llama-family shape") != std::string::npos);
}

TEST_CASE("a refused argument names what is accepted and exits 2", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = " --model " + shell_quote((*models / "stories260K.gguf").string());
  const std::pair<std::string, std::string> cases[] = {{"--kv-dtype f8", "'f8' is not one of f16|f32|q8_0"},
                                                      {"--kv-dtype q8_0", "heads have 8; use --kv-dtype f16"},
                                                      {"--pool median", "'median' is not one of avg|max"},
                                                      {"--positions shifted", "'shifted' is not one of original|reindexed"},
                                                      {"--no-such-option", "no-such-option"}};
  for (const auto& [argument, message] : cases) {
    INFO(argument);
    const auto result = test::run_command(binary() + " generate --prompt hi" + model + " " + argument);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(message) != std::string::npos);
  }
  CHECK(test::run_command(binary() + " generate --help").exit_code == 0);
}

TEST_CASE("bench reports throughput, bandwidth, multiply-add rates and both roofline shares", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto result = test::run_command(binary() + " bench --json --repeats 1 --prompt-tokens 16 --decode-tokens 8 " +
                                        "--concurrency 2 --compute-passes 1 --bandwidth-mib 64 --kv-dtype f32 --model " +
                                        shell_quote((*models / "stories260K.gguf").string()));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto out = nlohmann::json::parse(result.out);
  for (const char* key : {"prefill_tokens_per_s", "decode_tokens_per_s", "memory_read_bytes_per_s", "decode_roofline_share",
                          "compute_multiply_adds_per_s", "compute_multiply_adds_per_s_one_thread", "decode_compute_share"})
    CHECK(out.at(key).get<double>() > 0.0);
  CHECK(out.at("multiply_adds_per_step").get<int64_t>() == 2 * 259328);  // two sequences of stories260K
  CHECK(out.at("weight_bytes_per_step").get<int64_t>() > 1000000);
  // The default f16 cache reads half the KV bytes per step.
  const auto half = test::run_command(binary() + " bench --json --repeats 1 --prompt-tokens 16 --decode-tokens 8 " +
                                      "--concurrency 2 --bandwidth-mib 0 --compute-passes 0 --model " +
                                      shell_quote((*models / "stories260K.gguf").string()));
  INFO(half.err);
  REQUIRE(half.exit_code == 0);
  CHECK(2 * nlohmann::json::parse(half.out).at("kv_bytes_per_step").get<int64_t>() == out.at("kv_bytes_per_step").get<int64_t>());
  CHECK_FALSE(nlohmann::json::parse(half.out).contains("decode_compute_share"));  // --compute-passes 0 skips the probe
}

TEST_CASE("bench --profile splits prefill and a decode step by op kind", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto result = test::run_command(binary() + " bench --json --profile --repeats 1 --prompt-tokens 16 --decode-tokens 8 " +
                                        "--concurrency 2 --bandwidth-mib 0 --model " +
                                        shell_quote((*models / "stories260K.gguf").string()));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto out = nlohmann::json::parse(result.out);
  const auto& profile = out.at("decode_profile_seconds_per_step");
  for (const char* kind : {"embed", "rmsnorm", "matmul", "rope", "decode_attention", "swiglu", "add"})
    CHECK(profile.at(kind).get<double>() > 0.0);
  CHECK_FALSE(profile.contains("causal_attention"));  // prefill has a profile of its own
  // One run: the op times lie inside the decode time, and "outside ops" is the rest of it.
  double sum = 0.0;
  for (const auto& [kind, seconds] : profile.items()) sum += seconds.get<double>();
  CHECK(sum == Approx(out.at("decode_seconds_per_step").get<double>()).epsilon(1e-9));

  const auto& prefill = out.at("prefill_profile_seconds");
  for (const char* kind : {"embed", "matmul", "causal_attention"}) CHECK(prefill.at(kind).get<double>() > 0.0);
  CHECK_FALSE(prefill.contains("decode_attention"));
  double prefill_sum = 0.0;
  for (const auto& [kind, seconds] : prefill.items()) prefill_sum += seconds.get<double>();
  // Both sequences' prompts, one repeat: tokens / (tokens/s) is the prefill's time.
  CHECK(prefill_sum == Approx(2 * 16 / out.at("prefill_tokens_per_s").get<double>()).epsilon(1e-9));
}

TEST_CASE("batch runs the golden prompts together and reports them in input order", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  std::ifstream in(*models / "stories260K.golden.json");
  const auto golden = nlohmann::json::parse(in);
  test::TempDir dir;
  {
    std::ofstream prompts(dir / "prompts.jsonl");
    for (const auto& c : golden.at("cases"))
      prompts << nlohmann::json{{"prompt", c.at("prompt")}, {"max_tokens", c.at("max_tokens")}}.dump() << "\n";
  }
  const auto result = test::run_command(binary() + " batch --json --full-cache --slots 3 --model " +
                                        shell_quote((*models / "stories260K.bin").string()) + " --prompts " +
                                        shell_quote((dir / "prompts.jsonl").string()));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  std::istringstream lines(result.out);
  std::string line;
  size_t index = 0;
  for (const auto& c : golden.at("cases")) {
    REQUIRE(std::getline(lines, line));
    const auto out = nlohmann::json::parse(line);
    CHECK(out.at("index") == index++);
    CHECK(out.at("ids") == c.at("greedy_ids"));
    CHECK(out.at("finish_reason") == c.at("finish_reason"));
  }
  REQUIRE(std::getline(lines, line));
  CHECK(nlohmann::json::parse(line).at("aggregate").at("tokens_per_s").get<double>() > 0.0);

  {
    std::ofstream bad(dir / "bad.jsonl");
    bad << "{\"prompt\": \"fine\"}\n{\"prompt\": \"x\", \"max_tokens\": \"many\"}\n";
  }
  const auto refused = test::run_command(binary() + " batch --model " + shell_quote((*models / "stories260K.bin").string()) +
                                         " --prompts " + shell_quote((dir / "bad.jsonl").string()));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("bad.jsonl:2:") != std::string::npos);
}

TEST_CASE("eval writes results.csv with its documented header, a report and plots", "[e2e][eval]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::TempDir dir;
  const auto result = test::run_command(test::snapstream_binary().string() + " eval --model " +
                                        (*models / "stories260K.gguf").string() +
                                        " --generate 3 --prompt-len 64 --continue-len 32 --budgets 1/2,16 --slots 2 --out " +
                                        (dir / "out").string());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  std::ifstream csv(dir / "out" / "results.csv");
  std::string header, line;
  std::getline(csv, header);
  CHECK(header == "task,context,policy,budget,ring,window,pool_kernel,positions,documents,nll,nll_full,nll_gap,greedy_agreement,agree16,"
                  "agree64,attention_recall,accuracy,values_kept");
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 6);  // three policies at budgets 32 and 16
  for (const char* file : {"report.md", "nll_gap.png", "agreement.png"}) CHECK(std::filesystem::exists(dir / "out" / file));
  CHECK(result.out.find("full cache: nll") != std::string::npos);

  // The same seed gives the same numbers, run after run.
  const auto again = test::run_command(test::snapstream_binary().string() + " eval --model " +
                                       (*models / "stories260K.gguf").string() +
                                       " --generate 3 --prompt-len 64 --continue-len 32 --budgets 1/2,16 --slots 2 --out " +
                                       (dir / "again").string());
  REQUIRE(again.exit_code == 0);
  CHECK(test::read_text(dir / "out" / "results.csv") == test::read_text(dir / "again" / "results.csv"));

  const auto bad = test::run_command(test::snapstream_binary().string() + " eval --model " + (*models / "stories260K.gguf").string() +
                                     " --generate 1 --prompt-len 64 --continue-len 32 --policies snapstream,lru");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("unknown policy 'lru'") != std::string::npos);
}

TEST_CASE("tasks writes retrieval instances of the asked lengths, the same from the same seed", "[e2e][eval]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::TempDir dir;
  const std::string command = binary() + " tasks --model " + shell_quote((*models / "stories260K.gguf").string()) +
                              " --tasks niah,vt --lengths 300,400 --count 6 --generate 4 --seed 5 --out ";
  const auto result = test::run_command(command + shell_quote((dir / "a.jsonl").string()));
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  std::ifstream in(dir / "a.jsonl");
  std::string line;
  std::vector<std::pair<std::string, int64_t>> seen;
  while (std::getline(in, line)) {
    const auto instance = nlohmann::json::parse(line);
    const auto total = instance.at("prompt_ids").size() + instance.at("answer_ids").size();
    CHECK(static_cast<int64_t>(total) == instance.at("length").get<int64_t>());
    seen.emplace_back(instance.at("task").get<std::string>(), instance.at("length").get<int64_t>());
  }
  const std::vector<std::pair<std::string, int64_t>> expected = {{"niah", 300}, {"vt", 300}, {"niah", 400},
                                                                 {"vt", 400},   {"niah", 300}, {"vt", 300}};
  CHECK(seen == expected);
  REQUIRE(test::run_command(command + shell_quote((dir / "b.jsonl").string())).exit_code == 0);
  CHECK(test::read_text(dir / "a.jsonl") == test::read_text(dir / "b.jsonl"));

  const auto unknown = test::run_command(binary() + " tasks --model " + shell_quote((*models / "stories260K.gguf").string()) +
                                         " --tasks needle --count 1 --generate 1 --out " + shell_quote((dir / "c.jsonl").string()));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown task 'needle'") != std::string::npos);
}

TEST_CASE("convert writes a llama2.c checkpoint as a GGUF file that generates the same tokens", "[e2e]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::TempDir dir;
  const auto converted = dir / "stories.gguf";
  const auto result = test::run_command(binary() + " convert --model " + shell_quote((*models / "stories260K.bin").string()) +
                                        " --tokenizer " + shell_quote((*models / "tok512.bin").string()) + " --out " +
                                        shell_quote(converted.string()));
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  auto generated = [&](const std::filesystem::path& model) {
    const auto run = test::run_command(binary() + " generate --json --temperature 0 --max-tokens 24 --prompt 'Lily saw a' --model " +
                                       shell_quote(model.string()));
    REQUIRE(run.exit_code == 0);
    const auto out = nlohmann::json::parse(run.out);
    return std::make_pair(out.at("ids"), out.at("text"));
  };
  CHECK(generated(converted) == generated(*models / "stories260K.bin"));
  CHECK(test::run_command(binary() + " info " + shell_quote(converted.string())).out.find("tokenizer: SentencePiece BPE (llama), 512 tokens") !=
        std::string::npos);
  // Converting the converted file again (under the same name) writes the same bytes.
  REQUIRE(test::run_command(binary() + " convert --name stories260K --model " + shell_quote(converted.string()) + " --out " +
                            shell_quote((dir / "again.gguf").string())).exit_code == 0);
  CHECK(test::read_text(converted) == test::read_text(dir / "again.gguf"));

  const auto parity = *models / "parity" / "qwen2-gpt2-q4_k_m.gguf";
  if (!std::filesystem::exists(parity)) return;
  const auto refused = test::run_command(binary() + " convert --model " + shell_quote(parity.string()) + " --out " +
                                         shell_quote((dir / "bpe.gguf").string()));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("byte-level BPE") != std::string::npos);
}

TEST_CASE("eval --task runs retrieval instances under every policy and budget and scores them", "[e2e][eval]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::TempDir dir;
  const std::string model = shell_quote((*models / "stories260K.gguf").string());
  const std::string command = binary() + " eval --model " + model + " --haystack-model " + model +
                              " --task multikey,niah --contexts 200,300 --budgets 1/2,1/4 --policies full,snapstream,streaming"
                              " --documents 3 --generate 10 --seed 4 --slots 2 --out ";
  const auto result = test::run_command(command + shell_quote((dir / "a").string()));
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  std::ifstream csv(dir / "a" / "results.csv");
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> rows;
  while (std::getline(csv, line)) rows.push_back(line.substr(0, line.find(",", line.find(",", line.find(",") + 1) + 1)));
  // Per task and context: the full cache, then each policy at C = context/2 and context/4.
  std::vector<std::string> expected;
  for (const std::string task : {"multikey", "niah"})
    for (const std::string context : {"200", "300"})
      for (const std::string policy : {"full", "snapstream", "snapstream", "streaming", "streaming"})
        expected.push_back(task + "," + context + "," + policy);
  CHECK(rows == expected);
  for (const char* file : {"report.md", "accuracy-multikey.png", "accuracy-niah.png"}) CHECK(std::filesystem::exists(dir / "a" / file));
  const std::string report = test::read_text(dir / "a" / "report.md");
  CHECK(report.find("| task | context | full cache | policy | C = 1/2 | C = 1/4 |") != std::string::npos);
  CHECK(report.find("## What the numbers show") != std::string::npos);
  CHECK(report.find("- niah at 300 tokens:") != std::string::npos);
  CHECK(report.find("sampled from stories260K.gguf") != std::string::npos);
  // Three instances: sqrt(0.25 / 3) = 28.9 points at 50%, sqrt(0.09 / 3) = 17.3 at 90%.
  CHECK(report.find("Over 3 instances an accuracy near 50% has a standard error of 28.9 points, near 90% of 17.3.") != std::string::npos);
  // Every row has an accuracy, a share of the three instances.
  const std::string csv_text = test::read_text(dir / "a" / "results.csv");
  CHECK(csv_text.find(",\n") == std::string::npos);
  const auto again = test::run_command(command + shell_quote((dir / "b").string()));
  REQUIRE(again.exit_code == 0);
  CHECK(csv_text == test::read_text(dir / "b" / "results.csv"));
  CHECK(test::read_text(dir / "a" / "answers.jsonl") == test::read_text(dir / "b" / "answers.jsonl"));

  // answers.jsonl: every row's three instances, their rights adding up to the row's accuracy.
  const auto answers = test::read_eval_answers(dir / "a" / "answers.jsonl");
  std::istringstream csv_rows(csv_text);
  std::getline(csv_rows, line);
  int csv_rows_seen = 0;
  while (std::getline(csv_rows, line)) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    REQUIRE(fields.size() == 18);
    const std::string key = fields[0] + "," + fields[1] + "," + fields[2] + "," + fields[3];
    INFO(key);
    REQUIRE(answers.count(key) == 1);
    CHECK(answers.at(key).lines == 3);
    CHECK(std::stod(fields[16]) == Approx(answers.at(key).right / 3.0));
    // values_kept: the full cache holds every value in every layer and group; a policy some.
    const double values_kept = std::stod(fields[17]);
    if (fields[2] == "full") CHECK(values_kept == 1.0);
    CHECK(values_kept >= 0.0);
    CHECK(values_kept <= 1.0);
    ++csv_rows_seen;
  }
  CHECK(csv_rows_seen == 20);
  CHECK(answers.size() == 20);

  const auto too_long = test::run_command(binary() + " eval --model " + shell_quote((*models / "stories260K.gguf").string()) +
                                          " --task niah --contexts 1024 --generate 2 --out " + shell_quote((dir / "c").string()));
  CHECK(too_long.exit_code == 2);
  CHECK(too_long.err.find("exceeds the model's context of 512") != std::string::npos);
  const auto no_lengths = test::run_command(binary() + " eval --model " + shell_quote((*models / "stories260K.gguf").string()) +
                                            " --generate 2 --out " + shell_quote((dir / "d").string()));
  CHECK(no_lengths.exit_code == 2);
  CHECK(no_lengths.err.find("needs --prompt-len and --continue-len") != std::string::npos);
  const auto mixed = test::run_command(binary() + " eval --model " + model + " --task niah,stream --generate 2 --out " +
                                       shell_quote((dir / "e").string()));
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("only retrieval tasks may be listed together") != std::string::npos);
  const auto unknown = test::run_command(binary() + " eval --model " + model + " --task niah,needle --generate 2 --out " +
                                         shell_quote((dir / "f").string()));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown task 'needle'") != std::string::npos);
}

TEST_CASE("eval --task stream scores windows past the context only for re-indexed bounded caches", "[e2e][eval]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::TempDir dir;
  const auto result = test::run_command(binary() + " eval --model " + shell_quote((*models / "stories260K.gguf").string()) +
                                        " --task stream --stream-length 1100 --stream-window 256 --budgets 96"
                                        " --policies full,story,snapstream --positions original,reindexed --documents 2 --seed 1 --out " +
                                        shell_quote((dir / "s").string()));
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  std::ifstream csv(dir / "s" / "stream.csv");
  std::string line;
  std::getline(csv, line);
  CHECK(line == "policy,budget,ring,positions,begin,end,tokens,nll");
  std::map<std::string, std::vector<std::string>> windows;  // cache -> window ends
  while (std::getline(csv, line)) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
    REQUIRE(fields.size() == 8);
    windows[fields[0] + "/" + fields[3]].push_back(fields[5]);
    CHECK(std::stod(fields[7]) > 0.0);
  }
  // The full cache and original positions stop at the 512-token context; re-indexed goes on to 1100.
  const std::vector<std::string> to_context = {"256", "512"}, past = {"256", "512", "768", "1024", "1100"};
  CHECK(windows["full/original"] == to_context);
  CHECK(windows["snapstream/original"] == to_context);
  CHECK(windows["snapstream/reindexed"] == past);
  // The full cache restarted at every BOS (stories fit the context) goes on too.
  CHECK(windows["story/original"] == past);
  for (const char* file : {"report.md", "nll_by_position.png"}) CHECK(std::filesystem::exists(dir / "s" / file));
  // Findings: the re-indexed cache over the last 512 positions (windows 768-1024 and 1024-1100)
  // against 256-512; the caches that stop at the context say so.
  const std::string report = test::read_text(dir / "s" / "report.md");
  CHECK(report.find("- snapstream-C96-reindexed: NLL ") != std::string::npos);
  CHECK(report.find("over positions 588-1100 against ") != std::string::npos);
  CHECK(report.find("above the story row by ") != std::string::npos);
  CHECK(report.find("- full: NLL ") != std::string::npos);
  CHECK(report.find("it stops before the stream's last 512 positions") != std::string::npos);
}
