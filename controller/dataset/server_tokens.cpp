#include "controller/dataset/server_tokens.hpp"

#include <curl/curl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>
#include <vector>

#include "common/curl_handle.hpp"
#include "common/log.hpp"

namespace convoy::controller {

namespace {

struct Reply {
  long status = 0;
  std::string body;
};

size_t on_body(char* data, size_t size, size_t count, void* user) noexcept {
  try {
    static_cast<std::string*>(user)->append(data, size * count);
    return size * count;
  } catch (...) {
    return 0;
  }
}

std::string trim_base(std::string base) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0)
    base.resize(base.size() - 3);
  return base;
}

// One blocking JSON POST with target.headers and the API key. Throws std::runtime_error when the
// server cannot be reached.
Reply post_json(const Config& config, const std::string& url, const std::string& body) {
  CurlEasy easy = CurlEasy::create();
  if (!easy) throw std::runtime_error("curl_easy_init failed");
  CurlHeaders headers;
  headers.append("Content-Type: application/json");
  for (const auto& [name, value] : config.target.headers) headers.append(name + ": " + value);
  if (const char* key = std::getenv(config.target.api_key_env.c_str()); key && *key) {
    headers.append(std::string("Authorization: Bearer ") + key);
  }
  Reply reply;
  char error[CURL_ERROR_SIZE] = {};
  CURL* c = easy.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (config.target.insecure) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (const CURLcode rc = curl_easy_perform(c); rc != CURLE_OK) {
    throw std::runtime_error("POST " + url + ": " + (*error ? error : curl_easy_strerror(rc)));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

std::string excerpt(const std::string& body) {
  return body.size() <= 200 ? body : body.substr(0, 200) + "...";
}

// The integer at `field` (or "usage.prompt_tokens") of a 200 reply; ServerTokensError otherwise.
int64_t reply_integer(const Reply& reply, const std::string& url, const char* object,
                      const char* field) {
  if (reply.status == 404) {
    throw ServerTokensError("dataset.tokenizer: POST " + url +
                            ": 404: the target has no such route (Dynamo's frontend serves no "
                            "/tokenize: give dataset.tokenizer a tokenizer.json path)");
  }
  if (reply.status != 200) {
    throw ServerTokensError("dataset.tokenizer: POST " + url + ": HTTP " +
                            std::to_string(reply.status) + ": " + excerpt(reply.body));
  }
  rapidjson::Document doc;
  doc.Parse(reply.body.data(), reply.body.size());
  const rapidjson::Value* v = doc.HasParseError() || !doc.IsObject() ? nullptr : &doc;
  if (v && object) {
    const auto it = v->FindMember(object);
    v = it != v->MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
  }
  if (v) {
    const auto it = v->FindMember(field);
    if (it != v->MemberEnd() && it->value.IsInt64()) return it->value.GetInt64();
  }
  throw ServerTokensError("dataset.tokenizer: POST " + url + ": the reply has no integer " +
                          (object ? std::string(object) + "." : "") + field + ": " +
                          excerpt(reply.body));
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

struct Message {
  const char* role;
  std::string content;
};

std::string messages_json(const std::vector<Message>& messages) {
  rapidjson::StringBuffer out;
  Writer w(out);
  w.StartArray();
  for (const Message& m : messages) {
    w.StartObject();
    w.Key("role");
    w.String(m.role);
    w.Key("content");
    write_string(w, m.content);
    w.EndObject();
  }
  w.EndArray();
  return out.GetString();
}

}  // namespace

ServerTokenCounter::ServerTokenCounter(const Config& config, std::string base_url)
    : config_(config), url_(trim_base(std::move(base_url)) + "/tokenize") {}

int64_t ServerTokenCounter::count(std::string_view text) const {
  rapidjson::StringBuffer out;
  Writer w(out);
  w.StartObject();
  w.Key("model");
  write_string(w, config_.target.model);
  w.Key("prompt");
  write_string(w, text);
  w.Key("add_special_tokens");
  w.Bool(false);
  w.EndObject();
  return reply_integer(post_json(config_, url_, out.GetString()), url_, nullptr, "count");
}

int64_t ServerTokenCounter::count_chat(const std::string& messages) const {
  const std::string body = R"({"model":)" +
                           [&] {
                             rapidjson::StringBuffer out;
                             Writer w(out);
                             write_string(w, config_.target.model);
                             return std::string(out.GetString());
                           }() +
                           R"(,"messages":)" + messages + R"(,"add_generation_prompt":true})";
  return reply_integer(post_json(config_, url_, body), url_, nullptr, "count");
}

namespace {

// The server's count of a whole chat prompt: /tokenize's chat form, or where the server has no
// /tokenize, usage.prompt_tokens of a one-token chat completion (sent before the run, in no
// metric).
class ChatCounter {
 public:
  ChatCounter(const Config& config, const std::string& base_url)
      : config_(config), tokenize_(config, base_url), base_(trim_base(base_url)) {}

  int64_t count(const std::vector<Message>& messages) {
    const std::string json = messages_json(messages);
    if (!probe_) {
      try {
        return tokenize_.count_chat(json);
      } catch (const ServerTokensError& e) {
        if (std::string_view(e.what()).find(": 404:") == std::string_view::npos) throw;
        log_info("count_chat_template: ", tokenize_.source(),
                 " answers 404; learning the template from usage.prompt_tokens of one-token "
                 "chat requests instead");
        probe_ = true;
      }
    }
    const std::string url = base_ + "/v1/chat/completions";
    rapidjson::StringBuffer model;
    Writer w(model);
    write_string(w, config_.target.model);
    const std::string body = std::string(R"({"model":)") + model.GetString() + R"(,"messages":)" +
                             json + R"(,"max_tokens":1,"stream":false})";
    return reply_integer(post_json(config_, url, body), url, "usage", "prompt_tokens");
  }

 private:
  const Config& config_;
  ServerTokenCounter tokenize_;
  std::string base_;
  bool probe_ = false;  // the server has no /tokenize
};

void learn_overheads(const Config& config, const std::string& base_url, const TokenCounter& counter,
                     TokenPlan& plan) {
  ChatCounter chat(config, base_url);
  std::vector<Message> messages;
  int64_t contents = 0;
  auto add = [&](const char* role, std::string text) {
    contents += counter.count(text);
    messages.push_back({role, std::move(text)});
  };
  auto words = [&](uint64_t position, int64_t tokens) {
    std::string text;
    plan.text->append(text, position, tokens, false);
    return text;
  };
  if (config.dataset.shared_prefix_tokens > 0) add("system", words(1000, 24));
  std::string first = "[c0]";
  plan.text->append(first, 2000, 24, true);
  add("user", std::move(first));
  const int64_t one = chat.count(messages);
  const int64_t one_contents = contents;
  plan.first_turn_overhead = one - one_contents;
  add("assistant", words(3000, 16));
  add("user", words(4000, 24));
  const int64_t two = chat.count(messages);
  plan.later_turn_overhead = (two - one) - (contents - one_contents);
  log_info("count_chat_template: the chat template adds ", plan.first_turn_overhead,
           " tokens to a first turn and ", plan.later_turn_overhead,
           " to each later one; taken off the user text");
}

}  // namespace

std::shared_ptr<const TokenPlan> learn_token_plan(const Config& config, const std::string& base_url,
                                                  std::shared_ptr<const TokenPlan> local) {
  if (!needs_server_tokens(config)) return local;
  auto plan = std::make_shared<TokenPlan>();
  std::shared_ptr<const TokenCounter> counter;
  if (config.dataset.tokenizer_is_server()) {
    counter = std::make_shared<ServerTokenCounter>(config, base_url);
    log_info("dataset.tokenizer: counting the corpus's words with ", counter->source());
    plan->text = std::make_shared<ExactText>(Corpus::embedded(), *counter);
  } else {
    counter = local->counter;
    plan->counter = local->counter;
    plan->text = local->text;
    plan->random = local->random;
  }
  if (config.dataset.count_chat_template) learn_overheads(config, base_url, *counter, *plan);
  return plan;
}

}  // namespace convoy::controller
