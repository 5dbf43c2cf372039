// convoy's claims about Dynamo checked against the real frontends: what each
// generation answers to the body session-control modes and the insight convoy draws from that
// answer; Dynamo's answer to a session id over 256 bytes; the /metrics families the telemetry
// table calls headline, under their real names; ISL, OSL and cached tokens read from usage equal
// the frontend's own counts. Every assertion reads what the real frontend answered.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "controller/telemetry/known_metrics.hpp"
#include "dynamo/dynamo_stack.hpp"
#include "e2e/http_get.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace convoy::test {
namespace {

constexpr int kConversations = 4;
constexpr int kTurns = 3;
constexpr double kRunTimeoutS = 120;

struct RunSpec {
  std::string mode = "off";         // session_routing.mode
  std::string extra_target;         // more lines under target: (indented two spaces)
  std::vector<std::string> scrape;  // telemetry endpoints, as name=url
};

struct ConvoyRun {
  int exit_code = -1;
  std::string console;
  rapidjson::Document summary;
  std::vector<rapidjson::Document> records;
};

std::string served_model(int port) {
  const auto models = http_get(port, "/v1/models", 10);
  REQUIRE(models.first == 200);
  rapidjson::Document doc;
  doc.Parse(models.second.c_str());
  REQUIRE(doc.IsObject());
  REQUIRE(doc["data"].Size() >= 1);
  return doc["data"][0]["id"].GetString();
}

std::string config_yaml(const DynamoStack& stack, const RunSpec& spec) {
  std::ostringstream y;
  y << "name: dynamo-claims\n"
    << "seed: 11\n"
    << "target:\n  url: " << stack.url() << "\n  model: " << served_model(stack.port()) << "\n"
    << spec.extra_target << "dataset:\n"
    << "  type: synthetic\n"
    << "  conversations: " << kConversations << "\n"
    << "  turns: {mean: " << kTurns << ", stddev: 0, min: " << kTurns << ", max: " << kTurns
    << "}\n"
    << "  input_tokens: {mean: 300, stddev: 0}\n"
    << "  output_tokens: {mean: 6, stddev: 0}\n"
    << "load:\n  mode: concurrency\n  concurrency: " << kConversations << "\n"
    << "session_routing:\n  mode: " << spec.mode << "\n  timeout_s: 60\n"
    << "workers:\n  local: 1\n"
    << "output:\n  html: false\n";
  if (!spec.scrape.empty()) {
    y << "telemetry:\n  interval_s: 0.2\n  timeout_s: 2\n  endpoints:\n";
    for (const std::string& e : spec.scrape) {
      const auto eq = e.find('=');
      y << "    - {name: " << e.substr(0, eq) << ", url: \"" << e.substr(eq + 1) << "\"}\n";
    }
  }
  return y.str();
}

ConvoyRun run_convoy(const DynamoStack& stack, const std::string& name, const RunSpec& spec) {
  const fs::path dir = fresh_dir("dynamo-claims-" + name);
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << config_yaml(stack, spec);
  ConvoyRun r;
  Subprocess run(
      {bin("controller/convoy"), "run", cfg.string(), "-o", (dir / "out").string(), "--quiet"});
  const auto rc = run.wait(kRunTimeoutS);
  r.console = run.output();
  INFO(r.console);
  REQUIRE(rc.has_value());
  r.exit_code = *rc;
  r.summary = read_json(dir / "out" / "summary.json");
  REQUIRE_FALSE(r.summary.HasParseError());
  r.records = read_jsonl(dir / "out" / "records.jsonl");
  return r;
}

// The insight `id`: its problem, causes and fixes as one text; "" when it did not fire.
std::string insight(const ConvoyRun& r, const std::string& id) {
  if (!r.summary.HasMember("insights")) return "";
  for (const auto& i : r.summary["insights"].GetArray()) {
    if (id != i["id"].GetString()) continue;
    std::string text = i["problem"].GetString();
    for (const char* list : {"likely_causes", "fixes"}) {
      for (const auto& f : i[list].GetArray()) text += std::string("\n") + f.GetString();
    }
    return text;
  }
  return "";
}

// Every record failed with `status`, and the server's message (records.jsonl error.message) is
// `message` for all of them.
void all_failed_with(const ConvoyRun& r, int status, const std::string& message) {
  REQUIRE(r.records.size() == kConversations);  // each conversation stops at its failed turn
  for (const auto& rec : r.records) {
    CHECK(rec["http_status"].GetInt() == status);
    CHECK(std::string(rec["error"]["message"].GetString()) == message);
  }
}

// Sum over a family's samples in a Prometheus text (e.g. "dynamo_frontend_output_tokens_total"
// or "..._sum"), and the set of families its # TYPE lines name.
struct Scrape {
  std::map<std::string, double> sums;  // sample name -> sum over label sets
  std::set<std::string> families;
};

Scrape scrape(const std::string& metrics_url) {
  const auto port_at = metrics_url.rfind(':');
  const auto path_at = metrics_url.find('/', port_at);
  const int port = std::stoi(metrics_url.substr(port_at + 1, path_at - port_at - 1));
  const auto res = http_get(port, metrics_url.substr(path_at), 10);
  REQUIRE(res.first == 200);
  Scrape s;
  std::istringstream in(res.second);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      s.families.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const auto name_end = line.find_first_of("{ ");
    const auto value_at = line.rfind(' ');
    s.sums[line.substr(0, name_end)] += std::stod(line.substr(value_at + 1));
  }
  return s;
}

