#include "controller/report/insights.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string_view>

#include "controller/report/server_insights.hpp"

namespace convoy::controller {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(const std::string& lowered, std::string_view needle) {
  return lowered.find(needle) != std::string::npos;
}

bool contains_any(const std::string& lowered, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return contains(lowered, n); });
}

// What a group's server said, as it said it: the raw example, else the normalised message.
const std::string& raw(const ErrorGroupView& g) {
  return g.example.empty() ? g.message : g.example;
}

// A server message quoted in a problem statement: one line, bounded.
std::string quote(const std::string& message) {
  constexpr size_t kMaxQuoteBytes = 240;
  std::string out;
  for (char c : message) out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  if (out.size() > kMaxQuoteBytes) out = out.substr(0, kMaxQuoteBytes) + "...";
  return "\"" + out + "\"";
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string requests(int64_t n) { return std::to_string(n) + (n == 1 ? " request" : " requests"); }

// The error groups one insight is about.
struct Matches {
  int64_t count = 0;
  std::vector<std::string> examples;
  const ErrorGroupView* first = nullptr;  // the largest matching group
  bool empty() const { return first == nullptr; }
};

struct GroupText {
  const ErrorGroupView* group;
  std::string message;  // lowered
  std::string type;     // lowered
};

Matches match(const std::vector<GroupText>& groups,
              const std::function<bool(const GroupText&)>& predicate) {
  Matches m;
  for (const auto& g : groups) {
    if (!predicate(g)) continue;
    m.count += g.group->count;
    if (m.first == nullptr || g.group->count > m.first->count) m.first = g.group;
    for (const auto& id : g.group->example_correlation_ids) {
      if (m.examples.size() < kMaxInsightExamples) m.examples.push_back(id);
    }
  }
  return m;
}

bool client_error(const GroupText& g) { return g.group->code == 400 || g.group->code == 422; }

Insight make(const Matches& m, std::string id, std::string severity, std::string title) {
  Insight in;
  in.id = std::move(id);
  in.severity = std::move(severity);
  in.title = std::move(title);
  in.affected_requests = m.count;
  in.example_correlation_ids = m.examples;
  return in;
}

std::string server_said(const Matches& m) {
  return requests(m.count) + " failed with HTTP " + std::to_string(m.first->code) + ": " +
         quote(raw(*m.first)) + ".";
}

const char* kFindInRecords =
    "Look up the example correlation ids in records.jsonl (x_correlation_id) to see the "
    "session_control each request carried and the server's reply.";

void session_control_insights(const std::vector<GroupText>& groups, const InsightInputs& in,
                              std::vector<Insight>* out) {
  Matches bind = match(groups, [](const GroupText& g) {
    return client_error(g) && contains(g.message, "unknown variant") && contains(g.message, "bind");
  });
  if (!bind.empty()) {
    Insight i = make(bind, "session_control_bind_unsupported", "error",
                     "Unsupported Dynamo session_control action: bind");
    i.problem = server_said(bind) +
                " The Dynamo frontend predates the bind action of conversation-aware routing.";
    i.likely_causes = {
        "Dynamo v1.1.x or v1.2.x: nvext.session_control accepts only open and close.",
        "session_routing.mode is bind, set explicitly (--use-dynamo-conv-aware-routing selects "
        "auto, which learns the contract from the target before sending anything)."};
    i.investigate = {
        "Check the Dynamo version in the frontend's startup log or with `pip show ai-dynamo`.",
        kFindInRecords};
    i.fixes = {
        "Dynamo v1.1/v1.2: set session_routing.mode: legacy (or add "
        "--use-legacy-dynamo-session-control).",
        "Dynamo v1.3 and later: set session_routing.mode: header and start the frontend "
        "with --router-session-affinity-ttl-secs.",
        "Or set session_routing.mode: auto (--use-dynamo-conv-aware-routing): one probe "
        "request learns which of these the frontend speaks."};
    out->push_back(std::move(i));
  }
  Matches removed = match(groups, [](const GroupText& g) {
    return client_error(g) && contains(g.message, "unknown field") &&
           contains(g.message, "session_control");
  });
  if (!removed.empty()) {
    Insight i = make(removed, "session_control_removed", "error",
                     "This Dynamo no longer accepts nvext.session_control");
    i.problem = server_said(removed) +
                " Dynamo v1.3.0 and later removed session control from the request body.";
    i.likely_causes = {"Dynamo v1.3.0 or later with session_routing.mode " +
                           std::string(proto::to_string(in.session_routing_mode)) + ".",
                       "target.extra_body carries nvext.session_control."};
    i.investigate = {
        "Check the Dynamo version in the frontend's startup log or with `pip show ai-dynamo`.",
        kFindInRecords};
    i.fixes = {"Set session_routing.mode: header (convoy sends X-Dynamo-Session-ID on every turn).",
               "Start the Dynamo frontend with --router-session-affinity-ttl-secs N so that the "
               "header pins conversations.",
               "Remove nvext.session_control from target.extra_body if it is there.",
               "Or set session_routing.mode: auto (--use-dynamo-conv-aware-routing): one probe "
               "request learns the contract before any traffic."};
    out->push_back(std::move(i));
  }
}

void cache_insights(const InsightInputs& in, std::vector<Insight>* out) {
  if (in.later_turn_requests_reporting_cached < kMinLaterTurnsForCacheInsight ||
      in.later_turn_prompt_tokens <= 0) {
    return;
  }
  const double fraction = static_cast<double>(in.later_turn_cached_tokens) /
                          static_cast<double>(in.later_turn_prompt_tokens);
  if (fraction >= kNearZeroCacheFraction) return;
  std::ostringstream share;
  share.precision(2);
  share << std::fixed << fraction * 100.0;
  const std::string seen = "Later turns (" + requests(in.later_turn_requests) + ") reused " +
                           share.str() +
                           "% of their prompt tokens from the prefix cache although the server "
                           "reports cached_tokens";
  if (in.session_routing_mode == proto::SessionRoutingMode::kLegacy) {
    Insight i;
    i.id = "legacy_affinity_ineffective";
    i.severity = "warning";
    i.title = "Legacy session control is probably not pinning conversations";
    i.problem = seen +
                ". Legacy open only pins a conversation when the engine exposes sessions, so "
                "affinity is probably not taking effect.";
    i.likely_causes = {
        "The engine has no session support (vLLM, TensorRT-LLM): open succeeds and pins nothing.",
        "The engine does not cache prefixes at all (prefix caching disabled)."};
    i.investigate = {
        "Compare time_to_first_token of turn 0 and later turns in report.html.",
        "Look for session open/close lines in the Dynamo frontend and router logs.",
        "Against convoy-mock: GET /mock/stats shows worker switches per conversation."};
    i.fixes = {
        "Use an engine with session support (e.g. SGLang with streaming sessions) for legacy.",
        "Dynamo 1.3 development builds: session_routing.mode: bind.",
        "Dynamo v1.3 and later: session_routing.mode: header with the frontend started with "
        "--router-session-affinity-ttl-secs."};
    out->push_back(std::move(i));
  } else if (in.session_routing_mode == proto::SessionRoutingMode::kHeader) {
    Insight i;
    i.id = "header_affinity_ineffective";
    i.severity = "warning";
    i.title = "The session header is probably not pinning conversations";
    i.problem = seen + ". The frontend seems to ignore the session header.";
    i.likely_causes = {
        "The Dynamo frontend runs without --router-session-affinity-ttl-secs.",
        "A Dynamo older than v1.3, which does not read the header.",
        "A proxy in between drops the header, or session_routing.header_name differs from "
        "what the frontend reads.",
        "The engine does not cache prefixes at all."};
    i.investigate = {"Compare time_to_first_token of turn 0 and later turns in report.html.",
                     "Check the frontend's command line and the Dynamo version."};
    i.fixes = {"Start the frontend with --router-session-affinity-ttl-secs N.",
               "Dynamo v1.1/v1.2: session_routing.mode: legacy; 1.3 development builds: bind."};
    out->push_back(std::move(i));
  }
}

void token_limit_insights(const std::vector<GroupText>& groups, const InsightInputs& in,
                          std::vector<Insight>* out) {
  auto wants_max_completion = [](const GroupText& g) {
    return contains_any(g.message,
                        {"use 'max_completion_tokens'", "use max_completion_tokens",
                         "'max_tokens' is not supported", "max_tokens is not supported"});
  };
  Matches wants =
      match(groups, [&](const GroupText& g) { return client_error(g) && wants_max_completion(g); });
  if (!wants.empty()) {
    Insight i = make(wants, "max_tokens_unsupported", "error",
                     "The server wants max_completion_tokens instead of max_tokens");
    i.problem = server_said(wants);
    i.likely_causes = {"The model only accepts max_completion_tokens (newer OpenAI models)."};
    i.investigate = {kFindInRecords};
    i.fixes = {"Set target.max_completion_tokens: true."};
    out->push_back(std::move(i));
  }
  Matches rejected = match(groups, [&](const GroupText& g) {
    return client_error(g) && contains(g.message, "max_completion_tokens") &&
           !wants_max_completion(g);
  });
  if (!rejected.empty()) {
    Insight i = make(rejected, "max_completion_tokens_rejected", "error",
                     "The server rejects max_completion_tokens");
    i.problem = server_said(rejected);
    i.likely_causes = {in.max_completion_tokens
                           ? "target.max_completion_tokens is true but this server only knows "
                             "max_tokens."
                           : "target.extra_body or the dataset sends max_completion_tokens, which "
                             "this server does not know."};
    i.investigate = {kFindInRecords};
    i.fixes = {"Set target.max_completion_tokens: false (convoy then sends max_tokens).",
               "Remove max_completion_tokens from target.extra_body and the dataset's extras."};
    out->push_back(std::move(i));
  }
}

void context_length_insight(const std::vector<GroupText>& groups, std::vector<Insight>* out) {
  Matches m = match(groups, [](const GroupText& g) {
    return contains_any(g.message, {"context length", "context_length", "context window",
                                    "context size", "exceed_context", "max_model_len",
                                    "maximum model length", "prompt is too long"});
  });
  if (m.empty()) return;
  Insight i = make(m, "context_length_exceeded", "error", "Context length exceeded");
  i.problem =
      requests(m.count) + " exceeded the model's context length: " + quote(raw(*m.first)) + ".";
  i.likely_causes = {
      "Multi-turn history grows every turn: late turns carry every earlier message and reply.",
      "dataset.input_tokens, dataset.output_tokens or dataset.shared_prefix_tokens are larger "
      "than the server's maximum model length."};
  i.investigate = {
      "Check input_sequence_length by turn and the largest turn_index that failed in "
      "records.jsonl.",
      "Check the server's maximum model length (e.g. vLLM --max-model-len)."};
  i.fixes = {"Lower dataset.turns.max, dataset.input_tokens or dataset.output_tokens.",
             "Start the server with a larger context length, if the model supports it."};
  out->push_back(std::move(i));
}

void not_found_insights(const std::vector<GroupText>& groups, const InsightInputs& in,
                        std::vector<Insight>* out) {
  auto model_missing = [](const GroupText& g) {
    const bool about_model = contains(g.message, "model") || contains(g.type, "model");
    return about_model && (g.group->code == 404 ||
                           contains_any(g.message, {"not found", "does not exist", "unknown model",
                                                    "no such model"}) ||
                           contains(g.type, "model_not_found"));
  };
  Matches model = match(groups, model_missing);
  if (!model.empty()) {
    Insight i = make(model, "model_not_found", "error", "Model not found");
    i.problem = server_said(model);
    if (!in.model.empty()) i.problem += " convoy asked for target.model \"" + in.model + "\".";
    i.likely_causes = {
        "target.model does not match a model the server serves (names are exact, "
        "often the Hugging Face id)."};
    i.investigate = {"List the served models: GET " +
                     (in.target_url.empty() ? std::string("<target.url>") : in.target_url) +
                     "/v1/models."};
    if (in.models_offered.empty()) {
      i.fixes = {"Set target.model to one of the ids GET /v1/models returns."};
    } else {
      i.fixes = {"Set target.model to one of the models the server offers: " +
                 join(in.models_offered, ", ") + "."};
    }
    out->push_back(std::move(i));
  }
  Matches path =
      match(groups, [&](const GroupText& g) { return g.group->code == 404 && !model_missing(g); });
  if (!path.empty()) {
    Insight i = make(path, "endpoint_not_found", "error", "Endpoint not found (HTTP 404)");
    i.problem = server_said(path);
    i.likely_causes = {"target.url includes a path (such as /v1) that convoy adds again.",
                       "The server does not serve target.endpoint (e.g. embeddings on a chat "
                       "model)."};
    i.investigate = {"Request GET <target.url>/v1/models by hand and compare the path."};
    i.fixes = {"Set target.url to the scheme, host and port only.",
               "Choose a target.endpoint the server serves."};
    out->push_back(std::move(i));
  }
}

void auth_insight(const std::vector<GroupText>& groups, const InsightInputs& in,
                  std::vector<Insight>* out) {
  Matches m = match(
      groups, [](const GroupText& g) { return g.group->code == 401 || g.group->code == 403; });
  if (m.empty()) return;
  Insight i = make(m, "unauthorized", "error", "The server refused the credentials");
  i.problem = server_said(m);
  if (in.api_key_env.empty()) {
    i.problem += " target.api_key_env is empty, so no Authorization header was sent.";
  } else {
    i.problem += " convoy sends the key from the environment variable " + in.api_key_env +
                 ", which was " + (in.api_key_present ? "set" : "NOT set") +
                 " where convoy checked it.";
  }
  i.likely_causes = {
      in.api_key_present
          ? "The key in " + in.api_key_env +
                " is wrong, expired or lacks access "
                "to this model."
          : "The environment variable " +
                (in.api_key_env.empty() ? std::string("(none)") : in.api_key_env) + " is not set.",
      "Remote workers read the variable from their own environment: it must be set on every "
      "worker host."};
  i.investigate = {"Check the variable on every host: test -n \"$" +
                   (in.api_key_env.empty() ? std::string("OPENAI_API_KEY") : in.api_key_env) +
                   "\" && echo set."};
  i.fixes = {"Export " + (in.api_key_env.empty() ? std::string("OPENAI_API_KEY") : in.api_key_env) +
                 " with a valid key on the controller and every worker host.",
             "Or point target.api_key_env at the variable that holds the key."};
  out->push_back(std::move(i));
}

void rate_limit_insight(const std::vector<GroupText>& groups, std::vector<Insight>* out) {
  Matches m = match(groups, [](const GroupText& g) { return g.group->code == 429; });
  if (m.empty()) return;
  Insight i = make(m, "rate_limited", "warning", "Rate limited (HTTP 429)");
  i.problem = server_said(m) + " The server or a gateway in front of it throttled convoy.";
  i.likely_causes = {"The offered load is above the server's or the API plan's limit.",
                     "The server's request queue is full."};
  i.investigate = {
      "Plot errors over time in report.html: 429s that start at a load level show "
      "the limit."};
  i.fixes = {"Lower load.rate or load.concurrency.",
             "Raise the limit on the server or gateway, if it is yours."};
  out->push_back(std::move(i));
}

void connection_insights(const std::vector<GroupText>& groups, const InsightInputs& in,
                         std::vector<Insight>* out) {
  Matches refused = match(groups, [](const GroupText& g) {
    return g.type == "connect" && contains_any(g.message, {"refused", "couldn't connect"});
  });
  const std::string url = in.target_url.empty() ? std::string("target.url") : in.target_url;
  if (in.connection_refused_at_start) {
    Insight i = make(refused, "connection_refused_at_start", "error",
                     "Connection refused at start: is the server up at " + url + "?");
    i.problem = "Nothing accepted connections at " + url + " when the run started.";
    i.likely_causes = {"The server is not running or is still loading the model.",
                       "target.url has the wrong host or port, or http instead of https.",
                       "The server listens on another interface than the one convoy reaches."};
    i.investigate = {"curl -s " + url + "/v1/models from the worker hosts."};
    i.fixes = {"Start the server (wait for it to report ready) and run again.", "Fix target.url."};
    out->push_back(std::move(i));
  } else if (!refused.empty()) {
    Insight i = make(refused, "connection_refused", "error", "Connections refused during the run");
    i.problem = requests(refused.count) + " could not connect to " + url + ": " +
                quote(raw(*refused.first)) + ".";
    i.likely_causes = {"The server stopped or restarted during the run.",
                       "The server's listen backlog or connection limit was exhausted."};
    i.investigate = {
        "Check the server's logs for a crash or restart at the time of the errors "
        "(errors over time in report.html)."};
    i.fixes = {
        "Keep the server up for the whole run; lower load.concurrency if it runs out of "
        "connections."};
    out->push_back(std::move(i));
  }
}

int severity_rank(const std::string& severity) {
  if (severity == "error") return 0;
  if (severity == "warning") return 1;
  return 2;
}

}  // namespace

