#include "controller/run/preflight.hpp"

#include <curl/curl.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdlib>

#include "common/curl_handle.hpp"
#include "common/log.hpp"
#include "common/redact.hpp"
#include "controller/config/did_you_mean.hpp"

namespace convoy::controller {

namespace {

size_t preflight_on_body(char* data, size_t size, size_t count, void* user) noexcept {
  auto* body = static_cast<std::string*>(user);
  const size_t n = size * count;
  if (body->size() < kMaxModelsReplyBytes) {
    body->append(data, std::min(n, kMaxModelsReplyBytes - body->size()));
  }
  return n;
}

std::string strip_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

// The answer quoted in a message: one line, at most 160 bytes.
std::string quoted_answer(const ModelsReply& reply) {
  std::string text = reply.http_status == 0 ? reply.transport_error : reply.body;
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  if (text.size() > 160) text = text.substr(0, 157) + "...";
  return text;
}

std::string joined_ids(const std::vector<std::string>& ids) {
  constexpr size_t kShown = 10;
  std::string out;
  for (size_t i = 0; i < ids.size() && i < kShown; ++i) out += (i ? ", " : "") + ids[i];
  if (ids.size() > kShown) out += ", ... (" + std::to_string(ids.size()) + " in all)";
  return out;
}

std::string refused_key_fix(const proto::TargetSettings& target, const char* key_value) {
  if (target.api_key_env.empty()) {
    return "the server wants an API key: put it in an environment variable and name that "
           "variable in target.api_key_env (e.g. export OPENAI_API_KEY=...; api_key_env: "
           "OPENAI_API_KEY)";
  }
  if (key_value == nullptr || *key_value == '\0') {
    return "the server wants an API key and $" + target.api_key_env +
           " (target.api_key_env) is not set: export " + target.api_key_env +
           "=<your key>, or name the variable that holds it in target.api_key_env";
  }
  return "the server refused the key in $" + target.api_key_env +
         " (target.api_key_env): check its value, or name the variable that holds the right "
         "key in target.api_key_env";
}

}  // namespace

std::string models_url(const std::string& base_url) {
  const std::string base = strip_slashes(base_url);
  return ends_with(base, "/v1") ? base + "/models" : base + "/v1/models";
}

ModelsReply get_models(const proto::TargetSettings& target, const std::string& base_url,
                       double timeout_s) {
  ModelsReply reply;
  const CurlEasy easy = CurlEasy::create();
  if (!easy) {
    reply.transport_error = "curl_easy_init failed";
    return reply;
  }
  CURL* c = easy.get();
  CurlHeaders headers;
  for (const auto& [name, value] : target.headers) headers.append(name + ": " + value);
  const char* key = target.api_key_env.empty() ? nullptr : std::getenv(target.api_key_env.c_str());
  if (key && *key) headers.append(std::string("Authorization: Bearer ") + key);
  const std::string url = models_url(base_url);
  char error[CURL_ERROR_SIZE] = {0};
  const auto timeout_ms = static_cast<long>(std::min(timeout_s, target.request_timeout_s) * 1000);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, std::max(timeout_ms, 1L));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::max(timeout_ms, 1L));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &preflight_on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  // As the workers speak: target.http2 is h2 by ALPN over TLS, prior knowledge over http://.
  const bool tls = url.rfind("https://", 0) == 0;
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION,
                   !target.http2 ? long{CURL_HTTP_VERSION_1_1}
                   : tls         ? long{CURL_HTTP_VERSION_2TLS}
                                 : long{CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE});
  if (target.insecure) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  const CURLcode code = curl_easy_perform(c);
  if (code != CURLE_OK) {
    reply.transport_error = error[0] ? error : curl_easy_strerror(code);
    return reply;
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  reply.http_status = status;
  return reply;
}

std::optional<std::vector<std::string>> served_model_ids(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  const auto data = doc.FindMember("data");
  if (data == doc.MemberEnd() || !data->value.IsArray()) return std::nullopt;
  std::vector<std::string> ids;
  for (const auto& model : data->value.GetArray()) {
    if (!model.IsObject()) return std::nullopt;
    const auto id = model.FindMember("id");
    if (id == model.MemberEnd() || !id->value.IsString()) return std::nullopt;
    ids.emplace_back(id->value.GetString(), id->value.GetStringLength());
  }
  return ids;
}

std::vector<std::string> closest_first(std::string_view typed, std::vector<std::string> ids) {
  std::stable_sort(ids.begin(), ids.end(), [typed](const std::string& a, const std::string& b) {
    return edit_distance(typed, a) < edit_distance(typed, b);
  });
  return ids;
}

