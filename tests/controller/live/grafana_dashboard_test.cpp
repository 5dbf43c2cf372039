// deploy/grafana/convoy.json, the dashboard for output.metrics_listen: it is a Grafana dashboard
// (classic JSON model: schemaVersion, a datasource variable, panels with targets) and every
// PromQL query in it names only series that convoy's /metrics really serves, taken from a scrape
// of a LiveMetrics fed the way a run feeds it (so a renamed series fails here).
#include <curl/curl.h>
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "controller/live/live_metrics.hpp"
#include "controller/report/metrics.hpp"
#include "test_time.hpp"

using convoy::live::LiveMetrics;

namespace {

size_t dashboard_append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// GET `url` with libcurl: the body ("" when no 200 came within 5 s).
std::string dashboard_scrape(const std::string& url) {
  std::string body;
  long status = 0;
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, dashboard_append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(curl) == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  return status == 200 ? body : "";
}

// Every series name of a Prometheus text exposition (histograms as name_bucket, _sum, _count).
std::set<std::string> exposed_series(const std::string& text) {
  std::set<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line.substr(0, line.find_first_of("{ ")));
  }
  return names;
}

// A LiveMetrics with every series holding a sample, as during a run: one successful streamed
// request, a conversation started and finished, workers, a stage and its target.
std::set<std::string> served_series() {
  LiveMetrics live("127.0.0.1:0", "grafana-test");
  convoy::proto::Record r;
  r.intended_ns = 8 * kMs;
  r.sent_ns = 10 * kMs;
  r.first_token_ns = 60 * kMs;
  r.second_token_ns = 70 * kMs;
  r.last_token_ns = 100 * kMs;
  r.end_ns = 101 * kMs;
  r.output_tokens = 5;
  live.set_stage("measure", "rate", 10);
  auto& worker = live.worker("w1");
  live.on_record(worker, "", r);
  live.set_requests_in_flight(worker, 1);
  live.on_conversation_started();
  live.on_conversation_finished("completed");
  live.set_conversations_in_flight(1);
  live.set_workers("running", 1);
  const std::string text = dashboard_scrape(live.url());
  REQUIRE(!text.empty());
  return exposed_series(text);
}

// The series a PromQL expression names: identifiers outside label matchers ({...}), range
// selectors ([...]), strings and grouping clauses, that are not a function call, a keyword or a
// number.
std::vector<std::string> series_in(std::string expr) {
  static const std::set<std::string> kKeywords = {
      "by",  "without", "on",     "ignoring", "group_left", "group_right", "bool",
      "and", "or",      "unless", "offset",   "inf",        "nan"};
  // Aggregation operators may be followed by a by/without clause before their parenthesis.
  static const std::set<std::string> kAggregations = {
      "sum",    "avg",  "min",     "max",          "count", "stddev",
      "stdvar", "topk", "bottomk", "count_values", "group", "quantile"};
  // Blank out strings, {...} and [...].
  for (const auto& [open, close] :
       {std::pair{'"', '"'}, std::pair{'{', '}'}, std::pair{'[', ']'}}) {
    for (size_t at = expr.find(open); at != std::string::npos; at = expr.find(open, at)) {
      const size_t end = expr.find(close, at + 1);
      REQUIRE_MESSAGE(end != std::string::npos, expr);
      expr.replace(at, end - at + 1, end - at + 1, ' ');
    }
  }
  std::vector<std::string> found;
  for (size_t i = 0; i < expr.size();) {
    const unsigned char c = static_cast<unsigned char>(expr[i]);
    if (!std::isalpha(c) && c != '_' && c != ':') {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[end])) ||
                                 expr[end] == '_' || expr[end] == ':')) {
      ++end;
    }
    const std::string word = expr.substr(i, end - i);
    size_t next = expr.find_first_not_of(' ', end);
    const bool call = next != std::string::npos && expr[next] == '(';
    if (kKeywords.count(word) && call && word != "bool") {
      // by (...), without (...), on (...), ignoring (...): label names, not series.
      end = expr.find(')', next);
      REQUIRE(end != std::string::npos);
      ++end;
    } else if (!call && !kKeywords.count(word) && !kAggregations.count(word)) {
      found.push_back(word);
    }
    i = end;
  }
  return found;
}

rapidjson::Document dashboard() {
  std::ifstream in(std::string(CONVOY_SOURCE_DIR) + "/deploy/grafana/convoy.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document d;
  d.Parse(text.str().c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsObject());
  return d;
}

}  // namespace

TEST_CASE("grafana dashboard: a query parser finds the series and skips the rest") {
  const auto names = series_in(
      "sum by (le, stage) (rate(convoy_x_bucket{job=~\"$job\",outcome!=\"ok\"}[$__rate_interval]))"
      " / on (job) group_left sum(up) and convoy_y > bool 0.5");
  CHECK(names == std::vector<std::string>{"convoy_x_bucket", "up", "convoy_y"});
}

TEST_CASE("grafana dashboard: an importable dashboard whose every query names served series") {
  const rapidjson::Document d = dashboard();
  CHECK(d["schemaVersion"].GetInt() >= 36);  // panel-level datasource objects
  CHECK(std::string(d["uid"].GetString()) == "convoy-live-run");
  // A datasource variable, so that the import asks for the Prometheus to use.
  bool datasource_variable = false;
  std::vector<std::string> queries;
  for (const auto& v : d["templating"]["list"].GetArray()) {
    const std::string type = v["type"].GetString();
    if (type == "datasource") {
      datasource_variable = std::string(v["query"].GetString()) == "prometheus";
    } else if (type == "query") {
      queries.push_back(v["definition"].GetString());
    }
  }
  CHECK(datasource_variable);
  const std::set<std::string> served = served_series();
  CHECK(served.count("convoy_requests_total") == 1);
  int targets = 0;
  std::set<std::string> used;
  for (const auto& panel : d["panels"].GetArray()) {
    REQUIRE(panel.HasMember("gridPos"));
    CHECK(std::string(panel["datasource"]["uid"].GetString()) == "${datasource}");
    for (const auto& t : panel["targets"].GetArray()) {
      ++targets;
      queries.push_back(t["expr"].GetString());
    }
  }
  CHECK(targets >= 10);
  for (const std::string& q : queries) {
    CAPTURE(q);
    // label_values(METRIC, LABEL): the metric is the first argument.
    const std::string expr = q.rfind("label_values(", 0) == 0 ? q.substr(13, q.find(',') - 13) : q;
    const std::vector<std::string> names = series_in(expr);
    CHECK_FALSE(names.empty());
    for (const std::string& name : names) {
      CAPTURE(name);
      CHECK(served.count(name) == 1);
      used.insert(name);
    }
  }
  // The dashboard shows each latency histogram and the request counter.
  for (const char* name :
       {"convoy_requests_total", "convoy_time_to_first_token_seconds_bucket",
        "convoy_inter_token_latency_seconds_bucket", "convoy_request_latency_seconds_bucket"}) {
    CHECK(used.count(name) == 1);
  }
}
