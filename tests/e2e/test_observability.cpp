// Observability of a running server: Debian's Prometheus scrapes it with the deployment's own
// config, and every Grafana dashboard query is valid PromQL, reads only metrics the server
// exposes, and returns data once a request has been served.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/child_process.h"
#include "tests/support/http_client.h"
#include "tests/support/promql_names.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using json = nlohmann::json;

namespace {

struct DashboardQuery {
  std::string where;  // "file: panel"
  std::string expr;
};

// Every query of the provisioned dashboards: panel targets, and the metric of each
// `label_values(metric, label)` template variable.
std::vector<DashboardQuery> dashboard_queries() {
  std::vector<DashboardQuery> queries;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "docker" / "grafana" / "dashboards")) {
    if (entry.path().extension() != ".json") continue;
    const std::string file = entry.path().filename().string();
    std::ifstream in(entry.path());
    const json board = json::parse(in);
    for (const json& panel : board.at("panels"))
      for (const json& target : panel.at("targets")) queries.push_back({file + ": " + panel.at("title").get<std::string>(), target.at("expr")});
    for (const json& variable : board.at("templating").at("list")) {
      const std::string query = variable.at("query").at("query");
      const size_t open = query.find("label_values(");
      REQUIRE(open == 0);
      queries.push_back({file + ": variable " + variable.at("name").get<std::string>(), query.substr(13, query.find(',') - 13)});
    }
  }
  return queries;
}

// Grafana's variables as the dashboards' defaults resolve them.
std::string resolved(std::string expr) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"$__rate_interval", "1m"}, {"$model_name", ".*"}}) {
    for (size_t at = expr.find(from); at != std::string::npos; at = expr.find(from)) expr.replace(at, from.size(), to);
  }
  return expr;
}

std::set<std::string> exposed_names(const std::string& metrics) {
  std::set<std::string> names;
  std::istringstream lines(metrics);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] != '#') names.insert(line.substr(0, line.find_first_of("{ ")));
  return names;
}

std::string url_encoded(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

json prometheus_query(int port, const std::string& expr) {
  const auto reply = test::http_call(port, "GET", "/api/v1/query?query=" + url_encoded(expr));
  return json::parse(reply.body);
}

// Polls `ready` every 250 ms for up to `seconds`.
template <typename Ready>
bool wait_for(double seconds, Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return ready();
}

void serve_one_request(int port) {
  const auto reply = test::http_call(port, "POST", "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 12, "temperature": 0})");
  REQUIRE(reply.status == 200);
}

}  // namespace

TEST_CASE("promql_metric_names finds series names and nothing else", "[e2e][observability]") {
  using Names = std::set<std::string>;
  CHECK(test::promql_metric_names(
            R"(histogram_quantile(0.9, sum by (le) (rate(snapstream:x_bucket{model_name=~"$model_name", a='}'}[$__rate_interval]))))") ==
        Names{"snapstream:x_bucket"});
  CHECK(test::promql_metric_names("sum(rate(a_total[5m] offset 1h)) / on(job) group_left(instance) b or vector(0) > bool 2") ==
        Names{"a_total", "b"});
  CHECK(test::promql_metric_names("max without (tp) (snapstream:emulation_info) * 1e3 + Inf") == Names{"snapstream:emulation_info"});
  CHECK(test::promql_metric_names("sum(${var}) + count(x)") == Names{"x"});
  CHECK_THROWS(test::promql_metric_names(R"(a{b="c})"));
}

TEST_CASE("the server's log has one access line per answered request, probes only at debug", "[e2e][observability]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  for (const std::string level : {"info", "debug"}) {
    test::ServerProcess server({"--model", (*models / "stories260K.gguf").string(), "--log-level", level});
    serve_one_request(server.port());
    CHECK(test::http_call(server.port(), "GET", "/no-such-route").status == 404);
    CHECK(test::http_call(server.port(), "GET", "/health").status == 200);
    CHECK(server.stop() == 0);
    const std::string log = server.log();
    INFO(log);
    CHECK(log.find("\"POST /v1/completions\" 200 ") != std::string::npos);
    CHECK(log.find("\"GET /no-such-route\" 404 ") != std::string::npos);
    CHECK((log.find("\"GET /health\" 200 ") != std::string::npos) == (level == "debug"));
  }
}

