// Settings from a file and the environment: the strict file syntax, the order of precedence
// (command line, environment, file, defaults), and that configs/serve.toml sets every serve option.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "app/commands.h"
#include "app/settings_file.h"
#include "app/settings_sources.h"
#include "runtime/errors.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

std::string error_of(const std::string& text) {
  try {
    app::parse_settings(text, "f.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A small app shaped like the real one: a global option and two subcommands.
struct ToyApp {
  CLI::App app;
  std::string level;
  int64_t slots = 8;
  std::string name;
  bool full = false;
  bool looping = true;
  ToyApp() {
    app.fallthrough();
    app.add_option("--log-level", level);
    CLI::App* serve = app.add_subcommand("serve");
    serve->add_option("--slots", slots);
    serve->add_option("--name", name);
    serve->add_flag("--full-cache", full);
    serve->add_flag("--no-kernel-looping{false}", looping);
    app::add_config_option(serve);
    app.add_subcommand("generate")->add_option("--slots", slots);
  }
  void parse(const std::vector<std::string>& args) {
    const auto expanded = app::expand_settings(app, {"serve", "TOYTEST_"}, args);
    std::vector<std::string> reversed(expanded.rbegin(), expanded.rend() - 1);
    app.parse(reversed);
  }
};

struct ScopedEnv {
  std::string name;
  ScopedEnv(const std::string& n, const std::string& value) : name(n) { setenv(n.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("settings files take strings, numbers, booleans and comments", "[settings]") {
  const auto settings = app::parse_settings(
      "# a comment\n\nmodel = \"/models/a \\\"b\\\".gguf\"  # trailing\nkv-capacity = 1_024\nread-timeout=2.5\n"
      "full-cache = true\napi-key = 'x#y'\r\n",
      "f.toml");
  REQUIRE(settings.size() == 5);
  CHECK(settings[0].name == "model");
  CHECK(settings[0].text == "/models/a \"b\".gguf");
  CHECK(settings[0].line == 3);
  CHECK(settings[1].text == "1024");
  CHECK(settings[1].kind == app::SettingValue::Kind::Number);
  CHECK(settings[2].text == "2.5");
  CHECK(settings[3].kind == app::SettingValue::Kind::Boolean);
  CHECK(settings[4].text == "x#y");
}

TEST_CASE("settings files refuse what they cannot read by line number", "[settings]") {
  using Catch::Contains;
  using Catch::StartsWith;
  CHECK(error_of("a = 1\n[serve]\nb = 2\n") ==
        "f.toml:2: 'serve' is a section or a dotted name: write every setting at the top level as `name = value`");
  CHECK(error_of("a.b = 1\n") == "f.toml:1: 'a' is a section or a dotted name: write every setting at the top level as `name = value`");
  CHECK(error_of("a = 1\nports = [1, 2]\n") == "f.toml:2: 'ports' is an array: write strings in double quotes, numbers, or true/false");
  CHECK(error_of("a = 1979-05-27\n") == "f.toml:1: 'a' is a date: write strings in double quotes, numbers, or true/false");
  CHECK_THAT(error_of("kv-capacity 3\n"), StartsWith("f.toml:1: ") && Contains("expected '='"));
  CHECK_THAT(error_of("a = 1\nb = 2\na = 3\n"), StartsWith("f.toml:3: ") && Contains("redefine") && Contains("'a'"));
  CHECK_THAT(error_of("x = 1\nmodel = \"abc\n"), StartsWith("f.toml:2: ") && Contains("string"));
  CHECK_THAT(error_of("model = /models/x\n"), StartsWith("f.toml:1: ") && Contains("write strings in double quotes, numbers, or true/false"));
  CHECK_THAT(error_of("a = \"\\q\"\n"), StartsWith("f.toml:1: ") && Contains("escape"));
  CHECK_THAT(error_of("a = 1 2\n"), StartsWith("f.toml:1: "));
  CHECK_THAT(error_of("= 1\n"), StartsWith("f.toml:1: "));
  // Found by fuzz_settings_file: TOML's quoted empty names used to pass as settings named "".
  CHECK(error_of("a = 1\n'' = 2\n") == "f.toml:2: an empty name (\"\" or '') is not a setting");
  CHECK(error_of("\"\" = true\n") == "f.toml:1: an empty name (\"\" or '') is not a setting");
}

TEST_CASE("settings come in the file's order with numbers as a command line would spell them", "[settings]") {
  const auto settings = app::parse_settings("zeta = 0.1\nalpha = -3\nmid = 1e3\n", "f.toml");
  REQUIRE(settings.size() == 3);
  CHECK(settings[0].name == "zeta");
  CHECK(settings[0].text == "0.1");
  CHECK(settings[1].name == "alpha");
  CHECK(settings[1].text == "-3");
  CHECK(settings[2].text == "1000");
}

TEST_CASE("the command line wins over the environment which wins over the settings file", "[settings]") {
  test::TempDir dir;
  const std::string file = (dir / "s.toml").string();
  std::ofstream(file) << "slots = 3\nname = \"from-file\"\nfull-cache = true\nno-kernel-looping = true\nlog-level = \"warn\"\n";
  {
    ToyApp toy;
    toy.parse({"prog", "serve", "--config", file});
    CHECK(toy.slots == 3);
    CHECK(toy.name == "from-file");
    CHECK(toy.full);
    CHECK_FALSE(toy.looping);
    CHECK(toy.level == "warn");
  }
  {
    ScopedEnv slots("TOYTEST_SLOTS", "5");
    ScopedEnv name("TOYTEST_NAME", "from-env");
    ScopedEnv full("TOYTEST_FULL_CACHE", "false");
    ScopedEnv empty("TOYTEST_LOG_LEVEL", "");  // empty: unset, so the file's value stays
    ToyApp toy;
    toy.parse({"prog", "serve", "--config=" + file, "--name", "from-line"});
    CHECK(toy.slots == 5);
    CHECK(toy.name == "from-line");
    CHECK_FALSE(toy.full);
    CHECK(toy.level == "warn");
  }
  {
    ScopedEnv config("TOYTEST_CONFIG", file);
    ToyApp toy;
    toy.parse({"prog", "serve"});
    CHECK(toy.slots == 3);
  }
  {
    ScopedEnv slots("TOYTEST_SLOTS", "5");
    ToyApp toy;  // another subcommand: neither the environment nor a file applies
    toy.parse({"prog", "generate", "--slots", "2"});
    CHECK(toy.slots == 2);
  }
}

TEST_CASE("settings that name no option or give a switch a non-boolean are refused", "[settings]") {
  test::TempDir dir;
  const std::string file = (dir / "s.toml").string();
  ToyApp toy;
  std::ofstream(file) << "slots = 3\nslot = 4\n";
  CHECK_THROWS_WITH(toy.parse({"prog", "serve", "--config", file}),
                    Catch::Contains("s.toml:2: 'slot' is not a setting of `snapstream serve`"));
  std::ofstream(file) << "full-cache = 1\n";
  CHECK_THROWS_WITH(toy.parse({"prog", "serve", "--config", file}),
                    Catch::Contains("s.toml:1: 'full-cache' is a switch: write true or false"));
  std::ofstream(file) << "config = \"other.toml\"\n";
  CHECK_THROWS_WITH(toy.parse({"prog", "serve", "--config", file}), Catch::Contains("cannot name another one"));
  CHECK_THROWS_WITH(toy.parse({"prog", "serve", "--config", (dir / "missing.toml").string()}),
                    Catch::Contains("cannot read the settings file"));
  ScopedEnv full("TOYTEST_FULL_CACHE", "maybe");
  CHECK_THROWS_WITH(toy.parse({"prog", "serve"}), "TOYTEST_FULL_CACHE: 'maybe' is not a boolean (true or false)");
}

TEST_CASE("configs/serve.toml sets every serve option and nothing else", "[settings]") {
  CLI::App app;
  char name[] = "snapstream";
  char* argv[] = {name, nullptr};
  app::add_all_commands(app, 1, argv);
  const CLI::App& serve = *app.get_subcommand("serve");
  const auto names = app::setting_names(app, serve);
  const std::set<std::string> options(names.begin(), names.end());
  std::set<std::string> in_file;
  for (const auto& setting : app::read_settings_file(test::configs_dir() / "serve.toml")) in_file.insert(setting.name);
  CHECK(in_file == options);
  CHECK(options.count("model") == 1);
  CHECK(options.count("log-level") == 1);
  CHECK(options.count("kv-capacity") == 1);
  CHECK(app::setting_env_name(app::serve_settings_sources(), "kv-capacity") == "SNAPSTREAM_SERVE_KV_CAPACITY");
}
