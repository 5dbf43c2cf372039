#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "controller/report/insights.hpp"
#include "insight_util.hpp"

using namespace convoy::controller;

namespace {

ErrorGroupView err(int64_t code, std::string type, std::string message, int64_t count = 3) {
  ErrorGroupView g;
  g.code = code;
  g.type = std::move(type);
  g.message = std::move(message);
  g.count = count;
  g.example_correlation_ids = {"corr-1", "corr-2"};
  return g;
}

InsightInputs with_errors(std::vector<ErrorGroupView> errors) {
  InsightInputs in;
  in.target_url = "http://127.0.0.1:8000";
  in.model = "m";
  in.api_key_env = "OPENAI_API_KEY";
  in.total_requests = 100;
  in.errors = std::move(errors);
  return in;
}

std::vector<std::string> ids(const std::vector<Insight>& insights) {
  std::vector<std::string> out;
  for (const auto& i : insights) out.push_back(i.id);
  return out;
}

bool mentions(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

const char* kBindRejected =
    "Failed to deserialize the JSON body into the target type: nvext.session_control.action: "
    "unknown variant `bind`, expected `open` or `close` at line 1 column 212";
const char* kSessionControlRemoved =
    "Failed to deserialize the JSON body into the target type: nvext: unknown field "
    "`session_control`, expected one of `ignore_eos`, `top_k` at line 1 column 190";

}  // namespace

TEST_CASE("no errors and no cache signal: no insights") {
  InsightInputs in;
  CHECK(detect_insights(in).empty());
  CHECK(insights_to_json(detect_insights(in)) == "[]");
  std::ostringstream out;
  print_insights(out, {});
  CHECK(out.str().empty());
}

TEST_CASE("insight (a): a 400 rejecting action bind") {
  SUBCASE("positive: Dynamo v1.1/v1.2's message") {
    auto found = detect_insights(with_errors({err(400, "Bad Request", kBindRejected, 12)}));
    const Insight* i = convoy::test::find_insight(found, "session_control_bind_unsupported");
    REQUIRE(i);
    CHECK(i->title == "Unsupported Dynamo session_control action: bind");
    CHECK(i->severity == "error");
    CHECK(i->affected_requests == 12);
    CHECK(i->problem.find("unknown variant `bind`") != std::string::npos);
    CHECK(mentions(i->fixes, "session_routing.mode: legacy"));
    CHECK(mentions(i->fixes, "v1.1/v1.2"));
    CHECK(mentions(i->fixes, "session_routing.mode: header"));
    CHECK(mentions(i->fixes, "v1.3 and later"));
    CHECK(i->example_correlation_ids == std::vector<std::string>{"corr-1", "corr-2"});
    CHECK(found.size() == 1);
  }
  SUBCASE("negative: another unknown variant, or not a client error") {
    CHECK(convoy::test::find_insight(
              detect_insights(
                  with_errors({err(400, "Bad Request", "unknown variant `pin`, expected `open`")})),
              "session_control_bind_unsupported") == nullptr);
    CHECK(detect_insights(with_errors({err(500, "Internal", kBindRejected)})).empty());
    CHECK(detect_insights(with_errors({err(400, "Bad Request", "bind failed")})).empty());
  }
}

TEST_CASE("insight (b): a Dynamo that removed body session control") {
  SUBCASE("positive") {
    auto found = detect_insights(with_errors({err(400, "Bad Request", kSessionControlRemoved)}));
    REQUIRE(ids(found) == std::vector<std::string>{"session_control_removed"});
    const Insight& i = found[0];
    CHECK(mentions(i.fixes, "session_routing.mode: header"));
    CHECK(mentions(i.fixes, "--router-session-affinity-ttl-secs"));
  }
  SUBCASE("negative: another unknown field") {
    CHECK(detect_insights(with_errors({err(400, "Bad Request", "unknown field `top_q`")})).empty());
  }
}

TEST_CASE("insight (c): legacy mode with near-zero later-turn cache hits") {
  InsightInputs in;
  in.session_routing_mode = convoy::proto::SessionRoutingMode::kLegacy;
  in.later_turn_requests = 100;
  in.later_turn_prompt_tokens = 100'000;
  in.later_turn_cached_tokens = 64;
  in.later_turn_requests_reporting_cached = 100;
  SUBCASE("positive") {
    auto found = detect_insights(in);
    const Insight* i = convoy::test::find_insight(found, "legacy_affinity_ineffective");
    REQUIRE(i);
    CHECK(i->severity == "warning");
    CHECK(i->problem.find("0.06%") != std::string::npos);
    CHECK(mentions(i->likely_causes, "session"));
    CHECK(mentions(i->fixes, "SGLang"));
    CHECK(mentions(i->fixes, "mode: bind"));
    CHECK(mentions(i->fixes, "mode: header"));
  }
  SUBCASE("negative: caching works") {
    in.later_turn_cached_tokens = 60'000;
    CHECK(detect_insights(in).empty());
  }
  SUBCASE("negative: the server does not report cached_tokens") {
    in.later_turn_cached_tokens = 0;
    in.later_turn_requests_reporting_cached = 0;
    CHECK(detect_insights(in).empty());
  }
  SUBCASE("negative: too few later turns to tell") {
    in.later_turn_requests_reporting_cached = kMinLaterTurnsForCacheInsight - 1;
    CHECK(detect_insights(in).empty());
  }
  SUBCASE("negative: other modes say nothing about legacy") {
    in.session_routing_mode = convoy::proto::SessionRoutingMode::kBind;
    CHECK(detect_insights(in).empty());
    in.session_routing_mode = convoy::proto::SessionRoutingMode::kOff;
    CHECK(detect_insights(in).empty());
  }
  SUBCASE("header mode gets its own warning naming the frontend flag") {
    in.session_routing_mode = convoy::proto::SessionRoutingMode::kHeader;
    auto found = detect_insights(in);
    REQUIRE(ids(found) == std::vector<std::string>{"header_affinity_ineffective"});
    CHECK(mentions(found[0].fixes, "--router-session-affinity-ttl-secs"));
  }
}

TEST_CASE("max_tokens / max_completion_tokens rejections point at target.max_completion_tokens") {
  SUBCASE("the server does not know max_completion_tokens") {
    auto in = with_errors({err(400, "BadRequestError",
                               "Unrecognized request argument supplied: max_completion_tokens")});
    in.max_completion_tokens = true;
    auto found = detect_insights(in);
    REQUIRE(ids(found) == std::vector<std::string>{"max_completion_tokens_rejected"});
    CHECK(mentions(found[0].fixes, "target.max_completion_tokens: false"));
    CHECK(mentions(found[0].likely_causes, "is true"));
  }
  SUBCASE("the server wants max_completion_tokens") {
    auto found = detect_insights(with_errors(
        {err(400, "invalid_request_error",
             "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
             "'max_completion_tokens' instead.")}));
    REQUIRE(ids(found) == std::vector<std::string>{"max_tokens_unsupported"});
    CHECK(mentions(found[0].fixes, "target.max_completion_tokens: true"));
  }
  SUBCASE("negative: another max_tokens complaint") {
    CHECK(detect_insights(with_errors({err(400, "Bad Request", "max_tokens must be at least 1")}))
              .empty());
  }
}

TEST_CASE("context length exceeded") {
  SUBCASE("positive: vLLM, SGLang and llama.cpp wording") {
    for (const char* message :
         {"This model's maximum context length is 4096 tokens. However, you requested 5000 "
          "tokens (4000 in the messages, 1000 in the completion).",
          "The input (5000 tokens) is longer than the model's context length (4096 tokens).",
          "the request exceeds the available context size, try increasing it"}) {
      CAPTURE(message);
      auto found = detect_insights(with_errors({err(400, "BadRequestError", message)}));
      REQUIRE(ids(found) == std::vector<std::string>{"context_length_exceeded"});
      CHECK(mentions(found[0].fixes, "dataset.turns.max"));
    }
  }
  SUBCASE("also as a mid-stream error event") {
    auto found = detect_insights(
        with_errors({err(0, "server_error_event", "prompt exceeds max_model_len 2048")}));
    CHECK(ids(found) == std::vector<std::string>{"context_length_exceeded"});
  }
  SUBCASE("negative") {
    CHECK(detect_insights(with_errors({err(400, "Bad Request", "temperature must be >= 0")}))
              .empty());
  }
}

TEST_CASE("model not found lists the models offered") {
  auto in = with_errors({err(404, "NotFoundError", "The model `llama` does not exist.")});
  in.model = "llama";
  SUBCASE("with /v1/models known") {
    in.models_offered = {"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-0.6B"};
    auto found = detect_insights(in);
    REQUIRE(ids(found) == std::vector<std::string>{"model_not_found"});
    CHECK(mentions(found[0].fixes, "meta-llama/Llama-3.1-8B-Instruct, Qwen/Qwen3-0.6B"));
    CHECK(found[0].problem.find("\"llama\"") != std::string::npos);
  }
  SUBCASE("without it, says where to look") {
    auto found = detect_insights(in);
    REQUIRE(found.size() == 1);
    CHECK(mentions(found[0].investigate, "http://127.0.0.1:8000/v1/models"));
  }
  SUBCASE("a 400 naming an unknown model counts too") {
    auto found = detect_insights(with_errors({err(400, "Bad Request", "Model not found: x")}));
    CHECK(ids(found) == std::vector<std::string>{"model_not_found"});
  }
  SUBCASE("negative: a 404 about the path is an endpoint problem") {
    auto found = detect_insights(with_errors({err(404, "Not Found", "Not Found")}));
    CHECK(ids(found) == std::vector<std::string>{"endpoint_not_found"});
  }
}

TEST_CASE("401 and 403 name the api key variable and whether it was set") {
  for (int64_t code : {401, 403}) {
    CAPTURE(code);
    auto in = with_errors({err(code, "Unauthorized", "invalid api key")});
    in.api_key_env = "MY_SERVER_KEY";
    in.api_key_present = false;
    auto found = detect_insights(in);
    REQUIRE(ids(found) == std::vector<std::string>{"unauthorized"});
    CHECK(found[0].problem.find("MY_SERVER_KEY") != std::string::npos);
    CHECK(found[0].problem.find("NOT set") != std::string::npos);
    CHECK(mentions(found[0].fixes, "Export MY_SERVER_KEY"));
    in.api_key_present = true;
    found = detect_insights(in);
    REQUIRE(found.size() == 1);
    CHECK(found[0].problem.find("was set") != std::string::npos);
  }
  SUBCASE("no variable configured") {
    auto in = with_errors({err(401, "Unauthorized", "missing key")});
    in.api_key_env = "";
    CHECK(detect_insights(in)[0].problem.find("no Authorization header") != std::string::npos);
  }
  SUBCASE("negative") {
    CHECK(detect_insights(with_errors({err(500, "Internal", "invalid api key")})).empty());
  }
}

TEST_CASE("429 says lower the load") {
  auto found = detect_insights(with_errors({err(429, "Too Many Requests", "slow down")}));
  REQUIRE(ids(found) == std::vector<std::string>{"rate_limited"});
  CHECK(found[0].severity == "warning");
  CHECK(mentions(found[0].fixes, "load.rate"));
  CHECK(mentions(found[0].fixes, "load.concurrency"));
  CHECK(detect_insights(with_errors({err(503, "Service Unavailable", "slow down")})).empty());
}

TEST_CASE("connection refused") {
  SUBCASE("at start: is the server up at target.url") {
    auto in = with_errors(
        {err(0, "connect", "Failed to connect to 127.0.0.1 port 8000: Connection refused")});
    in.connection_refused_at_start = true;
    auto found = detect_insights(in);
    REQUIRE(ids(found) == std::vector<std::string>{"connection_refused_at_start"});
    CHECK(found[0].title.find("http://127.0.0.1:8000") != std::string::npos);
  }
  SUBCASE("during the run") {
    auto found = detect_insights(
        with_errors({err(0, "connect", "Failed to connect to h port 1: Connection refused")}));
    CHECK(ids(found) == std::vector<std::string>{"connection_refused"});
  }
  SUBCASE("negative: other connect errors and other kinds") {
    CHECK(detect_insights(with_errors({err(0, "connect", "Connection timed out")})).empty());
    CHECK(detect_insights(with_errors({err(0, "stream_disconnected", "Connection refused")}))
              .empty());
  }
}

TEST_CASE("errors come before warnings, groups with zero count are ignored") {
  auto in =
      with_errors({err(429, "Too Many Requests", "x", 50),
                   err(400, "Bad Request", kBindRejected, 2), err(401, "Unauthorized", "no", 0)});
  auto found = detect_insights(in);
  CHECK(ids(found) == std::vector<std::string>{"session_control_bind_unsupported", "rate_limited"});
}

TEST_CASE("insights_to_json writes every field") {
  auto found = detect_insights(with_errors({err(400, "Bad Request", kBindRejected, 4)}));
  rapidjson::Document d;
  d.Parse(insights_to_json(found).c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsArray());
  REQUIRE(d.Size() == 1);
  const auto& i = d[0];
  CHECK(std::string(i["id"].GetString()) == "session_control_bind_unsupported");
  CHECK(std::string(i["severity"].GetString()) == "error");
  CHECK(std::string(i["title"].GetString()) == "Unsupported Dynamo session_control action: bind");
  CHECK(i["problem"].IsString());
  CHECK(i["likely_causes"].Size() > 0);
  CHECK(i["investigate"].Size() > 0);
  CHECK(i["fixes"].Size() > 0);
  CHECK(i["affected_requests"].GetInt64() == 4);
  CHECK(i["example_correlation_ids"].Size() == 2);
}

TEST_CASE("print_insights draws one box per insight, every line the same width") {
  auto in = with_errors({err(400, "Bad Request", kBindRejected), err(429, "T", "x")});
  in.errors[0].message += std::string(300, 'x');  // an unbreakable word longer than a line
  std::ostringstream out;
  print_insights(out, detect_insights(in));
  const std::string text = out.str();
  CHECK(text.find("ERROR: Unsupported Dynamo session_control action: bind") != std::string::npos);
  CHECK(text.find("WARNING: Rate limited") != std::string::npos);
  CHECK(text.find("Fix:") != std::string::npos);
  std::istringstream lines(text);
  std::string line;
  size_t width = 0;
  int count = 0;
  while (std::getline(lines, line)) {
    if (width == 0) width = line.size();
    CHECK(line.size() == width);
    CHECK((line.front() == '|' || line.front() == '+'));
    ++count;
  }
  CHECK(count > 10);
  SUBCASE("an 80-column console gets 80-column boxes") {
    std::ostringstream narrow;
    print_insights(narrow, detect_insights(in), 80);
    std::istringstream narrow_lines(narrow.str());
    while (std::getline(narrow_lines, line)) CHECK(line.size() == 80);
  }
}