TEST_CASE("every metric the dashboards query is exposed by the running server", "[e2e][observability]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", (*models / "stories260K.gguf").string()});
  serve_one_request(server.port());
  const std::set<std::string> exposed = exposed_names(test::http_call(server.port(), "GET", "/metrics").body);
  REQUIRE(exposed.count("snapstream:generation_tokens_total") == 1);
  const auto queries = dashboard_queries();
  CHECK(queries.size() >= 40);
  std::set<std::string> used;
  for (const auto& query : queries) {
    const auto names = test::promql_metric_names(query.expr);
    INFO(query.where << ": " << query.expr);
    CHECK_FALSE(names.empty());
    for (const auto& name : names) {
      INFO("metric " << name);
      CHECK(exposed.count(name) == 1);
      used.insert(name);
    }
  }
  // The issue's list, each on some panel.
  for (const char* name : {"snapstream:time_to_first_token_seconds_bucket", "snapstream:inter_token_latency_seconds_bucket",
                           "snapstream:e2e_request_latency_seconds_bucket", "snapstream:request_queue_time_seconds_bucket",
                           "snapstream:request_success_total", "snapstream:num_requests_running", "snapstream:num_requests_waiting",
                           "snapstream:prompt_tokens_total", "snapstream:generation_tokens_total", "snapstream:kv_cache_bytes_held",
                           "snapstream:kv_cache_bytes_full_equivalent", "snapstream:kv_cache_compression_ratio",
                           "snapstream:kv_cache_evicted_tokens_total", "snapstream:kv_cache_usage_perc", "snapstream:emulated_sram_bytes_held",
                           "snapstream:emulated_hbm_bytes_held", "snapstream:emulated_pcu_utilisation", "snapstream:emulated_pmu_utilisation",
                           "snapstream:emulated_time_to_first_token_seconds_bucket", "snapstream:emulated_device_seconds_total"}) {
    INFO(name);
    CHECK(used.count(name) == 1);
  }
}

TEST_CASE("Prometheus scrapes the server with the deployment's config and every dashboard query returns data", "[e2e][observability]") {
  const auto models = test::models_dir_or_skip();
  if (!models || !test::tool_or_skip("prometheus")) return;
  test::ServerProcess server({"--model", (*models / "stories260K.gguf").string()});

  test::TempDir dir;
  std::string config = test::read_text(test::source_dir() / "docker" / "prometheus.yml");
  const size_t target = config.find("server:8000");
  REQUIRE(target != std::string::npos);
  config.replace(target, 11, "127.0.0.1:" + std::to_string(server.port()));
  std::ofstream(dir / "prometheus.yml") << config;
  const int port = test::free_port();
  const std::string program = test::run_command("command -v prometheus").out;
  test::ChildProcess prometheus({program.substr(0, program.find('\n')), "--config.file=" + (dir / "prometheus.yml").string(),
                                 "--storage.tsdb.path=" + (dir / "data").string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                                dir / "prometheus.log");
  INFO("prometheus log:\n" << prometheus.log());

  std::string health;
  const bool up = wait_for(60, [&] {
    if (!prometheus.running()) return false;
    try {
      const json targets = json::parse(test::http_call(port, "GET", "/api/v1/targets").body).at("data").at("activeTargets");
      health = targets.empty() ? "" : targets[0].at("health").get<std::string>();
    } catch (const std::exception&) {
      health = "";  // not listening yet
    }
    return health == "up";
  });
  INFO("target health: " << health << "\n" << prometheus.log());
  REQUIRE(up);

  auto generated = [&] {
    const json result = prometheus_query(port, "sum(snapstream:generation_tokens_total)").at("data").at("result");
    return result.empty() ? -1.0 : std::stod(result[0].at("value")[1].get<std::string>());
  };
  double before = -1;
  REQUIRE(wait_for(20, [&] { return (before = generated()) >= 0; }));
  serve_one_request(server.port());
  double after = before;
  CHECK(wait_for(30, [&] { return (after = generated()) >= before + 12; }));
  INFO("generation tokens before " << before << ", after " << after);
  CHECK(after == before + 12);

  // Two more scrapes give every rate() window two samples that include the request.
  std::vector<DashboardQuery> empty;
  const auto queries = dashboard_queries();
  wait_for(30, [&] {
    empty.clear();
    for (const auto& query : queries) {
      const json reply = prometheus_query(port, resolved(query.expr));
      INFO(query.where << ": " << resolved(query.expr) << " -> " << reply.dump());
      REQUIRE(reply.at("status") == "success");
      if (reply.at("data").at("result").empty()) empty.push_back(query);
    }
    return empty.empty();
  });
  for (const auto& query : empty) {
    INFO(query.where << ": " << query.expr);
    CHECK(false);  // no data after a request
  }
  CHECK(prometheus.stop() == 0);
}
