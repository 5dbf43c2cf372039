// to_yaml: the resolved config written back as YAML (summary.json's run.config_yaml, which
// `convoy compare` reads back), every key in the key table's order, secret header values
// redacted.
#include <algorithm>
#include <cctype>
#include <ostream>
#include <sstream>
#include <string_view>

#include "controller/config/config.hpp"
#include "controller/config/config_keys.hpp"
#include "controller/config/distribution_yaml.hpp"
#include "controller/config/load_profile_yaml.hpp"
#include "controller/config/load_shapes_yaml.hpp"
#include "controller/config/request_hints_yaml.hpp"
#include "controller/config/session_routing_writes.hpp"
#include "controller/config/trace_yaml.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy {

namespace {

using yaml_util::format_number;
using yaml_util::quote;

using config_detail::distribution_yaml;

template <class T>
std::string opt_int(const std::optional<T>& v) {
  return v ? std::to_string(*v) : std::string("null");
}
std::string opt_num(const std::optional<double>& v) {
  return v ? format_number(*v) : std::string("null");
}
std::string opt_str(const std::optional<std::string>& v) { return v ? quote(*v) : "null"; }
const char* yes_no(bool b) { return b ? "true" : "false"; }

bool secret_header(const std::string& name) {
  auto same_ignoring_case = [](std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
      return std::tolower(static_cast<unsigned char>(x)) ==
             std::tolower(static_cast<unsigned char>(y));
    });
  };
  for (auto s : config_keys::kSecretHeaders) {
    if (same_ignoring_case(name, s)) return true;
  }
  return false;
}

void target_yaml(std::ostream& y, const TargetConfig& t) {
  y << "target:\n";
  if (t.urls.empty()) {
    y << "  url: " << quote(t.url) << "\n";
  } else {  // url is urls[0]; printing it would make the two exclusive keys both given
    y << "  # url: " << quote(t.url) << " (urls[0])\n";
  }
  y << "  urls: ";
  if (t.urls.empty()) y << "null";
  for (std::size_t i = 0; i < t.urls.size(); ++i) y << (i ? ", " : "[") << quote(t.urls[i]);
  y << (t.urls.empty() ? "" : "]") << "\n";
  y << "  endpoint: " << to_string(t.endpoint) << "\n";
  if (t.models.empty()) {
    y << "  model: " << quote(t.model) << "\n";
  } else {  // model is models[0]; printing it would make the two exclusive keys both given
    y << "  # model: " << quote(t.model) << " (models[0])\n";
  }
  y << "  models:" << (t.models.empty() ? " null" : "") << "\n";
  for (const auto& m : t.models) {
    y << "    - {name: " << quote(m.name) << ", weight: " << format_number(m.weight) << "}\n";
  }
  y << "  streaming: " << yes_no(t.streaming) << "\n"
    << "  api_key_env: " << (t.api_key_env.empty() ? "null" : quote(t.api_key_env)) << "\n";
  y << "  headers:" << (t.headers.empty() ? " {}" : "") << "\n";
  for (const auto& [name, value] : t.headers) {
    y << "    " << quote(name) << ": " << quote(secret_header(name) ? "<redacted>" : value) << "\n";
  }
  // JSON is YAML flow syntax, so the object reads back as the same mapping.
  y << "  extra_body: " << t.extra_body_json << "\n"
    << "  request_timeout_s: " << format_number(t.request_timeout_s) << "\n"
    << "  connect_timeout_s: " << format_number(t.connect_timeout_s) << "\n"
    << "  use_server_token_counts: " << yes_no(t.use_server_token_counts) << "\n"
    << "  max_completion_tokens: " << yes_no(t.max_completion_tokens) << "\n"
    << "  http2: " << yes_no(t.http2) << "\n"
    << "  insecure: " << yes_no(t.insecure) << "\n"
    << "  max_response_bytes: " << t.max_response_bytes << "\n"
    << "  server_timing: " << yes_no(t.server_timing) << "\n"
    << "  path: " << (t.path.empty() ? "null" : quote(t.path)) << "\n"
    << "  responses_state: " << to_string(t.responses_state) << "\n";
}

void mock_and_dataset_yaml(std::ostream& y, const Config& c) {
  const auto& m = c.mock;
  y << "mock:\n"
    << "  workers: " << m.workers << "\n"
    << "  contract: " << m.contract << "\n"
    << "  router_mode: " << m.router_mode << "\n"
    << "  itl_ms: " << format_number(m.itl_ms) << "\n"
    << "  speedup: " << format_number(m.speedup) << "\n"
    << "  engine_sessions: " << yes_no(m.engine_sessions) << "\n"
    << "  extra_args: [";
  for (std::size_t i = 0; i < m.extra_args.size(); ++i) {
    y << (i ? ", " : "") << quote(m.extra_args[i]);
  }
  y << "]\n";

  const auto& d = c.dataset;
  y << "dataset:\n"
    << "  type: " << to_string(d.type) << "\n"
    << "  path: " << opt_str(d.path) << "\n"
    << "  conversations: " << d.conversations << "\n"
    << "  turns: " << distribution_yaml(d.turns) << "\n"
    << "  input_tokens: " << distribution_yaml(d.input_tokens) << "\n"
    << (d.type == DatasetType::kSharegpt && !d.output_tokens_set
            // Unset on purpose: reading this back must keep the recorded replies' lengths.
            ? std::string("  # output_tokens: unset: each recorded reply's length")
            : "  output_tokens: " + distribution_yaml(d.output_tokens))
    << "\n"
    << "  max_turns: " << (d.max_turns ? std::to_string(*d.max_turns) : "null") << "\n"
    << "  shared_prefix_tokens: " << d.shared_prefix_tokens << "\n"
    << "  think_time_ms: " << distribution_yaml(d.think_time_ms) << "\n"
    << "  history: " << to_string(d.history) << "\n"
    << "  tokenizer: " << opt_str(d.tokenizer) << "\n"
    << "  count_chat_template: " << (d.count_chat_template ? "true" : "false") << "\n"
    << "  text: " << to_string(d.text) << "\n";
  y << config_detail::request_hints_yaml(d);
  if (d.prefixes) {
    y << "  prefixes: {pool: " << d.prefixes->pool << ", tokens: " << d.prefixes->tokens
      << ", per_conversation: " << d.prefixes->per_conversation << "}\n";
  } else {
    y << "  prefixes: null\n";
  }
  if (!d.subagents) {
    y << "  subagents: null\n";
    return;
  }
  y << "  subagents:\n"
    << "    probability: " << format_number(d.subagents->probability) << "\n"
    << "    count: " << distribution_yaml(d.subagents->count) << "\n"
    << "    turns: " << distribution_yaml(d.subagents->turns) << "\n"
    << "    spawn_after_turn: " << distribution_yaml(d.subagents->spawn_after_turn) << "\n";
}