std::string doubled_path_problem(const std::string& base_url, proto::Endpoint endpoint) {
  const std::string base = strip_slashes(base_url);
  for (std::string_view route :
       {"/chat/completions", "/completions", "/embeddings", "/responses", "/messages"}) {
    if (!ends_with(base, route)) continue;
    std::string root = base.substr(0, base.size() - route.size());
    if (ends_with(root, "/v1")) root.resize(root.size() - 3);
    const std::string sent =
        base + (endpoint == proto::Endpoint::kCompletions  ? "/v1/completions"
                : endpoint == proto::Endpoint::kEmbeddings ? "/v1/embeddings"
                : endpoint == proto::Endpoint::kResponses  ? "/v1/responses"
                : endpoint == proto::Endpoint::kMessages   ? "/v1/messages"
                                                           : "/v1/chat/completions");
    return "target.url " + redact_url(base_url) + " already ends in " + std::string(route) +
           ", and convoy appends the route of target.endpoint itself: requests would go to " +
           redact_url(sent) + ". Set target.url to the server's base url, " +
           redact_url(root.empty() ? base : root) + " (with or without /v1)";
  }
  return "";
}

std::string api_key_warning(const proto::TargetSettings& target, const char* key_value) {
  if (target.api_key_env.empty()) {
    return "target.api_key_env is not set: requests carry no Authorization header (fine for a "
           "server without keys; otherwise name the environment variable that holds the key)";
  }
  if (key_value == nullptr || *key_value == '\0') {
    return "target.api_key_env names $" + target.api_key_env +
           ", which is not set: requests carry no Authorization header (fine for a server "
           "without keys; otherwise export " +
           target.api_key_env + ")";
  }
  return "";
}

PreflightVerdict judge_models_reply(const proto::TargetSettings& target,
                                    const std::string& shown_url, const ModelsReply& reply,
                                    const char* key_value) {
  PreflightVerdict v;
  const std::string get = "GET " + shown_url;
  if (reply.http_status == 401 || reply.http_status == 403) {
    v.error = get + " answered " + std::to_string(reply.http_status) + " (" + quoted_answer(reply) +
              "): " + refused_key_fix(target, key_value) + ". Nothing was sent.";
    return v;
  }
  const std::string unchecked = ": target.model '" + target.model + "' is not checked";
  if (reply.http_status == 0) {
    v.warnings.push_back(get + " had no answer (" + quoted_answer(reply) + ")" + unchecked);
    return v;
  }
  if (reply.http_status < 200 || reply.http_status > 299) {
    v.warnings.push_back(get + " answered " + std::to_string(reply.http_status) +
                         " (a server without the model list?)" + unchecked);
    return v;
  }
  const auto ids = served_model_ids(reply.body);
  if (!ids) {
    v.warnings.push_back(get + " answered " + std::to_string(reply.http_status) +
                         " but not with a model list (" + quoted_answer(reply) + ")" + unchecked);
    return v;
  }
  if (ids->empty()) {
    v.warnings.push_back(get + " lists no model" + unchecked);
    return v;
  }
  auto served = [&](const std::string& name) {
    return std::find(ids->begin(), ids->end(), name) != ids->end();
  };
  if (target.models.empty()) {
    if (served(target.model)) return v;
    v.error = "target.model '" + target.model + "' is not served by " + shown_url +
              "; it serves: " + joined_ids(closest_first(target.model, *ids)) +
              ". Set target.model (convoy profile: --model) to one of them. Nothing was sent.";
    return v;
  }
  // target.models: every listed model, since any conversation may draw any of them.
  for (std::size_t i = 0; i < target.models.size(); ++i) {
    const std::string& name = target.models[i].name;
    if (served(name)) continue;
    v.error = "target.models[" + std::to_string(i) + "].name '" + name + "' is not served by " +
              shown_url + "; it serves: " + joined_ids(closest_first(name, *ids)) +
              ". List only served models in target.models (convoy profile: --model a,b). "
              "Nothing was sent.";
    return v;
  }
  return v;
}

std::string preflight_target(const Config& config) {
  const std::vector<std::string> urls =
      config.target.urls.empty() ? std::vector<std::string>{config.target.url} : config.target.urls;
  if (config.target.urls.empty() && config.target.url == "mock") return "";
  for (const auto& url : urls) {
    if (!config.target.path.empty()) break;  // target.path: the user names the whole route
    if (std::string problem = doubled_path_problem(url, config.target.endpoint); !problem.empty()) {
      return problem + ". Nothing was sent.";
    }
  }
  const char* key =
      config.target.api_key_env.empty() ? nullptr : std::getenv(config.target.api_key_env.c_str());
  if (std::string warning = api_key_warning(config.target, key); !warning.empty()) {
    log_warn(warning);
  }
  for (const auto& url : urls) {
    const ModelsReply reply = get_models(config.target, url, kModelsTimeoutS);
    const PreflightVerdict v =
        judge_models_reply(config.target, redact_url(models_url(url)), reply, key);
    for (const auto& w : v.warnings) log_warn(w);
    if (!v.error.empty()) return v.error;
  }
  return "";
}

bool target_passes_preflight(const Config& config) {
  const std::string problem = preflight_target(config);
  if (!problem.empty()) log_error(problem);
  return problem.empty();
}

}  // namespace convoy::controller
