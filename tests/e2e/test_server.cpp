// `snapstream serve` end to end, over real TCP: every endpoint through curl, greedy output equal
// to `snapstream generate`, 32 concurrent streams with early hang-ups, 30+ kinds of bad
// requests, and a clean exit on SIGTERM.
#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "tests/support/http_client.h"
#include "tests/support/metric_sample.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using json = nlohmann::json;

namespace {

using test::shell_quote;
using test::metric_sample;

// curl's body, then its status code on the last line.
std::pair<std::string, int> curl(const test::ServerProcess& server, const std::string& path, const std::string& body = "") {
  std::string command = "curl -sS -N -w '\\n%{http_code}' " + shell_quote(server.url() + path);
  if (!body.empty()) command += " -H 'Content-Type: application/json' -d " + shell_quote(body);
  const auto result = test::run_command(command);
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const size_t last = result.out.rfind('\n');
  return {result.out.substr(0, last), std::stoi(result.out.substr(last + 1))};
}

std::string streamed_text(const std::string& body, bool chat) {
  std::string text;
  const auto events = test::sse_events(body);
  REQUIRE(!events.empty());
  CHECK(events.back() == "[DONE]");
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const auto chunk = json::parse(events[i]);
    for (const auto& choice : chunk.at("choices")) {
      if (chat)
        text += choice.at("delta").value("content", "");
      else
        text += choice.at("text").get<std::string>();
    }
  }
  return text;
}

std::string model_path(const std::filesystem::path& models) { return (models / "stories260K.gguf").string(); }

}  // namespace

