// A completion request's life after parsing: engine streams in, OpenAI-shaped JSON out. All of a
// job's work runs on its own strand, woken by the engine's stream listeners.
#include "server/api/completion_job.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>

#include "runtime/text_stream.h"
#include "server/api/api_error.h"
#include "server/http/error_body.h"

namespace snapstream::server::api {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

std::string request_id(Endpoint endpoint) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = endpoint == Endpoint::Chat ? "chatcmpl-" : "cmpl-";
  for (int i = 0; i < 24; ++i) id += kHex[random() % 16];
  return id;
}

struct Choice {
  Choice(const Tokenizer& tokenizer, int64_t prompt_length, std::vector<std::string> stops, int32_t last_prompt_token)
      : prompt_tokens(prompt_length), detokenizer(tokenizer, last_prompt_token, std::move(stops)), previous(last_prompt_token) {}

  std::shared_ptr<RequestStream> stream;
  int64_t prompt_tokens = 0;
  TextStream detokenizer;
  int32_t previous = -1;     // the last token, for the bytes logprobs report
  std::string text;          // everything, for a non-streamed answer
  json logprobs = nullptr;   // likewise
  int64_t generated = 0;
  int64_t text_offset = 0;   // completions logprobs: where the next token's text starts
  bool done = false;
  std::string finish_reason;
  Clock::time_point first_token{}, last_token{};
  double device_first = -1.0, device_last = -1.0;  // the emulated device's clock at those tokens
};