// The families convoy's table marks headline for `source`, each found in `seen` (a family named
// with or without `_total`, as known_metric matches it).
void headline_families_found(const std::set<std::string>& seen, std::string_view source,
                             const std::set<std::string>& expected_absent = {}) {
  for (const auto& k : telemetry::known_metrics()) {
    if (k.source != source) continue;
    const std::string family(k.family);
    if (expected_absent.count(family) != 0) continue;
    INFO("headline family " << family);
    CHECK((seen.count(family) + seen.count(family + "_total")) == 1);
  }
}

// server_metrics in summary.json: the names convoy recorded as headline from `endpoint`.
std::set<std::string> headline_names(const ConvoyRun& r, const std::string& endpoint) {
  std::set<std::string> names;
  REQUIRE(r.summary.HasMember("server_metrics"));
  for (const auto& m : r.summary["server_metrics"]["metrics"].GetArray()) {
    if (endpoint == m["endpoint"].GetString() && m.HasMember("headline") &&
        m["headline"].GetBool()) {
      names.insert(m["name"].GetString());
    }
  }
  return names;
}

bool recorded(const std::set<std::string>& names, const std::string& family) {
  for (const std::string& n : names) {
    if (n == family || n == family + "_total" || n.rfind(family + "_", 0) == 0) return true;
  }
  return false;
}

TEST_CASE("real Dynamo 1.6.1: body session control is refused and the insights say what to use") {
  DynamoOptions options;
  options.version = "1.6.1";
  options.workers = 2;
  options.affinity_ttl_s = 60;
  DynamoStack stack(options, "claims-161");
  CONVOY_REQUIRE_DYNAMO(stack);

  for (const std::string mode : {"bind", "legacy"}) {
    INFO("session_routing.mode " << mode);
    const ConvoyRun r = run_convoy(stack, mode, {mode, "", {}});
    CHECK(r.exit_code == 1);  // no measured request succeeded
    REQUIRE_FALSE(r.records.empty());
    const std::string message = r.records[0]["error"]["message"].GetString();
    CHECK(message.rfind("Failed to deserialize the JSON body into the target type: unknown field "
                        "`session_control`, expected one of `greed_sampling`",
                        0) == 0);
    all_failed_with(r, 400, message);
    const std::string text = insight(r, "session_control_removed");
    CHECK(text.find("unknown field `session_control`") != std::string::npos);
    CHECK(text.find("session_routing.mode: header") != std::string::npos);
    CHECK(text.find("--router-session-affinity-ttl-secs") != std::string::npos);
    CHECK(insight(r, "session_control_bind_unsupported").empty());
  }
}

TEST_CASE("real Dynamo 1.6.1: a session id over 256 bytes is 400 \"Invalid request\", named") {
  DynamoOptions options;
  options.version = "1.6.1";
  options.workers = 2;
  options.affinity_ttl_s = 60;
  DynamoStack stack(options, "claims-161-id");
  CONVOY_REQUIRE_DYNAMO(stack);
  const std::string long_id(300, 'a');
  const ConvoyRun r = run_convoy(
      stack, "long-id", {"off", "  headers: {X-Dynamo-Session-ID: " + long_id + "}\n", {}});
  CHECK(r.exit_code == 1);
  all_failed_with(r, 400, "Invalid request");  // Dynamo's whole answer
  const std::string text = insight(r, "session_id_too_long");
  CHECK(text.find("HTTP 400: \"Invalid request\"") != std::string::npos);
  CHECK(text.find("300 bytes") != std::string::npos);
}