TEST_CASE("serve answers every endpoint over curl, streaming and not, and exits 0 on SIGTERM", "[e2e][server]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", model_path(*models), "--slots", "4"});

  auto [health, health_status] = curl(server, "/health");
  CHECK(health_status == 200);
  CHECK(json::parse(health).at("status") == "ok");

  auto [models_body, models_status] = curl(server, "/v1/models");
  CHECK(models_status == 200);
  CHECK(json::parse(models_body).at("data").at(0).at("id") == "stories260K");
  // OpenAI's retrieve-a-model, escaped or not; another id is model_not_found.
  for (const std::string id : {"stories260K", "stories%32%360K"}) {
    auto [one_body, one_status] = curl(server, "/v1/models/" + id);
    CHECK(one_status == 200);
    CHECK(json::parse(one_body) == json::parse(models_body).at("data").at(0));
  }
  auto [other_body, other_status] = curl(server, "/v1/models/stories%FF");
  CHECK(other_status == 404);
  CHECK(json::parse(other_body).at("error").at("code") == "model_not_found");
  CHECK(json::parse(other_body).at("error").at("message").get<std::string>().find("'stories%FF'") != std::string::npos);

  const std::string completion = R"({"model": "stories260K", "prompt": "Once upon a time", "max_tokens": 40, "temperature": 0)";
  auto [whole, whole_status] = curl(server, "/v1/completions", completion + "}");
  REQUIRE(whole_status == 200);
  const auto answer = json::parse(whole);
  CHECK(answer.at("object") == "text_completion");
  const std::string text = answer.at("choices").at(0).at("text");
  CHECK(!text.empty());
  CHECK(answer.at("usage").at("completion_tokens") == 40);
  CHECK(answer.at("usage").at("prompt_tokens") == 5);
  CHECK(answer.at("choices").at(0).at("finish_reason") == "length");

  auto [stream, stream_status] = curl(server, "/v1/completions", completion + R"(, "stream": true, "stream_options": {"include_usage": true}})");
  CHECK(stream_status == 200);
  CHECK(streamed_text(stream, false) == text);
  const auto events = test::sse_events(stream);
  CHECK(json::parse(events[events.size() - 2]).at("usage").at("completion_tokens") == 40);

  const std::string chat = R"({"messages": [{"role": "user", "content": "Tell me a story."}], "max_tokens": 30, "temperature": 0)";
  auto [chat_whole, chat_status] = curl(server, "/v1/chat/completions", chat + "}");
  REQUIRE(chat_status == 200);
  const auto chat_answer = json::parse(chat_whole);
  CHECK(chat_answer.at("object") == "chat.completion");
  CHECK(chat_answer.at("choices").at(0).at("message").at("role") == "assistant");
  const std::string reply = chat_answer.at("choices").at(0).at("message").at("content");
  auto [chat_stream, chat_stream_status] = curl(server, "/v1/chat/completions", chat + R"(, "stream": true})");
  CHECK(chat_stream_status == 200);
  CHECK(streamed_text(chat_stream, true) == reply);

  // Greedy logprobs: each chosen token is the most likely one, and the tokens spell the text.
  auto [with_logprobs, logprobs_status] = curl(server, "/v1/completions", completion + R"(, "logprobs": 2})");
  REQUIRE(logprobs_status == 200);
  const auto logprobs = json::parse(with_logprobs).at("choices").at(0).at("logprobs");
  REQUIRE(logprobs.at("tokens").size() == 40);
  std::string spelled;
  for (size_t i = 0; i < 40; ++i) {
    const std::string token = logprobs.at("tokens").at(i);
    CHECK(logprobs.at("text_offset").at(i) == spelled.size());
    spelled += token;
    const float value = logprobs.at("token_logprobs").at(i);
    CHECK(value <= 0.0f);
    const auto& top = logprobs.at("top_logprobs").at(i);
    CHECK(top.size() <= 2);
    float best = -1e30f;
    for (const auto& [alternative, alternative_value] : top.items()) best = std::max(best, alternative_value.get<float>());
    CHECK(value == best);
  }
  CHECK(spelled == text);
  auto [chat_logprobs, chat_logprobs_status] = curl(server, "/v1/chat/completions", chat + R"(, "logprobs": true, "top_logprobs": 3})");
  REQUIRE(chat_logprobs_status == 200);
  const auto content = json::parse(chat_logprobs).at("choices").at(0).at("logprobs").at("content");
  CHECK(content.size() == json::parse(chat_whole).at("usage").at("completion_tokens"));
  CHECK(content.at(0).at("top_logprobs").size() == 3);

  auto [tokens, tokenize_status] = curl(server, "/tokenize", R"({"prompt": "Once upon a time"})");
  CHECK(tokenize_status == 200);
  CHECK(json::parse(tokens).at("tokens") == json::array({1, 403, 407, 261, 378}));
  // llama.cpp's spelling; special parsing turns the text "</s>" into EOS (2) unless switched off.
  auto [flagged, flagged_status] = curl(server, "/tokenize", R"({"content": "time</s>", "add_special": false})");
  CHECK(flagged_status == 200);
  CHECK(json::parse(flagged).at("tokens") == json::array({378, 2}));
  auto [literal, literal_status] = curl(server, "/tokenize", R"({"content": "</s>", "add_special": false, "parse_special": false})");
  CHECK(literal_status == 200);
  const auto literal_ids = json::parse(literal).at("tokens").get<std::vector<int32_t>>();
  CHECK(literal_ids.size() > 1);
  CHECK(std::count(literal_ids.begin(), literal_ids.end(), 2) == 0);
  auto [detokenized, detokenize_status] = curl(server, "/detokenize", R"({"tokens": [1, 403, 407, 261, 378]})");
  CHECK(detokenize_status == 200);
  CHECK(json::parse(detokenized).at("prompt") == "Once upon a time");

  auto [metrics, metrics_status] = curl(server, "/metrics");
  CHECK(metrics_status == 200);
  CHECK(metric_sample(metrics, "snapstream:num_requests_running") == 0.0);
  CHECK(metric_sample(metrics, "snapstream:generation_tokens_total") == 40 * 3 + 30 * 3);
  CHECK(metric_sample(metrics, "snapstream:request_success_total") >= 1.0);
  CHECK(metrics.find("snapstream:time_to_first_token_seconds_bucket") != std::string::npos);
  CHECK(metrics.find("snapstream:kv_cache_compression_ratio") != std::string::npos);

  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}

