// Field-by-field checks of completion requests, with the limits OpenAI and vLLM use.
#include "server/api/completion_request.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "runtime/errors.h"
#include "runtime/prompt_check.h"
#include "server/api/api_error.h"

namespace snapstream::server::api {
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxTopLogprobs = 20;
constexpr size_t kMaxStopStrings = 16;
// OpenAI's own limit on n.
constexpr int64_t kMaxChoices = 128;
// Far beyond any useful penalty (llama.cpp's default is 1.1), but finite, so a typo is refused.
constexpr double kMaxRepetitionPenalty = 100.0;

// Whether the parser below reads `name` on `endpoint`.
bool read_by(std::string_view name, Endpoint endpoint) {
  static constexpr std::string_view kBoth[] = {
      "model", "max_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "frequency_penalty", "presence_penalty",
      "repetition_penalty", "logit_bias", "n", "stop", "logprobs", "response_format", "ignore_eos", "stream",
      "stream_options", "user"};
  static constexpr std::string_view kChat[] = {"messages", "max_completion_tokens", "top_logprobs", "tools", "tool_choice",
                                               "parallel_tool_calls"};
  static constexpr std::string_view kCompletions[] = {"prompt", "echo", "best_of", "suffix"};
  auto in = [&](const auto& names) { return std::find(std::begin(names), std::end(names), name) != std::end(names); };
  return in(kBoth) || (endpoint == Endpoint::Chat ? in(kChat) : in(kCompletions));
}

[[noreturn]] void bad(const std::string& param, const std::string& message) { throw ApiError(400, message, param); }

const json* field(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

int64_t integer(const json& value, const std::string& name, int64_t low, int64_t high) {
  if (!value.is_number_integer()) bad(name, "'" + name + "' must be an integer");
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(high))
    bad(name, "'" + name + "' must be at most " + std::to_string(high));
  const auto v = value.get<int64_t>();
  if (v < low || v > high)
    bad(name, "'" + name + "' must be within " + std::to_string(low) + ".." + std::to_string(high) + ", got " + std::to_string(v));
  return v;
}

double number(const json& value, const std::string& name, double low, double high, bool low_open = false) {
  if (!value.is_number()) bad(name, "'" + name + "' must be a number");
  const double v = value.get<double>();
  if (v > high || v < low || (low_open && v == low))
    bad(name, "'" + name + "' must be within " + (low_open ? "(" : "[") + json(low).dump() + ", " + json(high).dump() + "]");
  return v;
}

bool boolean(const json& value, const std::string& name) {
  if (!value.is_boolean()) bad(name, "'" + name + "' must be true or false");
  return value.get<bool>();
}

std::vector<int32_t> token_ids(const json& array, const std::string& name, const runtime::Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  for (const auto& id : array) ids.push_back(static_cast<int32_t>(integer(id, name, 0, tokenizer.vocab_size() - 1)));
  return ids;
}

std::vector<std::vector<int32_t>> completion_prompts(const json& prompt, const runtime::Tokenizer& tokenizer) {
  // Control tokens written in a prompt ("<|im_start|>") become those tokens, as in llama.cpp's
  // server and vLLM.
  if (prompt.is_string()) return {tokenizer.encode(prompt.get<std::string>(), true, true)};
  if (!prompt.is_array() || prompt.empty())
    bad("prompt", "'prompt' must be a string, an array of strings, or token ids, and not empty");
  if (prompt.front().is_number()) return {token_ids(prompt, "prompt", tokenizer)};
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& item : prompt) {
    if (item.is_string())
      prompts.push_back(tokenizer.encode(item.get<std::string>(), true, true));
    else if (item.is_array() && !item.empty())
      prompts.push_back(token_ids(item, "prompt", tokenizer));
    else
      bad("prompt", "each prompt of an array must be a string or a non-empty array of token ids");
  }
  return prompts;
}

std::string message_text(const json& content, size_t index) {
  const std::string param = "messages[" + std::to_string(index) + "].content";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad(param, "'" + param + "' must be a string or an array of text parts");
  std::string text;
  for (const auto& part : content) {
    const json* type = part.is_object() ? field(part, "type") : nullptr;
    const json* value = part.is_object() ? field(part, "text") : nullptr;
    if (!type || *type != "text" || !value || !value->is_string())
      bad(param, "only text parts ({\"type\": \"text\", \"text\": ...}) are supported in '" + param + "'");
    text += value->get<std::string>();
  }
  return text;
}

