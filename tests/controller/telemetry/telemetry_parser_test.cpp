// The Prometheus text / OpenMetrics parser (controller/telemetry/prom_parser.hpp), table-driven.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "controller/telemetry/prom_parser.hpp"

using namespace convoy::telemetry;

namespace {

struct Parsed {
  std::vector<Sample> samples;
  ParseResult result;
  PromParser parser;
};

Parsed parse_text(const std::string& text) {
  Parsed p;
  p.result = p.parser.parse(text, [&](const Sample& s) { p.samples.push_back(s); });
  return p;
}

std::string label(const Sample& s, const std::string& name) {
  for (const auto& l : s.labels) {
    if (l.name == name) return l.value;
  }
  return "<none>";
}

}  // namespace

TEST_CASE("prometheus text: counters, gauges and their HELP and TYPE lines") {
  const auto p = parse_text(
      "# HELP vllm:num_requests_waiting Number of requests waiting.\n"
      "# TYPE vllm:num_requests_waiting gauge\n"
      "vllm:num_requests_waiting{model_name=\"m\",engine=\"0\"} 3.0\n"
      "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n"
      "# TYPE vllm:prompt_tokens_total counter\n"
      "vllm:prompt_tokens_total{model_name=\"m\"} 1.5e+06\n"
      "plain_metric 7\n");
  REQUIRE(p.samples.size() == 3);
  CHECK(p.result.malformed == 0);
  CHECK(p.samples[0].name == "vllm:num_requests_waiting");
  CHECK(p.samples[0].type == MetricType::kGauge);
  CHECK(p.samples[0].value == 3.0);
  CHECK(label(p.samples[0], "engine") == "0");
  CHECK(p.samples[1].type == MetricType::kCounter);
  CHECK(p.samples[1].family == "vllm:prompt_tokens_total");
  CHECK(p.samples[1].value == 1.5e6);
  CHECK(p.samples[2].type == MetricType::kUntyped);
  CHECK(p.parser.families().at("vllm:num_requests_waiting").help == "Number of requests waiting.");
}

TEST_CASE("prometheus text: label values unescape and blanks are tolerated") {
  const auto p = parse_text(
      "m{a=\"x\\\"y\",b=\"back\\\\slash\",c=\"new\\nline\",} 1\n"
      "m { d = \"spaced\" }\t2\n"
      "   m{e=\"\"} 3\r\n"
      "m{f=\"caf\xc3\xa9 ,}\"} 4\n");
  REQUIRE(p.samples.size() == 4);
  CHECK(p.result.malformed == 0);
  CHECK(label(p.samples[0], "a") == "x\"y");
  CHECK(label(p.samples[0], "b") == "back\\slash");
  CHECK(label(p.samples[0], "c") == "new\nline");
  CHECK(label(p.samples[1], "d") == "spaced");
  CHECK(p.samples[1].value == 2);
  CHECK(label(p.samples[2], "e").empty());
  CHECK(label(p.samples[3], "f") == "caf\xc3\xa9 ,}");
}

TEST_CASE("prometheus text: histogram and summary samples get their family and role") {
  const auto p = parse_text(
      "# TYPE ttft_seconds histogram\n"
      "ttft_seconds_bucket{le=\"0.1\"} 1\n"
      "ttft_seconds_bucket{le=\"+Inf\"} 4\n"
      "ttft_seconds_sum 0.9\n"
      "ttft_seconds_count 4\n"
      "# TYPE go_gc_duration_seconds summary\n"
      "go_gc_duration_seconds{quantile=\"0.5\"} 0.001\n"
      "go_gc_duration_seconds_sum 0.5\n"
      "go_gc_duration_seconds_count 12\n"
      "ttft_seconds_total 9\n");  // no such suffix for a histogram: untyped
  REQUIRE(p.samples.size() == 8);
  for (int i = 0; i < 4; ++i) {
    CHECK(p.samples[i].family == "ttft_seconds");
    CHECK(p.samples[i].type == MetricType::kHistogram);
  }
  CHECK(p.samples[0].role == SampleRole::kBucket);
  CHECK(label(p.samples[1], "le") == "+Inf");
  CHECK(p.samples[2].role == SampleRole::kSum);
  CHECK(p.samples[3].role == SampleRole::kCount);
  CHECK(p.samples[4].role == SampleRole::kQuantile);
  CHECK(p.samples[4].type == MetricType::kSummary);
  CHECK(p.samples[5].role == SampleRole::kSum);
  CHECK(p.samples[6].role == SampleRole::kCount);
  CHECK(p.samples[7].type == MetricType::kUntyped);
  CHECK(p.samples[7].family == "ttft_seconds_total");
}