TEST_CASE("ignore_eos runs a completion past the end-of-text token to max_tokens", "[e2e][server]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", model_path(*models)});
  // The greedy story ends itself; with ignore_eos it runs on to max_tokens, its text first.
  const std::string whole_story = R"({"prompt": "Once upon a time", "max_tokens": 400, "temperature": 0)";
  auto [ended, ended_status] = curl(server, "/v1/completions", whole_story + "}");
  REQUIRE(ended_status == 200);
  const auto ended_answer = json::parse(ended);
  REQUIRE(ended_answer.at("choices").at(0).at("finish_reason") == "stop");
  const int64_t story_tokens = ended_answer.at("usage").at("completion_tokens");
  const std::string longer = R"({"prompt": "Once upon a time", "temperature": 0, "ignore_eos": true, "max_tokens": )" +
                             std::to_string(story_tokens + 8) + "}";
  auto [through, through_status] = curl(server, "/v1/completions", longer);
  REQUIRE(through_status == 200);
  const auto through_answer = json::parse(through);
  CHECK(through_answer.at("choices").at(0).at("finish_reason") == "length");
  CHECK(through_answer.at("usage").at("completion_tokens") == story_tokens + 8);
  const std::string story = ended_answer.at("choices").at(0).at("text");
  CHECK(through_answer.at("choices").at(0).at("text").get<std::string>().rfind(story, 0) == 0);
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}

TEST_CASE("repetition_penalty through the server equals snapstream generate's, and unknown fields are logged", "[e2e][server]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", model_path(*models)});
  const std::string prompt = "Once upon a time";
  auto greedy_text = [&](const json& extra) {
    json body{{"prompt", prompt}, {"max_tokens", 60}, {"temperature", 0}};
    body.update(extra);
    const auto reply = test::http_call(server.port(), "POST", "/v1/completions", body.dump());
    INFO(reply.body);
    REQUIRE(reply.status == 200);
    return json::parse(reply.body).at("choices").at(0).at("text").get<std::string>();
  };
  const auto generated = test::run_command(shell_quote(test::snapstream_binary().string()) + " generate --json --model " +
                                           shell_quote(model_path(*models)) + " --prompt " + shell_quote(prompt) +
                                           " --max-tokens 60 --repetition-penalty 1.3");
  REQUIRE(generated.exit_code == 0);
  const std::string penalised = greedy_text({{"repetition_penalty", 1.3}});
  CHECK(penalised == json::parse(generated.out).at("text"));
  CHECK(penalised != greedy_text(json::object()));
  // min_p leaves greedy decoding alone; a field the server does not know is answered and logged.
  CHECK(greedy_text({{"min_p", 0.2}, {"mirostat_tau", 5}}) == greedy_text(json::object()));
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
  CHECK(server.log().find("ignored the fields this server does not know: 'mirostat_tau'") != std::string::npos);
}