std::vector<ChatMessage> chat_messages(const json& messages) {
  if (!messages.is_array()) bad("messages", "'messages' must be an array of {role, content} objects");
  if (messages.empty()) bad("messages", "'messages' must not be empty");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) bad(param, "'" + param + "' must be an object");
    const json* role = field(m, "role");
    if (!role || !role->is_string()) bad(param + ".role", "'" + param + ".role' must be a string");
    std::string name = role->get<std::string>();
    if (name == "developer") name = "system";
    if (name != "system" && name != "user" && name != "assistant")
      bad(param + ".role", "'" + param + ".role' must be system, developer, user or assistant, got '" + name + "'");
    if (const json* speaker = field(m, "name"); speaker && !speaker->is_string()) bad(param + ".name", "'" + param + ".name' must be a string");
    const json* content = field(m, "content");
    if (!content && name != "assistant") bad(param + ".content", "'" + param + ".content' is required");
    out.push_back({name, content ? message_text(*content, i) : std::string()});
  }
  return out;
}

// {"token id": bias} with ids of this vocabulary and biases within OpenAI's [-100, 100].
std::vector<std::pair<int32_t, float>> logit_bias(const json& bias, const runtime::Tokenizer& tokenizer) {
  if (!bias.is_object()) bad("logit_bias", "'logit_bias' must be an object of {\"token id\": bias}");
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, value] : bias.items()) {
    int64_t id = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || error != std::errc() || end != key.data() + key.size() || id < 0 || id >= tokenizer.vocab_size())
      bad("logit_bias", "'logit_bias' keys must be token ids in 0.." + std::to_string(tokenizer.vocab_size() - 1) + ", got '" + key + "'");
    out.emplace_back(static_cast<int32_t>(id), static_cast<float>(number(value, "logit_bias", -100.0, 100.0)));
  }
  return out;
}

// Fields that ask for output this server does not produce (JSON modes, tool calls): refused
// rather than ignored, so a client never takes plain text for what it asked.
void check_response_format(const json& j) {
  if (const json* format = field(j, "response_format")) {
    const json* type = format->is_object() ? field(*format, "type") : nullptr;
    if (!type || !type->is_string()) bad("response_format", "'response_format' must be an object with a string 'type'");
    if (*type != "text") bad("response_format", "'response_format' of type '" + type->get<std::string>() + "' is not supported; only 'text'");
  }
}

void check_chat_tool_fields(const json& j) {
  const json* tools = field(j, "tools");
  if (tools && !tools->is_array()) bad("tools", "'tools' must be an array");
  if (tools && !tools->empty()) bad("tools", "tool calls are not supported");
  if (const json* choice = field(j, "tool_choice"); choice && *choice != "none")
    bad("tool_choice", "'tool_choice' is only allowed with 'tools', which are not supported");
  if (const json* parallel = field(j, "parallel_tool_calls")) boolean(*parallel, "parallel_tool_calls");
}

}  // namespace

