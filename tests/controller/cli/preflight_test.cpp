// The check before traffic, its pure parts: the model list, the closest ids, a doubled route,
// the key warnings and what each GET /v1/models answer means.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/run/preflight.hpp"

using namespace convoy;
using namespace convoy::controller;

namespace {

ModelsReply models_reply(int64_t status, std::string body) {
  ModelsReply r;
  r.http_status = status;
  r.body = std::move(body);
  return r;
}

proto::TargetSettings preflight_target_settings(const std::string& model,
                                                const std::string& key_env) {
  proto::TargetSettings t;
  t.model = model;
  t.api_key_env = key_env;
  return t;
}

constexpr const char kServedList[] =
    R"({"object":"list","data":[{"id":"llama-3-70b","object":"model"},)"
    R"({"id":"qwen3-0.6b","object":"model"},{"id":"Qwen/Qwen3-0.6B","object":"model"}]})";

}  // namespace

TEST_CASE("preflight: the model list, closest ids first") {
  CHECK(models_url("http://h:8000") == "http://h:8000/v1/models");
  CHECK(models_url("http://h:8000/") == "http://h:8000/v1/models");
  CHECK(models_url("http://h:8000/v1/") == "http://h:8000/v1/models");
  const auto ids = served_model_ids(kServedList);
  REQUIRE(ids);
  CHECK(*ids == std::vector<std::string>{"llama-3-70b", "qwen3-0.6b", "Qwen/Qwen3-0.6B"});
  CHECK_FALSE(served_model_ids("data: {}\n\n"));
  CHECK_FALSE(served_model_ids(R"({"choices":[]})"));
  CHECK_FALSE(served_model_ids(R"({"data":[1]})"));
  CHECK(served_model_ids(R"({"data":[]})")->empty());
  CHECK(closest_first("Qwen/Qwen3-0.6", *ids).front() == "Qwen/Qwen3-0.6B");
}

TEST_CASE("preflight: a base url that already holds the route is refused with the fix") {
  CHECK(doubled_path_problem("http://h:8000", Endpoint::kChat).empty());
  CHECK(doubled_path_problem("http://h:8000/v1", Endpoint::kChat).empty());
  CHECK(doubled_path_problem("http://h:8000/v1/", Endpoint::kCompletions).empty());
  const std::string chat =
      doubled_path_problem("http://h:8000/v1/chat/completions", Endpoint::kChat);
  CHECK(chat.find("already ends in /chat/completions") != std::string::npos);
  CHECK(chat.find("/v1/chat/completions/v1/chat/completions") != std::string::npos);
  CHECK(chat.find("Set target.url to the server's base url, http://h:8000 ") != std::string::npos);
  CHECK_FALSE(doubled_path_problem("http://h/v1/completions", Endpoint::kCompletions).empty());
  CHECK_FALSE(doubled_path_problem("http://h/v1/embeddings/", Endpoint::kEmbeddings).empty());
}

TEST_CASE("preflight: the key settings warn, never fail") {
  CHECK(api_key_warning(preflight_target_settings("m", ""), nullptr)
            .find("target.api_key_env is not set") != std::string::npos);
  CHECK(api_key_warning(preflight_target_settings("m", "MY_KEY"), nullptr)
            .find("$MY_KEY, which is not set") != std::string::npos);
  CHECK(api_key_warning(preflight_target_settings("m", "MY_KEY"), "").find("not set") !=
        std::string::npos);
  CHECK(api_key_warning(preflight_target_settings("m", "MY_KEY"), "sk-1").empty());
}

TEST_CASE("preflight: what each GET /v1/models answer means") {
  const auto target = preflight_target_settings("qwen3-0.6", "MY_KEY");
  const std::string url = "http://h/v1/models";

  SUBCASE("401 or 403: exit 2 naming the variable to set") {
    const auto unset = judge_models_reply(target, url, models_reply(401, "nope"), nullptr);
    CHECK(unset.error.find("answered 401") != std::string::npos);
    CHECK(unset.error.find("export MY_KEY=") != std::string::npos);
    CHECK(unset.error.find("Nothing was sent.") != std::string::npos);
    const auto refused = judge_models_reply(target, url, models_reply(403, "{}"), "sk-bad");
    CHECK(refused.error.find("refused the key in $MY_KEY") != std::string::npos);
  }
  SUBCASE("a model the server does not serve: exit 2 with the served ids, closest first") {
    const auto v = judge_models_reply(target, url, models_reply(200, kServedList), nullptr);
    CHECK(v.error.find("target.model 'qwen3-0.6' is not served") != std::string::npos);
    CHECK(v.error.find("it serves: qwen3-0.6b, Qwen/Qwen3-0.6B, llama-3-70b") != std::string::npos);
    CHECK(v.error.find("Nothing was sent.") != std::string::npos);
  }
  SUBCASE("the model is served: nothing to say") {
    const auto v = judge_models_reply(preflight_target_settings("qwen3-0.6b", ""), url,
                                      models_reply(200, kServedList), nullptr);
    CHECK(v.error.empty());
    CHECK(v.warnings.empty());
  }
  SUBCASE("no model list (404, another body, no answer): a warning, the run goes on") {
    for (const ModelsReply& r :
         {models_reply(404, "not found"), models_reply(200, "data: [DONE]\n\n"),
          models_reply(500, "{}"), models_reply(200, R"({"data":[]})"), ModelsReply{}}) {
      const auto v = judge_models_reply(target, url, r, nullptr);
      CHECK(v.error.empty());
      REQUIRE(v.warnings.size() == 1);
      CHECK(v.warnings[0].find("is not checked") != std::string::npos);
    }
  }
}

TEST_CASE("preflight: with target.models every listed model must be served") {
  proto::TargetSettings t = preflight_target_settings("qwen3-0.6b", "");
  t.models = {{"qwen3-0.6b", 1}, {"llama-3-70b", 2}};
  const std::string url = "http://h/v1/models";
  CHECK(judge_models_reply(t, url, models_reply(200, kServedList), nullptr).error.empty());
  t.models.push_back({"lora-sql", 1});
  const auto v = judge_models_reply(t, url, models_reply(200, kServedList), nullptr);
  CHECK(v.error.find("target.models[2].name 'lora-sql' is not served by http://h/v1/models") !=
        std::string::npos);
  CHECK(v.error.find("it serves: ") != std::string::npos);
  CHECK(v.error.find("Qwen/Qwen3-0.6B") != std::string::npos);
  CHECK(v.error.find("Nothing was sent.") != std::string::npos);
}
