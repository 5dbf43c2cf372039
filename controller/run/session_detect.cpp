#include "controller/run/session_detect.hpp"

#include <curl/curl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/curl_handle.hpp"
#include "common/log.hpp"

namespace convoy::controller {

namespace {

using proto::SessionRoutingMode;

// A probe waits for one token; a cold frontend may take a while, a dead one must not hold the
// start for target.request_timeout_s (600 s by default).
constexpr double kMaxProbeTimeoutS = 60;

bool contains(const std::string& text, std::string_view what) {
  return text.find(what) != std::string::npos;
}

std::string trimmed(const std::string& text) {
  std::string out = text.substr(0, SessionLedger::kMaxAnswerBytes);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) {
    out.pop_back();
  }
  return out;
}

}  // namespace

Detection classify_session_probe(const ProbeAnswer& answer) {
  Detection d;
  const int64_t status = answer.http_status;
  if (status >= 200 && status < 300) {
    d.ok = true;
    d.mode = SessionRoutingMode::kBind;
    d.meaning = "HTTP " + std::to_string(status) +
                " to a body action bind: the frontend accepts bind (a Dynamo 1.3 development "
                "build, or a server that ignores nvext)";
    return d;
  }
  if (status >= 400 && status < 500 && contains(answer.body, kUnknownVariantBind)) {
    d.ok = true;
    d.mode = SessionRoutingMode::kLegacy;
    d.meaning = "HTTP " + std::to_string(status) + " \"" + std::string(kUnknownVariantBind) +
                "\": the frontend speaks open/close (Dynamo v1.1/v1.2)";
    return d;
  }
  if (status >= 400 && status < 500 && contains(answer.body, kUnknownFieldSessionControl)) {
    d.ok = true;
    d.mode = SessionRoutingMode::kHeader;
    d.meaning = "HTTP " + std::to_string(status) + " \"" +
                std::string(kUnknownFieldSessionControl) +
                "\": the frontend takes X-Dynamo-Session-ID only (Dynamo v1.3 and later)";
    return d;
  }
  d.meaning = status == 0 ? "no answer: " + answer.transport_error
                          : "HTTP " + std::to_string(status) + ": \"" + trimmed(answer.body) +
                                "\", which names none of bind, legacy or header";
  return d;
}

std::string probe_endpoint_url(const std::string& base_url, proto::Endpoint endpoint) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string path = endpoint == proto::Endpoint::kCompletions  ? "/completions"
                           : endpoint == proto::Endpoint::kEmbeddings ? "/embeddings"
                                                                      : "/chat/completions";
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0) return base + path;
  return base + "/v1" + path;
}

std::string session_probe_body(const proto::TargetSettings& target, const std::string& session_id,
                               std::string_view action, int64_t timeout_s) {
  rapidjson::Document doc;
  doc.Parse(target.extra_body_json.c_str());
  if (doc.HasParseError() || !doc.IsObject()) doc.SetObject();
  auto& a = doc.GetAllocator();
  auto set = [&](const char* key, rapidjson::Value value) {
    doc.RemoveMember(key);
    doc.AddMember(rapidjson::StringRef(key), value, a);
  };
  set("model", rapidjson::Value(target.model.c_str(), a));
  const char* text = "convoy session_routing probe";
  if (target.endpoint == proto::Endpoint::kCompletions) {
    set("prompt", rapidjson::Value(text, a));
  } else {
    rapidjson::Value message(rapidjson::kObjectType);
    message.AddMember("role", "user", a);
    message.AddMember("content", rapidjson::Value(text, a), a);
    rapidjson::Value messages(rapidjson::kArrayType);
    messages.PushBack(message, a);
    set("messages", std::move(messages));
  }
  set(target.max_completion_tokens ? "max_completion_tokens" : "max_tokens", rapidjson::Value(1));
  set("stream", rapidjson::Value(false));
  doc.RemoveMember("stream_options");
  auto nvext = doc.FindMember("nvext");
  if (nvext == doc.MemberEnd() || !nvext->value.IsObject()) {
    set("nvext", rapidjson::Value(rapidjson::kObjectType));
    nvext = doc.FindMember("nvext");
  }
  rapidjson::Value control(rapidjson::kObjectType);
  control.AddMember("session_id", rapidjson::Value(session_id.c_str(), a), a);
  control.AddMember(
      "action", rapidjson::Value(action.data(), static_cast<rapidjson::SizeType>(action.size()), a),
      a);
  if (action != "close") control.AddMember("timeout", rapidjson::Value(timeout_s), a);
  nvext->value.RemoveMember("session_control");
  nvext->value.AddMember("session_control", control, a);
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  doc.Accept(w);
  return std::string(sb.GetString(), sb.GetSize());
}