TEST_CASE("prometheus text: NaN, infinities and optional timestamps") {
  const auto p = parse_text(
      "a NaN\n"
      "b +Inf\n"
      "c -Inf 1700000000000\n"
      "d 1.5 -12\n"
      "e inf\n");
  REQUIRE(p.samples.size() == 5);
  CHECK(std::isnan(p.samples[0].value));
  CHECK(std::isinf(p.samples[1].value));
  CHECK(p.samples[1].value > 0);
  CHECK(p.samples[2].value < 0);
  REQUIRE(p.samples[2].timestamp);
  CHECK(*p.samples[2].timestamp == 1.7e12);
  CHECK(*p.samples[3].timestamp == -12);
  CHECK_FALSE(p.samples[0].timestamp);
  CHECK(std::isinf(p.samples[4].value));
}

TEST_CASE("prometheus text: malformed lines are counted and skipped, never fatal") {
  struct Case {
    const char* line;
    const char* why;
  };
  const Case cases[] = {
      {"1metric 1", "a name cannot start with a digit"},
      {"m{a=\"x\" 1", "label set not closed"},
      {"m{a=x} 1", "label value not quoted"},
      {"m{a=\"x\\q\"} 1", "unknown escape"},
      {"m{a=\"x\",a=\"y\"} 1", "duplicate label"},
      {"m{a=\"x} 1", "value not closed"},
      {"m", "no value"},
      {"m abc", "bad value"},
      {"m 1 2 3", "text after the timestamp"},
      {"m 1 x", "bad timestamp"},
      {"m{1a=\"x\"} 1", "bad label name"},
      {"m{a:b=\"x\"} 1", "a colon is not allowed in a label name"},
      {"# TYPE m flavour", "unknown type"},
      {"# TYPE", "TYPE without a name"},
      {"m 0x10", "hex is not a Prometheus number"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.why);
    const auto p = parse_text(std::string("good 1\n") + c.line + "\nalso_good 2\n");
    CHECK(p.result.malformed == 1);
    CHECK(p.samples.size() == 2);
    CHECK(p.result.first_error.rfind("line 2: ", 0) == 0);
  }
  SUBCASE("a bucket without le is malformed") {
    const auto p = parse_text("# TYPE h histogram\nh_bucket{x=\"1\"} 3\n");
    CHECK(p.result.malformed == 1);
    CHECK(p.samples.empty());
  }
  SUBCASE("comments and blank lines are not malformed") {
    const auto p = parse_text("\n# just a comment\n#\n   \n# HELP x some help\nx 1\n");
    CHECK(p.result.malformed == 0);
    CHECK(p.samples.size() == 1);
  }
}

TEST_CASE("openmetrics text: _total counters, UNIT, info, exemplars and the EOF marker") {
  const auto p = parse_text(
      "# TYPE requests counter\n"
      "# UNIT requests requests\n"
      "# HELP requests Requests served \\\"so far\\\".\n"
      "requests_total{code=\"200\"} 10 1700000000.5 # {trace_id=\"abc\"} 1.0 1700000000.1\n"
      "requests_created{code=\"200\"} 1699999999.0\n"
      "# TYPE build info\n"
      "build_info{version=\"1.2\"} 1\n"
      "# EOF\n"
      "after_eof 1\n");
  CHECK(p.result.eof_marker);
  CHECK(p.result.malformed == 0);
  REQUIRE(p.samples.size() == 3);
  CHECK(p.samples[0].family == "requests");
  CHECK(p.samples[0].type == MetricType::kCounter);
  CHECK(p.samples[0].role == SampleRole::kValue);
  CHECK(*p.samples[0].timestamp == 1700000000.5);
  CHECK(p.samples[1].role == SampleRole::kCreated);
  CHECK(p.samples[2].type == MetricType::kInfo);
  CHECK(p.samples[2].family == "build");
  CHECK(p.parser.families().at("requests").unit == "requests");
  CHECK(p.parser.families().at("requests").help == "Requests served \"so far\".");
}

TEST_CASE("prometheus numbers parse as Prometheus parses them") {
  struct Case {
    const char* text;
    std::optional<double> want;  // nullopt: rejected; NaN checked apart
  };
  const Case cases[] = {
      {"0", 0.0},
      {"-1.5", -1.5},
      {"+2", 2.0},
      {"1e3", 1000.0},
      {"1E-3", 0.001},
      {".5", 0.5},
      {"+Inf", INFINITY},
      {"-Inf", -INFINITY},
      {"Inf", INFINITY},
      {"INF", INFINITY},
      {"", std::nullopt},
      {"+", std::nullopt},
      {"1.2.3", std::nullopt},
      {" 1", std::nullopt},
      {"1 ", std::nullopt},
      {"e5", std::nullopt},
      {"1e999", std::nullopt},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const auto got = parse_prom_number(c.text);
    REQUIRE(got.has_value() == c.want.has_value());
    if (got) CHECK(*got == *c.want);
  }
  CHECK(std::isnan(*parse_prom_number("NaN")));
  CHECK(std::isnan(*parse_prom_number("nan")));
}