std::vector<Insight> detect_insights(const InsightInputs& in) {
  std::vector<GroupText> groups;
  groups.reserve(in.errors.size());
  for (const auto& g : in.errors) {
    if (g.count > 0) groups.push_back({&g, lower(g.message), lower(g.type)});
  }
  std::vector<Insight> out;
  connection_insights(groups, in, &out);
  session_control_insights(groups, in, &out);
  token_limit_insights(groups, in, &out);
  context_length_insight(groups, &out);
  not_found_insights(groups, in, &out);
  auth_insight(groups, in, &out);
  rate_limit_insight(groups, &out);
  cache_insights(in, &out);
  session_routing_insights(in, &out);
  server_insights(in, &out);  // what the server said (server_insights.cpp)
  std::stable_sort(out.begin(), out.end(), [](const Insight& a, const Insight& b) {
    return severity_rank(a.severity) < severity_rank(b.severity);
  });
  return out;
}

std::string insights_to_json(const std::vector<Insight>& insights) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto string = [&](const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  auto list = [&](const char* key, const std::vector<std::string>& items) {
    w.Key(key);
    w.StartArray();
    for (const auto& item : items) string(item);
    w.EndArray();
  };
  w.StartArray();
  for (const auto& i : insights) {
    w.StartObject();
    w.Key("id");
    string(i.id);
    w.Key("severity");
    string(i.severity);
    w.Key("title");
    string(i.title);
    w.Key("problem");
    string(i.problem);
    list("likely_causes", i.likely_causes);
    list("investigate", i.investigate);
    list("fixes", i.fixes);
    w.Key("affected_requests");
    w.Int64(i.affected_requests);
    list("example_correlation_ids", i.example_correlation_ids);
    w.EndObject();
  }
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

namespace {

constexpr size_t kPanelMaxWidth = 88;  // including the two borders
constexpr size_t kPanelMinWidth = 40;

// Word-wraps `text` to `text_width` columns ("| " + text + " |" fills the panel's width);
// continuation lines start with `indent`.
std::vector<std::string> wrap(const std::string& first_prefix, const std::string& text,
                              const std::string& indent, size_t text_width) {
  std::vector<std::string> lines;
  std::string line = first_prefix;
  bool line_has_word = false;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const size_t needed = line.size() + (line_has_word ? 1 : 0) + word.size();
    if (line_has_word && needed > text_width) {
      lines.push_back(line);
      line = indent;
      line_has_word = false;
    }
    if (line_has_word) line += ' ';
    // A word longer than a whole line (a url, a quoted token) is split where it must be.
    while (line.size() + word.size() > text_width) {
      const size_t room = text_width - line.size();
      line += word.substr(0, room);
      word.erase(0, room);
      lines.push_back(line);
      line = indent;
    }
    line += word;
    line_has_word = true;
  }
  lines.push_back(line);
  return lines;
}

void row(std::ostream& out, const std::string& text, size_t text_width) {
  out << "| " << text << std::string(text_width - std::min(text.size(), text_width), ' ') << " |\n";
}

void section(std::ostream& out, const char* heading, const std::vector<std::string>& items,
             size_t text_width) {
  if (items.empty()) return;
  row(out, heading, text_width);
  for (const auto& item : items) {
    for (const auto& line : wrap("  - ", item, "    ", text_width)) row(out, line, text_width);
  }
}

}  // namespace

void print_insights(std::ostream& out, const std::vector<Insight>& insights, size_t width) {
  const size_t panel_width = std::clamp(width, kPanelMinWidth, kPanelMaxWidth);
  const size_t text_width = panel_width - 4;
  for (const auto& i : insights) {
    std::string upper = i.severity;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string head = "+- " + upper + ": " + i.title + " ";
    if (head.size() + 1 > panel_width) head = head.substr(0, panel_width - 5) + "... ";
    out << head << std::string(panel_width - 1 - head.size(), '-') << "+\n";
    for (const auto& line : wrap("", i.problem, "", text_width)) row(out, line, text_width);
    section(out, "Likely causes:", i.likely_causes, text_width);
    section(out, "Investigate:", i.investigate, text_width);
    section(out, "Fix:", i.fixes, text_width);
    if (!i.example_correlation_ids.empty()) {
      const std::string ids = join(i.example_correlation_ids, " ");
      for (const auto& line : wrap("Examples: ", ids, "  ", text_width)) {
        row(out, line, text_width);
      }
    }
    out << '+' << std::string(panel_width - 2, '-') << "+\n";
  }
}

}  // namespace convoy::controller