class Job : public std::enable_shared_from_this<Job> {
 public:
  Job(const JobContext& context, CompletionRequest request, std::shared_ptr<http::Responder> responder)
      : context_(context),
        request_(std::move(request)),
        responder_(std::move(responder)),
        strand_(boost::asio::make_strand(context.executor)),
        id_(request_id(request_.endpoint)),
        created_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()),
        submitted_(Clock::now()) {}

  void submit() {
    for (const auto& prompt : request_.prompts) {
      RequestSpec spec{prompt, request_.max_tokens, request_.sampling, request_.stop_ids, request_.top_logprobs};
      Choice choice(context_.tokenizer, static_cast<int64_t>(prompt.size()), request_.stop, prompt.back());
      if (request_.echo) choice.text_offset = static_cast<int64_t>(prompt_text(choices_.size()).size());
      try {
        choice.stream = context_.engine.submit(std::move(spec));
      } catch (const QueueFullError& e) {
        cancel_all();
        throw ApiError(429, e.what(), "", "queue_full");
      } catch (const InvalidRequestError& e) {
        cancel_all();
        throw ApiError(400, e.what());
      } catch (const EngineFailedError& e) {
        cancel_all();
        throw ApiError(500, e.what());
      }
      choices_.push_back(std::move(choice));
    }
  }

  void attach() {
    auto self = shared_from_this();
    responder_->on_disconnect([self] { self->cancel_all(); });
    if (request_.stream) {
      responder_->begin_stream(200, "text/event-stream");
      if (request_.echo || request_.endpoint == Endpoint::Chat) send_openings();
    }
    for (auto& choice : choices_)
      choice.stream->set_listener([self] { boost::asio::post(self->strand_, [self] { self->drain(); }); });
  }

 private:
  bool chat() const { return request_.endpoint == Endpoint::Chat; }

  void cancel_all() {
    for (auto& choice : choices_)
      if (choice.stream) choice.stream->cancel();
  }

  // What a streamed answer says before any token: the role (chat), the prompt (echo).
  void send_openings() {
    json choices = json::array();
    for (size_t i = 0; i < choices_.size(); ++i) {
      if (chat())
        choices.push_back({{"index", i}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}});
      else
        choices.push_back({{"index", i}, {"text", prompt_text(i)}, {"logprobs", nullptr}, {"finish_reason", nullptr}});
    }
    send_event(chunk(std::move(choices)));
  }

  std::string prompt_text(size_t i) const { return detokenize(context_.tokenizer, request_.prompts[i]); }

  json chunk(json choices) const {
    return {{"id", id_},
            {"object", chat() ? "chat.completion.chunk" : "text_completion"},
            {"created", created_},
            {"model", context_.model_name},
            {"choices", std::move(choices)}};
  }

  void send_event(const json& payload) { responder_->write("data: " + dump(payload) + "\n\n"); }

  json token_logprobs(const std::vector<TokenEvent>& events, int32_t previous, int64_t& text_offset) const {
    // Chat: {"content": [{token, logprob, bytes, top_logprobs}]}; completions: parallel arrays.
    const Tokenizer& tok = context_.tokenizer;
    auto bytes_of = [](const std::string& s) {
      json b = json::array();
      for (const unsigned char c : s) b.push_back(c);
      return b;
    };
    if (chat()) {
      json content = json::array();
      for (const auto& e : events) {
        const std::string token = tok.token_bytes(e.id, previous);
        json top = json::array();
        for (const auto& t : e.top) {
          const std::string alt = tok.token_bytes(t.id, previous);
          top.push_back({{"token", alt}, {"logprob", t.logprob}, {"bytes", bytes_of(alt)}});
        }
        content.push_back({{"token", token}, {"logprob", e.logprob}, {"bytes", bytes_of(token)}, {"top_logprobs", top}});
        previous = e.id;
      }
      return {{"content", content}};
    }
    json tokens = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
    for (const auto& e : events) {
      const std::string token = tok.token_bytes(e.id, previous);
      tokens.push_back(token);
      offsets.push_back(text_offset);
      text_offset += static_cast<int64_t>(token.size());
      values.push_back(e.logprob);
      json top = json::object();
      for (const auto& t : e.top) top[tok.token_bytes(t.id, previous)] = t.logprob;
      tops.push_back(top);
      previous = e.id;
    }
    return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
  }

  static void merge_logprobs(json& into, const json& more) {
    if (into.is_null()) {
      into = more;
      return;
    }
    for (auto& [key, value] : more.items())
      for (const auto& item : value) into[key].push_back(item);
  }

  void drain() {
    if (finished_) return;
    json stream_choices = json::array();
    for (size_t i = 0; i < choices_.size(); ++i) {
      Choice& c = choices_[i];
      if (c.done) continue;
      std::string text;
      std::vector<TokenEvent> events;
      const int32_t first_previous = c.previous;
      while (!c.detokenizer.stopped()) {
        auto event = c.stream->next_event(std::chrono::milliseconds(0));
        if (!event) break;
        if (c.generated == 0) c.first_token = event->at;
        else context_.metrics.inter_token(seconds(c.last_token, event->at));
        c.last_token = event->at;
        if (event->device_at >= 0.0) {
          if (c.generated == 0) {
            c.device_first = event->device_at;
            context_.metrics.emulated_first_token(event->device_at - c.stream->device_submitted_at());
          } else {
            context_.metrics.emulated_inter_token(event->device_at - c.device_last);
          }
          c.device_last = event->device_at;
        }
        ++c.generated;
        text += c.detokenizer.push(event->id);
        c.previous = event->id;
        events.push_back(std::move(*event));
      }
      if (c.detokenizer.stopped()) {
        c.stream->cancel();
        finish_choice(c, "stop");
      } else if (c.stream->finished()) {
        const FinishReason reason = c.stream->finish_reason();
        if (reason == FinishReason::Error || reason == FinishReason::Cancelled) {
          finish_choice(c, reason == FinishReason::Error ? "error" : "abort");
          const std::string message = c.stream->error().empty() ? "the request was cancelled" : c.stream->error();
          fail(reason == FinishReason::Error ? 500 : 503, message);
          return;
        }
        text += c.detokenizer.finish();
        finish_choice(c, c.detokenizer.stopped() ? "stop" : std::string(finish_reason_name(reason)));
      }
      const json logprobs = request_.top_logprobs >= 0 && !events.empty() ? token_logprobs(events, first_previous, c.text_offset) : json(nullptr);
      if (!request_.stream) {
        c.text += text;
        if (!logprobs.is_null()) merge_logprobs(c.logprobs, logprobs);
        continue;
      }
      if (text.empty() && logprobs.is_null() && !c.done) continue;
      json choice = {{"index", i}, {"logprobs", logprobs}, {"finish_reason", c.done ? json(c.finish_reason) : json(nullptr)}};
      if (chat())
        choice["delta"] = text.empty() ? json::object() : json{{"content", text}};
      else
        choice["text"] = text;
      stream_choices.push_back(std::move(choice));
    }
    if (request_.stream && !stream_choices.empty()) send_event(chunk(std::move(stream_choices)));
    if (std::all_of(choices_.begin(), choices_.end(), [](const Choice& c) { return c.done; })) complete();
  }

  void finish_choice(Choice& c, std::string reason) {
    c.done = true;
    c.finish_reason = std::move(reason);
    const auto admitted = c.stream->admitted_at().value_or(submitted_);
    const Clock::time_point end = c.generated > 0 ? c.last_token : Clock::now();
    context_.metrics.request_finished(c.finish_reason, c.prompt_tokens, c.generated, seconds(submitted_, admitted),
                                      c.generated > 0 ? seconds(submitted_, c.first_token) : -1.0, seconds(submitted_, end));
  }

  // The request's timings on the emulated device's clock, and what that device is; null
  // without one. A proxy says so: the timings are another model's, the text this one's.
  json emulation() const {
    const StepClock* device = context_.engine.step_clock();
    if (device == nullptr) return nullptr;
    const EmulatedFootprint& f = device->footprint();
    json e = {{"device", f.description}, {"system", f.system}, {"proxy", f.proxy}, {"tp", f.tp}};
    if (f.proxy) e["priced_as_model"] = f.model;
    double submitted = -1, first = -1, last = -1;
    int64_t tokens = 0;
    for (const auto& c : choices_) {
      submitted = c.stream->device_submitted_at();
      if (c.device_first >= 0 && (first < 0 || c.device_first < first)) first = c.device_first;
      last = std::max(last, c.device_last);
      tokens += c.generated;
    }
    if (first >= 0) {
      e["time_to_first_token_seconds"] = first - submitted;
      e["device_seconds"] = last - submitted;
      if (last > first && tokens > 1) e["tokens_per_second"] = static_cast<double>(tokens - static_cast<int64_t>(choices_.size())) / (last - first);
    }
    return e;
  }

  json usage() const {
    int64_t prompt = 0, completion = 0;
    for (const auto& c : choices_) {
      prompt += c.prompt_tokens;
      completion += c.generated;
    }
    return {{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}};
  }

  // The streams hold listeners that hold this job: let go of them once it is over.
  void detach() {
    for (auto& choice : choices_) choice.stream->set_listener(nullptr);
  }

  void complete() {
    finished_ = true;
    detach();
    if (request_.stream) {
      if (request_.include_usage) {
        json last = chunk(json::array());
        last["usage"] = usage();
        if (const json e = emulation(); !e.is_null()) last["snapstream_emulation"] = e;
        send_event(last);
      }
      responder_->write("data: [DONE]\n\n");
      responder_->end_stream();
      return;
    }
    json choices = json::array();
    for (size_t i = 0; i < choices_.size(); ++i) {
      const Choice& c = choices_[i];
      json choice = {{"index", i}, {"logprobs", c.logprobs}, {"finish_reason", c.finish_reason}};
      if (chat())
        choice["message"] = {{"role", "assistant"}, {"content", c.text}};
      else
        choice["text"] = (request_.echo ? prompt_text(i) : std::string()) + c.text;
      choices.push_back(std::move(choice));
    }
    json body = {{"id", id_},
                 {"object", chat() ? "chat.completion" : "text_completion"},
                 {"created", created_},
                 {"model", context_.model_name},
                 {"choices", choices},
                 {"usage", usage()}};
    if (const json e = emulation(); !e.is_null()) body["snapstream_emulation"] = e;
    responder_->send(200, "application/json", dump(body));
  }

  void fail(int status, const std::string& message) {
    finished_ = true;
    cancel_all();
    detach();
    spdlog::warn("request {} failed: {}", id_, message);
    if (request_.stream) {
      // Headers are gone already: the error is the stream's last event.
      responder_->write("data: " + http::error_body(status, message) + "\n\n");
      responder_->write("data: [DONE]\n\n");
      responder_->end_stream();
    } else {
      responder_->send(status, "application/json", http::error_body(status, message));
    }
  }

  JobContext context_;
  CompletionRequest request_;
  std::shared_ptr<http::Responder> responder_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  std::string id_;
  int64_t created_;
  Clock::time_point submitted_;
  std::vector<Choice> choices_;
  bool finished_ = false;
};

}  // namespace

void start_completion(const JobContext& context, CompletionRequest request, std::shared_ptr<http::Responder> responder) {
  auto job = std::make_shared<Job>(context, std::move(request), std::move(responder));
  job->submit();
  job->attach();
}

}  // namespace snapstream::server::api