TEST_CASE("n samples several choices per prompt, the first as n = 1 would, streamed or not", "[e2e][server]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", model_path(*models)});
  auto post = [&](const std::string& path, const json& body) {
    const auto reply = test::http_call(server.port(), "POST", path, body.dump());
    INFO(reply.body);
    REQUIRE(reply.status == 200);
    return reply.body;
  };
  const json prompts = {"Once upon a time", "The dog"};
  const json sampled{{"max_tokens", 24}, {"temperature", 1.2}, {"seed", 7}};
  json both = sampled;
  both.update({{"prompt", prompts}, {"n", 3}});
  const auto answer = json::parse(post("/v1/completions", both));
  const auto& choices = answer.at("choices");
  REQUIRE(choices.size() == 6);
  for (size_t i = 0; i < choices.size(); ++i) CHECK(choices[i].at("index") == i);
  // Choice 3k answers prompt k as a request without n does; the others are other samples.
  for (size_t k = 0; k < 2; ++k) {
    json one = sampled;
    one["prompt"] = prompts[k];
    const auto single = json::parse(post("/v1/completions", one));
    CHECK(choices[3 * k].at("text") == single.at("choices").at(0).at("text"));
    const std::set<std::string> texts{choices[3 * k].at("text"), choices[3 * k + 1].at("text"), choices[3 * k + 2].at("text")};
    CHECK(texts.size() > 1);
  }
  // The same request gives the same choices; usage counts each prompt once.
  CHECK(json::parse(post("/v1/completions", both)).at("choices") == choices);
  int64_t prompt_tokens = 0;
  for (const auto& prompt : prompts)
    prompt_tokens += json::parse(post("/tokenize", {{"prompt", prompt}})).at("count").get<int64_t>();
  // A choice that ran to max_tokens holds 24 tokens, one that stopped at least one.
  int64_t fewest_tokens = 0;
  for (const auto& choice : choices) fewest_tokens += choice.at("finish_reason") == "length" ? 24 : 1;
  CHECK(answer.at("usage").at("prompt_tokens") == prompt_tokens);
  CHECK(answer.at("usage").at("completion_tokens").get<int64_t>() >= fewest_tokens);
  CHECK(answer.at("usage").at("completion_tokens").get<int64_t>() <= 6 * 24);
  // Chat, streamed: each index's deltas add up to the whole answer's choice, and each ends once.
  json chat = sampled;
  chat.update({{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}}, {"n", 2}});
  const auto whole = json::parse(post("/v1/chat/completions", chat));
  chat["stream"] = true;
  const auto events = test::sse_events(post("/v1/chat/completions", chat));
  std::vector<std::string> streamed(2);
  std::vector<int> finishes(2, 0);
  for (const auto& event : events) {
    if (event == "[DONE]") continue;
    const auto chunk = json::parse(event);
    for (const auto& choice : chunk.at("choices")) {
      const size_t index = choice.at("index");
      REQUIRE(index < 2);
      streamed[index] += choice.at("delta").value("content", "");
      if (!choice.at("finish_reason").is_null()) ++finishes[index];
    }
  }
  for (size_t i = 0; i < 2; ++i) {
    CHECK(streamed[i] == whole.at("choices").at(i).at("message").at("content"));
    CHECK(finishes[i] == 1);
  }
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}

TEST_CASE("greedy completions through the server equal snapstream generate on the golden prompts", "[e2e][server]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  std::ifstream in(*models / "stories260K.golden.json");
  const auto golden = json::parse(in);
  test::ServerProcess server({"--model", model_path(*models)});
  for (const auto& c : golden.at("cases")) {
    const std::string prompt = c.at("prompt");
    const int max_tokens = c.at("max_tokens");
    INFO("prompt '" << prompt << "'");
    const auto generated = test::run_command(shell_quote(test::snapstream_binary().string()) + " generate --json --model " +
                                             shell_quote(model_path(*models)) + " --prompt " + shell_quote(prompt) +
                                             " --max-tokens " + std::to_string(max_tokens));
    REQUIRE(generated.exit_code == 0);
    const auto expected = json::parse(generated.out);
    const auto reply = test::http_call(server.port(), "POST", "/v1/completions",
                                       json{{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}}.dump());
    REQUIRE(reply.status == 200);
    const auto choice = json::parse(reply.body).at("choices").at(0);
    CHECK(choice.at("text") == expected.at("text"));
    CHECK(choice.at("finish_reason") == expected.at("finish_reason"));
  }
}