json parse_json_object(std::string_view body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    // Not only syntax errors: a number beyond a double (1E400) is refused as out_of_range.
    throw ApiError(400, std::string("the body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ApiError(400, "the body must be a JSON object");
  return j;
}

CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint, const ParseContext& context) {
  const json j = parse_json_object(body);
  const runtime::Tokenizer& tokenizer = context.tokenizer;
  CompletionRequest r;
  r.endpoint = endpoint;

  if (const json* model = field(j, "model")) {
    if (!model->is_string()) bad("model", "'model' must be a string");
    r.model = model->get<std::string>();
  }
  const bool chat = endpoint == Endpoint::Chat;
  if (chat) {
    const json* messages = field(j, "messages");
    if (!messages) bad("messages", "'messages' is required");
    r.prompts = {render_chat(context.chat_template, chat_messages(*messages), tokenizer)};
  } else {
    const json* prompt = field(j, "prompt");
    if (!prompt) bad("prompt", "'prompt' is required");
    r.prompts = completion_prompts(*prompt, tokenizer);
  }
  int64_t longest = 0;
  for (const auto& p : r.prompts) {
    try {
      runtime::check_prompt(p, context.context_length, tokenizer);
    } catch (const runtime::ContextLengthError& e) {
      throw ApiError(400, e.what(), chat ? "messages" : "prompt", "context_length_exceeded");
    } catch (const runtime::InvalidRequestError& e) {
      throw ApiError(400, e.what(), chat ? "messages" : "prompt");
    }
    longest = std::max(longest, static_cast<int64_t>(p.size()));
  }

  const json* max_tokens = chat && field(j, "max_completion_tokens") ? field(j, "max_completion_tokens") : field(j, "max_tokens");
  const std::string max_name = chat && field(j, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  // Without a limit a chat reply may use the rest of the context (as in vLLM); completions
  // default to OpenAI's 16 tokens.
  r.max_tokens = max_tokens ? integer(*max_tokens, max_name, 0, context.context_length)
                            : (chat ? context.context_length - longest : 16);

  r.sampling.temperature = 1.0f;
  if (const json* t = field(j, "temperature")) r.sampling.temperature = static_cast<float>(number(*t, "temperature", 0.0, 2.0));
  if (const json* p = field(j, "top_p")) r.sampling.top_p = static_cast<float>(number(*p, "top_p", 0.0, 1.0, true));
  if (const json* k = field(j, "top_k")) {
    const int64_t top_k = integer(*k, "top_k", -1, tokenizer.vocab_size());
    r.sampling.top_k = top_k < 0 ? 0 : top_k;
  }
  if (const json* seed = field(j, "seed")) {
    r.sampling.seed = static_cast<uint64_t>(
        integer(*seed, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  } else {
    // Drawn from a per-thread generator seeded once: reading the system's entropy source for
    // every request cost more than parsing it.
    static thread_local std::mt19937_64 seeds{(static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()};
    r.sampling.seed = seeds();
  }
  if (const json* penalty = field(j, "frequency_penalty"))
    r.sampling.frequency_penalty = static_cast<float>(number(*penalty, "frequency_penalty", -2.0, 2.0));
  if (const json* penalty = field(j, "presence_penalty"))
    r.sampling.presence_penalty = static_cast<float>(number(*penalty, "presence_penalty", -2.0, 2.0));
  if (const json* penalty = field(j, "repetition_penalty"))
    r.sampling.repetition_penalty = static_cast<float>(number(*penalty, "repetition_penalty", 0.0, kMaxRepetitionPenalty, true));
  if (const json* min_p = field(j, "min_p")) r.sampling.min_p = static_cast<float>(number(*min_p, "min_p", 0.0, 1.0));
  if (const json* bias = field(j, "logit_bias")) r.sampling.logit_bias = logit_bias(*bias, tokenizer);
  if (const json* n = field(j, "n")) r.n = integer(*n, "n", 1, kMaxChoices);
  if (const json* stop = field(j, "stop")) {
    if (stop->is_string()) {
      r.stop = {stop->get<std::string>()};
    } else if (stop->is_array() && stop->size() <= kMaxStopStrings) {
      for (const auto& s : *stop) {
        if (!s.is_string()) bad("stop", "'stop' must be a string or an array of strings");
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      bad("stop", "'stop' must be a string or an array of at most " + std::to_string(kMaxStopStrings) + " strings");
    }
  }
  if (chat) {
    const bool logprobs = field(j, "logprobs") && boolean(*field(j, "logprobs"), "logprobs");
    if (const json* top = field(j, "top_logprobs")) {
      if (!logprobs) bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
      r.top_logprobs = integer(*top, "top_logprobs", 0, kMaxTopLogprobs);
    } else if (logprobs) {
      r.top_logprobs = 0;
    }
  } else {
    if (const json* logprobs = field(j, "logprobs")) r.top_logprobs = integer(*logprobs, "logprobs", 0, kMaxTopLogprobs);
    if (const json* echo = field(j, "echo")) r.echo = boolean(*echo, "echo");
    // OpenAI and vLLM answer this with the prompt's own log-probabilities, which prefill does
    // not compute; logprobs of the completion alone would not line up with the echoed text.
    if (r.echo && r.top_logprobs >= 0)
      bad("echo", "'echo' with 'logprobs' (the prompt's log-probabilities) is not supported; ask for one or the other");
    if (const json* best_of = field(j, "best_of"); best_of && integer(*best_of, "best_of", 1, std::numeric_limits<int32_t>::max()) != 1)
      bad("best_of", "'best_of' greater than 1 is not supported; send the request several times and pick");
    if (const json* suffix = field(j, "suffix")) {
      if (!suffix->is_string()) bad("suffix", "'suffix' must be a string");
      if (!suffix->get<std::string>().empty()) bad("suffix", "'suffix' (insertion) is not supported");
    }
  }
  check_response_format(j);
  if (chat) check_chat_tool_fields(j);
  if (const json* ignore_eos = field(j, "ignore_eos")) r.ignore_eos = boolean(*ignore_eos, "ignore_eos");
  if (const json* stream = field(j, "stream")) r.stream = boolean(*stream, "stream");
  if (const json* options = field(j, "stream_options")) {
    // OpenAI and vLLM refuse options for a stream that was not asked for, rather than ignore them.
    if (!r.stream) bad("stream_options", "'stream_options' is only allowed with \"stream\": true");
    if (!options->is_object()) bad("stream_options", "'stream_options' must be an object");
    if (const json* usage = field(*options, "include_usage")) r.include_usage = boolean(*usage, "stream_options.include_usage");
  }
  if (const json* user = field(j, "user"); user && !user->is_string()) bad("user", "'user' must be a string");
  for (const auto& [name, value] : j.items())
    if (!read_by(name, endpoint)) r.ignored_fields.push_back(name);
  return r;
}

}  // namespace snapstream::server::api
