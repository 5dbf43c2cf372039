// convoy profile's flags: what config they make (through the loader, as a file would), the
// AIPerf spellings, conflicts, errors that name the flag, and --print-config's YAML.
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "controller/cli/profile_command.hpp"

using namespace convoy;
using namespace convoy::controller;

namespace {

// `convoy profile ARGS` parsed as the CLI parses it.
ProfileFlags parsed_profile_flags(std::vector<std::string> args) {
  CLI::App app{"profile"};
  ProfileFlags flags;
  add_profile_flags(&app, flags);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments back to front
  app.parse(args);
  return flags;
}

Config profile_config(const std::vector<std::string>& args, const std::string& model = "m") {
  return load_profile(plan_profile(parsed_profile_flags(args), model));
}

std::string profile_error(const std::vector<std::string>& args) {
  try {
    profile_config(args);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("convoy profile flags make the config a file would") {
  const Config c =
      profile_config({"--url", "localhost:8000", "--concurrency", "8", "--requests", "200", "--isl",
                      "512", "--osl", "128", "--turns", "3", "--no-streaming", "--session-routing",
                      "header", "--endpoint", "completions"},
                     "my-model");
  CHECK(c.target.url == "http://localhost:8000");  // no scheme: http, as AIPerf does
  CHECK(c.target.model == "my-model");
  CHECK(c.target.endpoint == Endpoint::kCompletions);
  CHECK_FALSE(c.target.streaming);
  CHECK(c.load.mode == LoadMode::kConcurrency);
  CHECK(c.load.concurrency == 8);
  CHECK(c.load.requests == int64_t{200});
  CHECK(c.dataset.input_tokens.mean == 512);
  CHECK(c.dataset.input_tokens.stddev == 0);
  CHECK(c.dataset.output_tokens.mean == 128);
  CHECK(c.dataset.turns.mean == 3);
  CHECK(c.dataset.turns.max == 3.0);
  CHECK(c.session_routing.mode == SessionRoutingMode::kHeader);
  CHECK(c.name == "profile");

  SUBCASE("a url with a scheme, and mock, are kept") {
    CHECK(with_scheme("https://h:1/v1") == "https://h:1/v1");
    CHECK(with_scheme("mock") == "mock");
    CHECK(with_scheme("10.0.0.2:8000") == "http://10.0.0.2:8000");
  }
}

TEST_CASE("convoy profile takes AIPerf's spellings of the same flags") {
  const Config c = profile_config({"-u",
                                   "localhost:9000",
                                   "--request-count",
                                   "50",
                                   "--synthetic-input-tokens-mean",
                                   "100",
                                   "--output-tokens-mean",
                                   "20",
                                   "--endpoint-type",
                                   "chat",
                                   "--streaming",
                                   "--benchmark-duration",
                                   "30",
                                   "--conversation-turn-mean",
                                   "2",
                                   "--num-conversations",
                                   "7",
                                   "--random-seed",
                                   "9",
                                   "--arrival-pattern",
                                   "constant",
                                   "--rate",
                                   "3"});
  CHECK(c.target.url == "http://localhost:9000");
  CHECK(c.load.requests == int64_t{50});
  CHECK(c.dataset.input_tokens.mean == 100);
  CHECK(c.dataset.output_tokens.mean == 20);
  CHECK(c.target.streaming);
  CHECK(c.load.duration_s == 30.0);
  CHECK(c.dataset.turns.mean == 2);
  CHECK(c.dataset.conversations == 7);
  CHECK(c.seed == 9u);
  CHECK(c.load.arrival == Arrival::kConstant);
  CHECK(c.load.mode == LoadMode::kRate);
  CHECK(c.load.rate == 3);
  const ProfileFlags m = parsed_profile_flags({"-m", "a", "--url", "x"});
  CHECK(m.model == "a");
  CHECK(parsed_profile_flags({"--model-names", "b"}).model == "b");
  CHECK(parsed_profile_flags({"--artifact-dir", "out"}).output_dir == "out");
  CHECK(parsed_profile_flags({"--num-requests", "4"}).requests == "4");
}

TEST_CASE("convoy profile --request-rate counts requests: load.rate is divided by the turns") {
  const ProfilePlan plan =
      plan_profile(parsed_profile_flags({"--request-rate", "8", "--turns", "4"}), "m");
  const Config c = load_profile(plan);
  CHECK(c.load.mode == LoadMode::kRate);
  CHECK(c.load.rate == 2);
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0].find("load.rate 2 conversations/s") != std::string::npos);

  SUBCASE("single-turn: the same number, nothing to say") {
    const ProfilePlan one =
        plan_profile(parsed_profile_flags({"--request-rate", "8", "--turns", "1"}), "m");
    CHECK(load_profile(one).load.rate == 8);
    CHECK(one.notes.empty());
  }
  SUBCASE("with --concurrency it is the cap, as AIPerf combines them") {
    const Config capped = profile_config({"--request-rate", "4", "--concurrency", "3"});
    CHECK(capped.load.mode == LoadMode::kRate);
    CHECK(capped.load.concurrency == 3);
    CHECK(capped.load.rate == doctest::Approx(4 / DatasetConfig{}.turns.mean));
  }
}

TEST_CASE("convoy profile errors name the flag") {
  CHECK(profile_error({"--concurrency", "abc"}).rfind("--concurrency abc:", 0) == 0);
  CHECK(profile_error({"--isl", "0"}).rfind("--isl 0:", 0) == 0);
  CHECK(profile_error({"--endpoint", "chatt"}).rfind("--endpoint chatt:", 0) == 0);
  CHECK(profile_error({"--endpoint", "chatt"}).find("chat") != std::string::npos);
  CHECK(profile_error({"--session-routing", "sticky"}).rfind("--session-routing sticky:", 0) == 0);
  CHECK(profile_error({"--duration", "0"}).rfind("--duration 0:", 0) == 0);
  const std::string both = profile_error({"--rate", "1", "--request-rate", "2"});
  CHECK(both.find("--rate and --request-rate") != std::string::npos);
  CHECK(profile_error({"--request-rate", "0"}).rfind("--request-rate 0:", 0) == 0);
  // AIPerf's --endpoint is a path; convoy's names the API.
  CHECK(profile_error({"--endpoint", "/v1/chat/completions"}).find("not a path") !=
        std::string::npos);
  CHECK(profile_error({"--set", "load.nope=1"}).rfind("--set load.nope=1:", 0) == 0);
  CHECK_THROWS_AS(parsed_profile_flags({"--concurency", "2"}), CLI::ParseError);
}

TEST_CASE("convoy profile --model a,b lists several models, each drawn per conversation") {
  const Config c = profile_config({"--model", "base,lora-a"}, "base,lora-a");
  REQUIRE(c.target.models.size() == 2);
  CHECK(c.target.models[0].name == "base");
  CHECK(c.target.models[1].name == "lora-a");
  CHECK(c.target.models[1].weight == 1);
  CHECK(c.target.model == "base");
  CHECK(profile_config({"--model", "one"}, "one").target.models.empty());
  try {
    profile_config({"--model", "a,a"}, "a,a");
    FAIL("a duplicate model was accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).rfind("--model a,a:", 0) == 0);
  }
}

TEST_CASE("convoy profile --print-config YAML loads into the same config") {
  const ProfileFlags flags =
      parsed_profile_flags({"--url", "localhost:8000", "--request-rate", "6", "--turns", "3",
                            "--osl", "32", "--no-streaming", "-o", "out"});
  const ProfilePlan plan = plan_profile(flags, "org/model: v2");  // quoting matters
  const std::string yaml = profile_yaml(plan, flags);
  INFO(yaml);
  CHECK(yaml.find("convoy run FILE -o out") != std::string::npos);
  CHECK(yaml.find("# --request-rate 6 requests/s with 3 turns") != std::string::npos);
  const Config from_file = parse_config(yaml, "printed.yaml");
  const Config from_flags = load_profile(plan);
  CHECK(to_yaml(from_file) == to_yaml(from_flags));
  CHECK(from_file.target.model == "org/model: v2");
  CHECK(from_file.load.rate == 2);
  CHECK_FALSE(from_file.target.streaming);
}