TEST_CASE("32 concurrent streams get their solo outputs, and 10 that hang up early free their slots", "[e2e][server]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  std::ifstream in(*models / "stories260K.golden.json");
  const auto golden = json::parse(in);
  std::string words;
  for (const auto& c : golden.at("cases")) words += c.at("text").get<std::string>() + " ";
  test::ServerProcess server({"--model", model_path(*models), "--slots", "8"});

  auto prompt_at = [&](int k) { return words.substr(static_cast<size_t>(k) * 13, 20 + static_cast<size_t>(k % 7) * 9); };
  // The ten that hang up ask for ignore_eos: a request that reached its end of text before its
  // client's thread got round to closing (a loaded machine) would finish as "stop", not "abort".
  std::vector<std::string> bodies;
  for (int i = 0; i < 32; ++i) {
    json body{{"prompt", prompt_at(i)}, {"max_tokens", i < 10 ? 400 : 30 + i * 3}, {"temperature", 0}, {"stream", true}};
    if (i < 10) body["ignore_eos"] = true;
    bodies.push_back(body.dump());
  }
  std::vector<std::string> alone(bodies.size());
  for (size_t i = 10; i < bodies.size(); ++i) {
    const auto reply = test::http_call(server.port(), "POST", "/v1/completions", bodies[i]);
    REQUIRE(reply.status == 200);
    alone[i] = streamed_text(reply.body, false);
  }

  // The clients run on their own threads; assertions stay on this one.
  std::vector<std::future<std::string>> together;
  for (size_t i = 0; i < bodies.size(); ++i)
    together.push_back(std::async(std::launch::async, [&, i] {
      if (i < 10) {
        test::read_then_hang_up(server.port(), "/v1/completions", bodies[i], 2);
        return std::string();
      }
      return test::http_call(server.port(), "POST", "/v1/completions", bodies[i]).body;
    }));
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string body = together[i].get();
    INFO("client " << i);
    if (i >= 10) CHECK(streamed_text(body, false) == alone[i]);
  }

  // Every hung-up request is cancelled and every slot free again.
  double running = -1.0, usage = -1.0, waiting = -1.0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string metrics = test::http_call(server.port(), "GET", "/metrics").body;
    running = metric_sample(metrics, "snapstream:num_requests_running");
    waiting = metric_sample(metrics, "snapstream:num_requests_waiting");
    usage = metric_sample(metrics, "snapstream:kv_cache_usage_perc");
    if (running == 0.0 && waiting == 0.0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(running == 0.0);
  CHECK(waiting == 0.0);
  CHECK(usage == 0.0);
  const std::string metrics = test::http_call(server.port(), "GET", "/metrics").body;
  const double aborted = metric_sample(metrics, "snapstream:request_success_total", "finished_reason=\"abort\"");
  WARN("requests the server aborted because their clients hung up: " << aborted << " of 10");
  CHECK(aborted == 10.0);
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}

TEST_CASE("the official openai npm client works against the server", "[e2e][server][openai]") {
  const auto models = test::models_dir_or_skip();
  const auto clients = test::node_clients_or_skip();
  if (!models || !clients) return;
  test::ServerProcess server({"--model", model_path(*models), "--api-key", "k3y"});
  const auto result = test::run_command("node " + shell_quote((*clients / "openai_client.mjs").string()) + " " + server.url() +
                                        " stories260K k3y");
  INFO(result.err << server.log());
  REQUIRE(result.exit_code == 0);
  const auto out = json::parse(result.out);
  const std::string text = out.at("completion_text");
  CHECK(!text.empty());
  CHECK(out.at("completion_finish") == "length");
  CHECK(out.at("completion_usage").at("completion_tokens") == 24);
  CHECK(out.at("completion_streamed") == text);
  CHECK(out.at("completion_stream_usage").at("total_tokens") == 24 + 5);
  CHECK(out.at("chat_role") == "assistant");
  CHECK(!out.at("chat_text").get<std::string>().empty());
  CHECK(out.at("chat_streamed") == out.at("chat_text"));
  // The greedy story names Lily early on: the text stops before her name, which is not returned.
  CHECK(out.at("stop_finish") == "stop");
  CHECK(out.at("stop_text").get<std::string>().find("Lily") == std::string::npos);
  CHECK(text.rfind(out.at("stop_text").get<std::string>(), 0) == 0);
  CHECK(out.at("seed_a") == out.at("seed_b"));
  CHECK(out.at("seed_a") != out.at("seed_c"));
  CHECK(out.at("n_indices") == json::array({0, 1, 2}));
  CHECK(out.at("n_first") == out.at("n_single"));
  CHECK(out.at("retrieved") == "stories260K");
  CHECK(out.at("error_status") == 404);
  CHECK(out.at("auth_status") == 401);
  CHECK(out.at("models") == json::array({"stories260K"}));
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}
