// `snapstream serve`: the OpenAI-compatible HTTP server. It listens at once (answering 503
// while the model loads), then serves until SIGINT or SIGTERM, when it stops accepting, lets
// running requests finish within a grace period, ends the rest with an error event, and exits 0.
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <thread>

#include "app/commands.h"
#include "app/engine_options.h"
#include "app/model_options.h"
#include "app/process_ranks.h"
#include "app/settings_sources.h"
#include "kernels/thread_pool.h"
#include "runtime/engine.h"
#include "server/api/api_server.h"
#include "server/http/http_server.h"

namespace snapstream::app {
namespace {

namespace api = server::api;
namespace http = server::http;

// How long shutdown waits for connections to write their last responses once the engine stopped.
constexpr std::chrono::seconds kFlushLimit{5};

struct ServeArgs {
  ModelFlags model;
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  int64_t slots = 8;
  int64_t max_waiting = 256;
  int io_threads = 2;
  std::string api_key;
  std::string served_model_name;
  uint64_t body_limit = 8u << 20;
  double read_timeout = 30.0;
  int64_t max_connections = 512;
  std::vector<std::string> allowed_origins{"*"};
  double grace_period = 10.0;
  EngineFlags engine;
};

runtime::EngineOptions serve_engine_options(const ServeArgs& args) {
  runtime::EngineOptions options;
  options.slots = args.slots;
  options.max_waiting = args.max_waiting;
  options.cache = args.engine.cache;
  options.graphs = plan_for_this_rank(args.engine.graphs);
  apply_emulation(args.engine, options);
  return options;
}

// --list-graphs: what serving would compile and allocate, without listening.
void list_serve_graphs(const ServeArgs& args) {
  const auto model = load_model_logged(args.model);
  kernels::ThreadPool pool(args.model.threads);
  runtime::Engine engine(*model, pool, serve_engine_options(args));
  std::cout << describe_plan(*model, engine.runner(), engine.cache());
}

// A rank other than 0 under mpirun: the same engine as rank 0's, taking its steps on this
// rank's shard until rank 0 stops serving; no HTTP.
void follow_serving(const ServeArgs& args) {
  // mpirun passes a stop signal to every rank; rank 0 shuts down gracefully and then tells
  // this rank that it is done, so here the signal is left to rank 0.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  const auto model = load_model_logged(args.model);
  kernels::ThreadPool pool(args.model.threads);
  runtime::Engine engine(*model, pool, serve_engine_options(args));
  lead_or_follow(engine.runner(), *model);
}

void run_serve(const ServeArgs& args) {
  if (follows_another_rank()) {
    follow_serving(args);
    return;
  }
  namespace net = boost::asio;
  // The serving objects live on the heap: this frame stays small and plainly aligned.
  const auto io_owner = std::make_unique<net::io_context>();
  net::io_context& io = *io_owner;
  api::ServingHandler handler;
  http::ServerLimits limits;
  limits.body_bytes = args.body_limit;
  limits.read_timeout = std::chrono::milliseconds(static_cast<int64_t>(args.read_timeout * 1000));
  limits.max_connections = args.max_connections;
  limits.allowed_origins = args.allowed_origins;
  if (limits.allowed_origins == std::vector<std::string>{"none"}) limits.allowed_origins.clear();
  const auto server_owner = std::make_unique<http::HttpServer>(
      io, limits, [&handler](const http::Request& request, std::shared_ptr<http::Responder> responder) {
        handler.handle(request, std::move(responder));
      });
  http::HttpServer& server = *server_owner;
  const uint16_t port = server.listen(args.host, args.port);
  spdlog::info("listening on http://{}:{} (503 until the model is loaded)", args.host, port);

  auto stop_owner = std::make_unique<std::promise<int>>();
  std::promise<int>& stop = *stop_owner;
  const auto signals = std::make_unique<net::signal_set>(io, SIGINT, SIGTERM);
  signals->async_wait([&stop](const boost::system::error_code& ec, int signal) {
    if (!ec) stop.set_value(signal);
  });
  std::vector<std::thread> io_threads;
  for (int i = 0; i < std::max(1, args.io_threads); ++i) io_threads.emplace_back([&io] { io.run(); });
  auto stop_io = [&] {
    io.stop();
    for (auto& t : io_threads) t.join();
  };

  try {
    const auto started = std::chrono::steady_clock::now();
    spdlog::info("loading {}", args.model.path);
    const auto model = load_model_logged(args.model);
    const auto pool = std::make_unique<kernels::ThreadPool>(args.model.threads);
    spdlog::info("compiling graphs and allocating the KV cache");
    const auto engine_owner = std::make_unique<runtime::Engine>(*model, *pool, serve_engine_options(args));
    runtime::Engine& engine = *engine_owner;
    lead_or_follow(engine.runner(), *model);
    spdlog::info("{}", describe_plan(*model, engine.runner(), engine.cache()));

    api::ApiOptions api_options{args.served_model_name, args.api_key};
    if (api_options.served_model_name.empty()) api_options.served_model_name = std::filesystem::path(args.model.path).stem().string();
    auto api = std::make_shared<api::ApiServer>(engine, *model, api_options, io.get_executor());
    spdlog::info("chat template: {}{}", api::chat_format_name(api->chat_template().format),
                 model->chat_template.empty() ? " (the model file has none; the plain fallback)"
                 : api->chat_template().format == api::ChatFormat::Plain ? " (the model file's template is not a known family)"
                                                                 : " (from the model file)");
    handler.set_api(api);
    spdlog::info("serving '{}' on http://{}:{} with {} slots, ready in {:.1f} s", api_options.served_model_name, args.host, port,
                 args.slots, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

    const int signal = stop.get_future().get();
    spdlog::info("signal {}: no new connections; {:.0f} s for running requests to finish", signal, args.grace_period);
    server.stop_accepting();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(args.grace_period * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      const runtime::EngineStats stats = engine.stats();
      if (stats.running == 0 && stats.waiting == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    engine.shutdown();  // what is left ends as cancelled: its clients get a final error event
    // Each connection closes once its last bytes are written. A fixed pause could end before a
    // loaded machine wrote them, leaving a client without the response it was promised; a
    // client that stopped reading is not waited for past the limit.
    const auto flush_deadline = std::chrono::steady_clock::now() + kFlushLimit;
    while (server.connections() > 0 && std::chrono::steady_clock::now() < flush_deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (server.connections() > 0)
      spdlog::warn("{} connections still open {:.0f} s after the engine stopped; closing them", server.connections(),
                   std::chrono::duration<double>(kFlushLimit).count());
    server.close_all();
    stop_io();
    handler.set_api(nullptr);
    spdlog::info("stopped");
  } catch (...) {
    server.close_all();
    stop_io();
    throw;
  }
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "serve the OpenAI-compatible HTTP API");
  add_model_options(cmd, args->model);
  cmd->add_option("--host", args->host, "address to listen on");
  cmd->add_option("--port", args->port, "port to listen on (0: any free port, logged)");
  cmd->add_option("--slots", args->slots, "sequences decoded together at most")->check(CLI::PositiveNumber);
  cmd->add_option("--max-waiting", args->max_waiting, "requests queued for a slot at most; more get 429")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--io-threads", args->io_threads, "network threads")->check(CLI::PositiveNumber);
  cmd->add_option("--api-key", args->api_key, "require 'Authorization: Bearer KEY' (not on /health and /metrics)");
  cmd->add_option("--served-model-name", args->served_model_name, "the model name clients use (default: the file's stem)");
  cmd->add_option("--body-limit", args->body_limit, "largest request body in bytes; larger ones get 413")->check(CLI::PositiveNumber);
  cmd->add_option("--read-timeout", args->read_timeout, "seconds to receive a request, and to keep an idle connection")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-connections", args->max_connections, "open connections at most; more get 503")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--allowed-origins", args->allowed_origins,
                  "origins whose browser pages may read responses (CORS), comma-separated: * any, none for no CORS headers")
      ->delimiter(',')
      ->check([](const std::string& origin) { return origin.empty() ? std::string("an empty origin") : std::string(); })
      ->capture_default_str();
  cmd->add_option("--grace-period", args->grace_period, "seconds running requests get to finish on shutdown")
      ->check(CLI::NonNegativeNumber);
  add_engine_options(cmd, args->engine);
  add_emulation_options(cmd, args->engine);
  add_config_option(cmd);
  cmd->callback([args] {
    const auto& origins = args->allowed_origins;
    if (origins.size() > 1 && std::find(origins.begin(), origins.end(), "none") != origins.end())
      throw CLI::ValidationError("--allowed-origins", "'none' turns CORS off and cannot be listed with origins");
    args->engine.list_graphs ? list_serve_graphs(*args) : run_serve(*args);
  });
}

}  // namespace snapstream::app