void load_yaml(std::ostream& y, const Config& c) {
  const auto& l = c.load;
  y << "load:\n"
    << "  mode: " << to_string(l.mode) << "\n"
    << "  concurrency: " << l.concurrency << "\n"
    << "  rate: " << format_number(l.rate) << "\n"
    << "  arrival: " << to_string(l.arrival) << "\n"
    << "  burstiness: " << format_number(l.burstiness) << "\n"
    << "  sessions: " << opt_int(l.sessions) << "\n"
    << "  requests: " << opt_int(l.requests) << "\n"
    << "  duration_s: " << opt_num(l.duration_s) << "\n"
    << "  grace_s: " << format_number(l.grace_s)
    << "\n"
    // load.warmup writes its own end (and re-reading both would be refused as exclusive).
    << "  warmup_sessions: " << (l.warmup ? 0 : l.warmup_sessions) << "\n"
    << "  cancel: {fraction: " << format_number(l.cancel.fraction)
    << ", after_ms: " << format_number(l.cancel.after_ms) << "}\n";
  config_detail::load_profile_yaml(y, l);
  config_detail::trace_yaml(y, l);
  y << "  trials: " << l.trials << "\n";
  config_detail::load_shapes_yaml(y, l);
}

void routing_workers_output_yaml(std::ostream& y, const Config& c) {
  const auto& r = c.session_routing;
  y << "session_routing:\n"
    << "  mode: " << routing_mode_yaml(r) << "\n"
    << "  timeout_s: " << r.timeout_s << "\n"
    << "  header_name: " << quote(r.header_name) << "\n"
    << "  final_marker: " << to_string(r.final_marker) << "\n"
    << "  verify: " << yes_no(r.verify) << "\n"
    << routing_custom_yaml(r);

  const auto& w = c.workers;
  y << "workers:\n"
    << "  local: " << w.local << "\n"
    << "  listen: " << quote(w.listen) << "\n"
    << "  results_listen: " << opt_str(w.results_listen) << "\n"
    << "  expect: " << opt_int(w.expect) << "\n"
    << "  curve_keys: " << opt_str(w.curve_keys) << "\n"
    << "  ready_timeout_s: " << format_number(w.ready_timeout_s) << "\n";

  y << "output:\n"
    << "  dir: " << quote(c.output.dir) << "\n"
    << "  records: " << yes_no(c.output.records) << "\n"
    << "  html: " << yes_no(c.output.html) << "\n"
    << "  slice_s: " << (c.output.slice_s ? format_number(*c.output.slice_s) : std::string("null"))
    << "\n"
    << "  metrics_listen: " << opt_str(c.output.metrics_listen) << "\n"
    << "  metrics_linger_s: " << format_number(c.output.metrics_linger_s) << "\n"
    << "  aiperf_export: " << yes_no(c.output.aiperf_export) << "\n";

  const auto& t = c.telemetry;
  y << "telemetry:\n"
    << "  interval_s: " << format_number(t.interval_s) << "\n"
    << "  timeout_s: " << format_number(t.timeout_s) << "\n"
    << "  max_series: " << t.max_series << "\n"
    << "  endpoints:" << (t.endpoints.empty() ? " []" : "") << "\n";
  for (const auto& e : t.endpoints) {
    y << "    - name: " << quote(e.name) << "\n"
      << "      url: " << quote(e.url) << "\n"
      << "      headers:" << (e.headers.empty() ? " {}" : "") << "\n";
    for (const auto& [name, value] : e.headers) {
      y << "        " << quote(name) << ": " << quote(secret_header(name) ? "<redacted>" : value)
        << "\n";
    }
    y << "      required: " << yes_no(e.required) << "\n";
  }

  y << "slo:" << (c.slo.empty() ? " {}" : "") << "\n";
  for (const auto& [metric, ms] : c.slo) y << "  " << metric << ": " << format_number(ms) << "\n";
  y << "fail_on:\n"
    << "  error_rate: " << opt_num(c.fail_on.error_rate) << "\n";
}

}  // namespace

std::string to_yaml(const Config& c) {
  std::ostringstream y;
  y << "name: " << quote(c.name) << "\n"
    << "seed: " << c.seed << "\n";
  target_yaml(y, c.target);
  mock_and_dataset_yaml(y, c);
  load_yaml(y, c);
  routing_workers_output_yaml(y, c);
  return y.str();
}

}  // namespace convoy