namespace {

size_t on_body(char* data, size_t size, size_t count, void* userp) noexcept {
  constexpr size_t kCapBytes = SessionLedger::kMaxAnswerBytes * 4;
  auto* body = static_cast<std::string*>(userp);
  const size_t n = size * count;
  const size_t room = kCapBytes > body->size() ? kCapBytes - body->size() : 0;
  try {
    body->append(data, std::min(n, room));
  } catch (...) {
    return 0;
  }
  return n;
}

}  // namespace

ProbeAnswer post_probe(const proto::TargetSettings& target, const std::string& url,
                       const std::string& body, double timeout_s) {
  ProbeAnswer answer;
  const CurlEasy easy = CurlEasy::create();
  if (!easy) {
    answer.transport_error = "curl_easy_init failed";
    return answer;
  }
  CURL* c = easy.get();
  std::vector<std::string> lines = {"Content-Type: application/json"};
  for (const auto& [name, value] : target.headers) lines.push_back(name + ": " + value);
  const char* key = target.api_key_env.empty() ? nullptr : std::getenv(target.api_key_env.c_str());
  if (key && *key) lines.push_back(std::string("Authorization: Bearer ") + key);
  CurlHeaders headers;
  for (const auto& line : lines) headers.append(line);
  char error[CURL_ERROR_SIZE] = {0};
  const auto timeout_ms = static_cast<long>(std::min(timeout_s, kMaxProbeTimeoutS) * 1000);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(target.connect_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (target.insecure) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  const CURLcode code = curl_easy_perform(c);
  if (code != CURLE_OK) {
    answer.transport_error = error[0] ? error : curl_easy_strerror(code);
    return answer;
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  answer.http_status = status;
  return answer;
}

namespace {

// A session id of the probe's own, never a conversation's.
std::string probe_session_id() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return "convoy-session-probe-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
}

// Probes one URL: the answer recorded in the ledger, the detection returned.
Detection probe_one(const Config& config, const std::string& base_url, SessionLedger& ledger) {
  const std::string url = probe_endpoint_url(base_url, config.target.endpoint);
  const std::string id = probe_session_id();
  const int64_t timeout_s = config.session_routing.timeout_s;
  const ProbeAnswer answer =
      post_probe(config.target, url, session_probe_body(config.target, id, "bind", timeout_s),
                 config.target.request_timeout_s);
  Detection d = classify_session_probe(answer);
  ledger.detected_by = "probe";
  ledger.probe_url = url;
  ledger.probe_http_status = answer.http_status;
  ledger.probe_answer = trimmed(answer.http_status == 0 ? answer.transport_error : answer.body);
  ledger.detection_reason = d.meaning;
  if (d.ok && d.mode == SessionRoutingMode::kBind) {
    // The probe bound a session of its own: release it (best effort; its TTL ends it anyway).
    post_probe(config.target, url, session_probe_body(config.target, id, "close", timeout_s),
               config.target.request_timeout_s);
  }
  return d;
}

}  // namespace

std::string resolve_session_routing(Config& config, const std::vector<std::string>& base_urls,
                                    SessionLedger& ledger) {
  SessionRoutingMode& mode = config.session_routing.mode;
  ledger.configured = mode;
  if (config.target.endpoint == proto::Endpoint::kEmbeddings) {
    mode = SessionRoutingMode::kOff;        // the validation warning said so; nothing is overlaid
    config.session_routing.writes.clear();  // other routers' keys neither
  }
  if (mode == SessionRoutingMode::kAuto) {
    std::optional<SessionRoutingMode> learned;
    for (const auto& base : base_urls) {
      const Detection d = probe_one(config, base, ledger);
      if (!d.ok) {
        return "session_routing.mode auto: the probe of " + ledger.probe_url +
               " decides nothing: " + d.meaning + ". Nothing else was sent.";
      }
      if (learned && *learned != d.mode) {
        return "session_routing.mode auto: the frontends disagree: " + ledger.probe_url +
               " speaks " + std::string(proto::to_string(d.mode)) + ", an earlier one " +
               std::string(proto::to_string(*learned)) +
               " (set session_routing.mode for one of them). Nothing else was sent.";
      }
      learned = d.mode;
    }
    if (!learned) return "session_routing.mode auto: no target url to probe";
    mode = *learned;
    log_info("session_routing.mode auto: ", proto::to_string(mode), " (probe of ", ledger.probe_url,
             ": ", ledger.detection_reason, ")");
  }
  ledger.mode = mode;
  ledger.tracked = mode == SessionRoutingMode::kBind || mode == SessionRoutingMode::kLegacy ||
                   (mode == SessionRoutingMode::kHeader &&
                    config.session_routing.final_marker == proto::FinalMarker::kCloseRequest);
  return "";
}

}  // namespace convoy::controller