TEST_CASE("real Dynamo 1.6.1: headline /metrics families and usage-based ISL, OSL, cached tokens") {
  DynamoOptions options;
  options.version = "1.6.1";
  options.workers = 2;
  options.affinity_ttl_s = 60;
  DynamoStack stack(options, "claims-161-metrics");
  CONVOY_REQUIRE_DYNAMO(stack);
  const std::string frontend_metrics = stack.frontend().metrics_url;
  const Scrape before = scrape(frontend_metrics);

  RunSpec spec{"header", "", {"frontend=" + frontend_metrics}};
  for (size_t i = 0; i < stack.workers().size(); ++i) {
    spec.scrape.push_back("worker" + std::to_string(i) + "=" + stack.workers()[i].metrics_url);
  }
  const ConvoyRun r = run_convoy(stack, "metrics", spec);
  CHECK(r.exit_code == 0);
  const Scrape after = scrape(frontend_metrics);

  // Every Dynamo family of the table, by its real name, in the frontend's /metrics and in what
  // convoy recorded as headline; the mocker's vLLM-named families likewise.
  headline_families_found(after.families, "dynamo");
  const std::set<std::string> frontend = headline_names(r, "frontend");
  for (const auto& k : telemetry::known_metrics()) {
    if (k.source == "dynamo") CHECK_MESSAGE(recorded(frontend, std::string(k.family)), k.family);
  }
  const Scrape worker = scrape(stack.workers()[0].metrics_url);
  const std::set<std::string> vllm_known_absent = {
      "vllm:prompt_tokens",
      "vllm:generation_tokens",
      "vllm:prefix_cache_hits",
      "vllm:prefix_cache_queries",
      "vllm:time_per_output_token_seconds",
      "vllm:request_success",
      "vllm:request_queue_time_seconds"};  // the 1.6.1 mocker does not expose these
  headline_families_found(worker.families, "vllm", vllm_known_absent);
  CHECK(recorded(headline_names(r, "worker0"), "vllm:num_requests_running"));

  // ISL, OSL and cached tokens as convoy recorded them (from usage) add up to the frontend's own
  // counts over the run.
  REQUIRE(r.records.size() == kConversations * kTurns);
  double isl = 0;
  double osl = 0;
  double cached = 0;
  for (const auto& rec : r.records) {
    CHECK(rec["http_status"].GetInt() == 200);
    isl += rec["metrics"]["isl"].GetDouble();
    osl += rec["metrics"]["osl"].GetDouble();
    REQUIRE(rec["metrics"]["cached_tokens"].IsInt64());  // usage reported it
    cached += rec["metrics"]["cached_tokens"].GetDouble();
  }
  auto delta = [&](const std::string& sample) {
    return after.sums.at(sample) - (before.sums.count(sample) ? before.sums.at(sample) : 0.0);
  };
  CHECK(isl == delta("dynamo_frontend_input_sequence_tokens_sum"));
  CHECK(osl == delta("dynamo_frontend_output_tokens_total"));
  CHECK(osl == kConversations * kTurns * 6);
  CHECK(cached == delta("dynamo_frontend_cached_tokens_sum"));
  CHECK(cached > 0);  // later turns reuse the earlier turns' blocks on their bound worker
}

TEST_CASE("real Dynamo 1.2.1: legacy runs clean, bind is refused and the insight names the flag") {
  DynamoOptions options;
  options.version = "1.2.1";
  options.workers = 2;
  DynamoStack stack(options, "claims-121");
  CONVOY_REQUIRE_DYNAMO(stack);

  const ConvoyRun legacy =
      run_convoy(stack, "legacy-121", {"legacy", "", {"frontend=" + stack.frontend().metrics_url}});
  CHECK(legacy.exit_code == 0);
  CHECK(legacy.summary["error_request_count"]["avg"].GetDouble() == 0);
  CHECK(legacy.records.size() == kConversations * kTurns);
  headline_families_found(scrape(stack.frontend().metrics_url).families, "dynamo");

  const ConvoyRun bind = run_convoy(stack, "bind-121", {"bind", "", {}});
  CHECK(bind.exit_code == 1);
  REQUIRE_FALSE(bind.records.empty());
  const std::string message = bind.records[0]["error"]["message"].GetString();
  CHECK(message.rfind("Failed to deserialize the JSON body into the target type: "
                      "nvext.session_control.action: unknown variant `bind`, expected `open` or "
                      "`close` at line 1 column ",
                      0) == 0);
  all_failed_with(bind, 400, message);
  const std::string text = insight(bind, "session_control_bind_unsupported");
  CHECK(text.find("unknown variant `bind`") != std::string::npos);
  CHECK(text.find("--use-legacy-dynamo-session-control") != std::string::npos);
  CHECK(insight(bind, "session_control_removed").empty());
}

}  // namespace
}  // namespace convoy::test
