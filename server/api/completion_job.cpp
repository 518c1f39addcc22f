// A completion request's life after parsing: engine streams drained into text (stop strings,
// logprobs), metrics observed, and the answer sent as one body or as server-sent events; the
// JSON shapes come from openai_json. All of a job's work runs on its own strand, woken by the
// engine's stream listeners.
#include "server/api/completion_job.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

#include "runtime/text_stream.h"
#include "server/api/api_error.h"
#include "server/api/openai_json.h"
#include "server/http/error_body.h"

namespace snapstream::server::api {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

struct Choice {
  Choice(const runtime::Tokenizer& tokenizer, int64_t prompt_length, std::vector<std::string> stops, int32_t last_prompt_token)
      : prompt_tokens(prompt_length), detokenizer(tokenizer, last_prompt_token, std::move(stops)), previous(last_prompt_token) {}

  std::shared_ptr<runtime::RequestStream> stream;
  int64_t prompt_tokens = 0;
  runtime::TextStream detokenizer;
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
        header_(new_answer_header(request_.endpoint, context.model_name)),
        submitted_(Clock::now()) {}

  // Choice i answers prompt i / n, as OpenAI numbers them; each prefills its own copy.
  void submit() {
    const int64_t sequences = static_cast<int64_t>(request_.prompts.size()) * request_.n;
    // More than the queue holds would be refused however long the client waited: not a 429.
    if (sequences > 1 && sequences > context_.engine.max_waiting())
      throw ApiError(400,
                     "the request asks for " + std::to_string(sequences) + " sequences (prompts x n) at once; this server queues " +
                         std::to_string(context_.engine.max_waiting()) + " at most (--max-waiting)",
                     request_.n > 1 ? "n" : "prompt");
    for (int64_t i = 0; i < sequences; ++i) {
      const std::vector<int32_t>& prompt = prompt_of(static_cast<size_t>(i));
      runtime::SamplingParams sampling = request_.sampling;
      sampling.seed = runtime::choice_seed(sampling.seed, i % request_.n);
      runtime::RequestSpec spec{prompt, request_.max_tokens, sampling, request_.top_logprobs, request_.ignore_eos};
      Choice choice(context_.tokenizer, static_cast<int64_t>(prompt.size()), request_.stop, prompt.back());
      try {
        choice.stream = context_.engine.submit(std::move(spec));
      } catch (const runtime::QueueFullError& e) {
        cancel_all();
        throw ApiError(429, e.what(), "", "queue_full");
      } catch (const runtime::InvalidRequestError& e) {
        cancel_all();
        throw ApiError(400, e.what());
      } catch (const runtime::EngineFailedError& e) {
        // Like /health: this server cannot serve any more, so a balancer should go elsewhere.
        cancel_all();
        throw ApiError(503, e.what(), "", "engine_failed");
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
    // A whole answer without stop strings has nothing to do before the end: no wake-up per token.
    const auto listen_for = request_.stream || !request_.stop.empty() ? runtime::ListenFor::EveryToken : runtime::ListenFor::End;
    for (auto& choice : choices_)
      choice.stream->set_listener([self] { boost::asio::post(self->strand_, [self] { self->drain(); }); }, listen_for);
  }

 private:
  void cancel_all() {
    for (auto& choice : choices_)
      if (choice.stream) choice.stream->cancel();
  }

  // What a streamed answer says before any token: the role (chat), the prompt (echo).
  void send_openings() {
    json choices = json::array();
    for (size_t i = 0; i < choices_.size(); ++i) choices.push_back(opening_choice(header_, i, header_.chat() ? "" : prompt_text(i)));
    send_event(stream_chunk(header_, std::move(choices)));
  }

  const std::vector<int32_t>& prompt_of(size_t choice) const { return request_.prompts[choice / static_cast<size_t>(request_.n)]; }

  std::string prompt_text(size_t choice) const { return runtime::detokenize(context_.tokenizer, prompt_of(choice)); }

  void send_event(const json& payload) { responder_->write("data: " + dump(payload) + "\n\n"); }

  void drain() {
    if (finished_) return;
    json stream_choices = json::array();
    for (size_t i = 0; i < choices_.size(); ++i) {
      Choice& c = choices_[i];
      if (c.done) continue;
      std::string text;
      std::vector<runtime::TokenEvent> events;
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
        const runtime::FinishReason reason = c.stream->finish_reason();
        if (reason == runtime::FinishReason::Error || reason == runtime::FinishReason::Cancelled) {
          finish_choice(c, reason == runtime::FinishReason::Error ? "error" : "abort");
          const std::string message = c.stream->error().empty() ? "the request was cancelled" : c.stream->error();
          fail(reason == runtime::FinishReason::Error ? 500 : 503, message);
          return;
        }
        text += c.detokenizer.finish();
        finish_choice(c, c.detokenizer.stopped() ? "stop" : std::string(runtime::finish_reason_name(reason)));
      }
      const json logprobs = request_.top_logprobs >= 0 && !events.empty()
                                ? logprobs_json(header_, context_.tokenizer, events, first_previous, c.text_offset)
                                : json(nullptr);
      if (!request_.stream) {
        c.text += text;
        if (!logprobs.is_null()) append_logprobs(c.logprobs, logprobs);
        continue;
      }
      if (text.empty() && logprobs.is_null() && !c.done) continue;
      stream_choices.push_back(stream_choice(header_, i, text, logprobs, c.done ? std::optional(c.finish_reason) : std::nullopt));
    }
    if (request_.stream && !stream_choices.empty()) send_event(stream_chunk(header_, std::move(stream_choices)));
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

  // The request's timings on the emulated device's clock; null without one.
  json emulation() const {
    const runtime::StepClock* device = context_.engine.step_clock();
    if (device == nullptr) return nullptr;
    EmulatedTimings timings;
    timings.choices = static_cast<int64_t>(choices_.size());
    for (const auto& c : choices_) {
      timings.submitted = c.stream->device_submitted_at();
      if (c.device_first >= 0 && (timings.first_token < 0 || c.device_first < timings.first_token)) timings.first_token = c.device_first;
      timings.last_token = std::max(timings.last_token, c.device_last);
      timings.tokens += c.generated;
    }
    return emulation_json(device->footprint(), timings);
  }

  json usage() const {
    // Each prompt counts once however many choices it has, as in OpenAI's and vLLM's usage.
    int64_t prompt = 0, completion = 0;
    for (size_t i = 0; i < choices_.size(); ++i) {
      if (i % static_cast<size_t>(request_.n) == 0) prompt += choices_[i].prompt_tokens;
      completion += choices_[i].generated;
    }
    return usage_json(prompt, completion);
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
        json last = stream_chunk(header_, json::array());
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
      const std::string echo = request_.echo && !header_.chat() ? prompt_text(i) : std::string();
      choices.push_back(whole_choice(header_, i, echo + c.text, c.logprobs, c.finish_reason));
    }
    json body = response_body(header_, std::move(choices), usage());
    if (const json e = emulation(); !e.is_null()) body["snapstream_emulation"] = e;
    responder_->send(200, "application/json", dump(body));
  }

  void fail(int status, const std::string& message) {
    finished_ = true;
    cancel_all();
    detach();
    spdlog::warn("request {} failed: {}", header_.id, message);
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
  AnswerHeader header_;
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
