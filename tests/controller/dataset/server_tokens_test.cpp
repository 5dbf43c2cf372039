// dataset.tokenizer: server and dataset.count_chat_template against a local server that answers
// POST /tokenize in vLLM's shapes with the real Qwen3 tokenizer, renders chat prompts with
// Qwen3's ChatML template (system/user/assistant turns, generation prompt), and, in its
// no-/tokenize form, answers chat completions with usage.prompt_tokens as Dynamo's frontend does.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <memory>
#include <string>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/server_tokens.hpp"
#include "controller/dataset/token_plan.hpp"
#include "controller/tokenizer_files.hpp"
#include "e2e/tiny_http_server.hpp"
#include "tokenizer/tokenizer.hpp"

namespace convoy::controller {
namespace {

using test::TinyHttpServer;

// Qwen3's template for plain-text messages without tools (its tokenizer_config.json).
std::string render_chatml(const rapidjson::Value& messages) {
  std::string out;
  for (const auto& m : messages.GetArray()) {
    out += "<|im_start|>" + std::string(m["role"].GetString()) + "\n" + m["content"].GetString() +
           "<|im_end|>\n";
  }
  return out + "<|im_start|>assistant\n";
}

struct FakeServer {
  explicit FakeServer(bool tokenize)
      : qwen(tokenizer::Tokenizer::load(test::tokenizer_folder("qwen3"))),
        server([this, tokenize](const std::string& request, int) {
          const bool is_tokenize = request.rfind("POST /tokenize ", 0) == 0;
          const bool is_chat = request.rfind("POST /v1/chat/completions ", 0) == 0;
          if ((is_tokenize && !tokenize) || (!is_tokenize && !is_chat)) {
            return TinyHttpServer::reply("404 Not Found", "", "");
          }
          rapidjson::Document body;
          body.Parse(request.substr(request.find("\r\n\r\n") + 4).c_str());
          int64_t count = 0;
          if (body.HasMember("messages")) {
            count = static_cast<int64_t>(qwen->count(render_chatml(body["messages"])));
          } else {
            count = static_cast<int64_t>(qwen->count(body["prompt"].GetString()));
          }
          ++(is_chat ? chats : tokenizes);
          const std::string json = is_chat
                                       ? R"({"choices":[],"usage":{"prompt_tokens":)" +
                                             std::to_string(count) + R"(,"completion_tokens":1}})"
                                       : R"({"count":)" + std::to_string(count) +
                                             R"(,"max_model_len":40960,"tokens":[]})";
          return TinyHttpServer::reply("200 OK", "Content-Type: application/json\r\n", json);
        }) {}
  std::unique_ptr<tokenizer::Tokenizer> qwen;
  std::atomic<int> chats{0};
  std::atomic<int> tokenizes{0};
  TinyHttpServer server;
};

Config config_for(const std::string& tokenizer, const std::string& extra) {
  return parse_config("target: {url: http://127.0.0.1:1, model: qwen}\ndataset:\n  tokenizer: " +
                          tokenizer + "\n" + extra,
                      "", {});
}

}  // namespace

TEST_CASE("tokenizer: server counts by the target's /tokenize, exactly as the local file does") {
  FakeServer fake(true);
  const std::string folder = test::tokenizer_folder("qwen3");
  const std::string draws =
      "  conversations: 50\n  input_tokens: {mean: 300, stddev: 80, min: 30}\n";
  const auto plan = learn_token_plan(config_for("server", draws), fake.server.url(), nullptr);
  REQUIRE(plan);
  CHECK(plan->text->source() == "POST " + fake.server.url() + "/tokenize");
  const auto by_server = open_dataset(config_for("server", draws), plan);
  const auto by_file = open_dataset(config_for(folder, draws));
  for (uint64_t i = 0; i < 50; i += 7) {
    const auto a = by_server->conversation(i);
    const auto b = by_file->conversation(i);
    REQUIRE(a.turns.size() == b.turns.size());
    for (size_t k = 0; k < a.turns.size(); ++k) {
      CHECK(a.turns[k].user_text == b.turns[k].user_text);
      CHECK(static_cast<int64_t>(fake.qwen->count(a.turns[k].user_text)) ==
            a.turns[k].input_tokens_est);
    }
  }
}

TEST_CASE("tokenizer: server without /tokenize fails before the run, naming the route") {
  FakeServer fake(false);
  try {
    learn_token_plan(config_for("server", ""), fake.server.url(), nullptr);
    FAIL("no ServerTokensError");
  } catch (const ServerTokensError& e) {
    const std::string what = e.what();
    CHECK(what.find("POST " + fake.server.url() + "/tokenize: 404") != std::string::npos);
  }
  CHECK(fake.chats == 0);  // nothing else was sent
}

TEST_CASE("count_chat_template: the server's prompt_tokens equal the drawn tokens exactly") {
  const std::string folder = test::tokenizer_folder("qwen3");
  for (const bool tokenize : {true, false}) {
    for (const int64_t prefix : {0, 50}) {
      FakeServer fake(tokenize);
      INFO("/tokenize " << tokenize << " prefix " << prefix);
      const std::string extra =
          "  count_chat_template: true\n  shared_prefix_tokens: " + std::to_string(prefix) +
          "\n  conversations: 5\n" + "  input_tokens: {mean: 128, stddev: 0}\n" +
          "  turns: {mean: 3, stddev: 0}\n";
      const Config config = config_for(folder, extra);
      const auto plan = learn_token_plan(config, fake.server.url(), local_token_plan(config));
      CHECK((tokenize ? fake.tokenizes : fake.chats) == 2);  // one shape, two probes
      CHECK(plan->first_turn_overhead > 0);
      CHECK(plan->later_turn_overhead > 0);
      const auto dataset = open_dataset(config, plan);
      for (uint64_t i = 0; i < 5; ++i) {
        const proto::Conversation c = dataset->conversation(i);
        // As the server sees each turn: the history so far (replies of 20 tokens each).
        std::string rendered;
        if (prefix > 0) rendered += "<|im_start|>system\n" + c.system_prompt + "<|im_end|>\n";
        int64_t replies = 0;
        for (size_t k = 0; k < c.turns.size(); ++k) {
          rendered += "<|im_start|>user\n" + c.turns[k].user_text + "<|im_end|>\n";
          const auto isl =
              static_cast<int64_t>(fake.qwen->count(rendered + "<|im_start|>assistant\n"));
          CHECK(isl == prefix + 128 * static_cast<int64_t>(k + 1) + replies);
          std::string reply;
          plan->text->append(reply, 77 * k, 20, false);
          rendered += "<|im_start|>assistant\n" + reply + "<|im_end|>\n";
          replies += 20;
        }
      }
    }
  }
}

}  // namespace convoy::controller
