// The check before any traffic (`convoy run`, `convoy profile`, `convoy validate --check-target`):
// the target url does not double convoy's route, and GET {url}/v1/models with the configured key
// says the key is accepted and the model is served. What would make every request of the run
// fail the same way (a refused key, a model the server does not serve, a doubled path) ends the
// command with exit 2 before anything else is sent; what only might (no key configured, a server
// without /v1/models, an answer that is not a model list) is a warning and the run goes on.
// The verdicts are pure; get_models() is the only I/O (a blocking GET, bounded in time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

struct ModelsReply {
  int64_t http_status = 0;      // 0: no HTTP answer
  std::string body;             // as received, at most kMaxModelsReplyBytes
  std::string transport_error;  // curl's text when there was no answer
};

inline constexpr std::size_t kMaxModelsReplyBytes = 1 << 20;
// The GET waits at most this long (or target.request_timeout_s when shorter): a frontend that
// cannot list its models in 5 s is reported as a warning, not waited for.
inline constexpr double kModelsTimeoutS = 5;

// {base}/v1/models; a base that ends in /v1 gets no second one (the worker's rule for routes).
std::string models_url(const std::string& base_url);

// GET models_url(base_url) with target.headers and the key of target.api_key_env (this
// process's environment), within timeout_s.
ModelsReply get_models(const proto::TargetSettings& target, const std::string& base_url,
                       double timeout_s);

// The ids of an OpenAI model list ({"data": [{"id": ...}, ...]}); nullopt when `body` is not one.
std::optional<std::vector<std::string>> served_model_ids(std::string_view body);

// `ids` ordered by edit distance to `typed` (closest first, ties in the server's order).
std::vector<std::string> closest_first(std::string_view typed, std::vector<std::string> ids);

// "" or why requests to this base url would go to a doubled route, with the fix: a base that
// already ends in the route convoy appends (/chat/completions, /completions, /embeddings).
std::string doubled_path_problem(const std::string& base_url, proto::Endpoint endpoint);

// What the key settings mean before anything is sent: "" or one warning. `key_value` is the
// value of target.api_key_env in the environment (nullptr: unset).
std::string api_key_warning(const proto::TargetSettings& target, const char* key_value);

struct PreflightVerdict {
  std::string error;                  // not empty: exit 2, nothing sent; the line says the fix
  std::vector<std::string> warnings;  // the run goes on
};

// What one url's GET /v1/models answer means for target.model (the url as shown in messages).
PreflightVerdict judge_models_reply(const proto::TargetSettings& target,
                                    const std::string& shown_url, const ModelsReply& reply,
                                    const char* key_value);

// The whole check, for every frontend (target.urls, else target.url; not the mock): logs the
// warnings and returns "" or the error line (ending in "Nothing was sent.") for an exit 2.
std::string preflight_target(const Config& config);

// preflight_target(), its error logged: false means exit 2.
bool target_passes_preflight(const Config& config);

}  // namespace convoy::controller
