// convoy-mock conforms to the real thing: the same requests go to a real Dynamo
// frontend (scripts/dynamo up) and to convoy-mock started with the matching contract, and the
// answers are compared: status codes and error bodies byte for byte, and for replies the fields
// convoy reads (object, content, finish_reason, usage with cached tokens, nvext.worker_id, the
// order of a streamed reply's events). 1.6.1 is the header era (`--contract header`), 1.2.1 the
// legacy era (`--contract legacy`). docs/mock.md lists the cases.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dynamo/dynamo_stack.hpp"
#include "mock/test_client.hpp"

namespace convoy::test {
namespace {

using mock::test::Client;
using mock::test::Headers;
using mock::test::Response;

enum class Compare {
  kExact,  // status and body byte for byte
  kShape,  // status and the fields convoy reads (shape())
};

struct Case {
  std::string name;
  std::string method;
  std::string path;
  std::string body;
  Headers headers;
  Compare compare = Compare::kExact;
};

bool is_string(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString();
}

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  const auto it = v.FindMember(key);
  return it == v.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

// usage as convoy reads it: the three counts (completion_tokens by value: both servers generate
// exactly max_tokens) and whether cached tokens are reported.
std::string usage_shape(const rapidjson::Value& reply) {
  const rapidjson::Value* usage = member(reply, "usage");
  if (usage == nullptr) return "";
  std::string out = " usage{";
  const rapidjson::Value* p = member(*usage, "prompt_tokens");
  const rapidjson::Value* c = member(*usage, "completion_tokens");
  const rapidjson::Value* t = member(*usage, "total_tokens");
  out += p != nullptr && p->IsInt64() ? "prompt " : "prompt? ";
  out += c != nullptr && c->IsInt64() ? "completion=" + std::to_string(c->GetInt64()) : "?";
  if (p != nullptr && c != nullptr && t != nullptr && p->IsInt64() && c->IsInt64() &&
      t->IsInt64()) {
    out += t->GetInt64() == p->GetInt64() + c->GetInt64() ? " total=sum" : " total!=sum";
  }
  const rapidjson::Value* details = member(*usage, "prompt_tokens_details");
  if (details != nullptr && member(*details, "cached_tokens") != nullptr) out += " cached";
  return out + "}";
}

std::string worker_shape(const rapidjson::Value& reply) {
  const rapidjson::Value* nvext = member(reply, "nvext");
  const rapidjson::Value* id = nvext == nullptr ? nullptr : member(*nvext, "worker_id");
  if (id == nullptr) return "";
  std::string out = " worker_id{";
  for (const char* key :
       {"prefill_worker_id", "prefill_dp_rank", "decode_worker_id", "decode_dp_rank"}) {
    const rapidjson::Value* v = member(*id, key);
    out += std::string(key) + (v != nullptr && v->IsUint64() ? " " : "? ");
  }
  return out + "}";
}

// One reply object (or one streamed chunk) as convoy reads it.
std::string reply_shape(const rapidjson::Value& reply) {
  std::string out = is_string(reply, "object") ? reply["object"].GetString() : "?";
  const rapidjson::Value* choices = member(reply, "choices");
  if (choices != nullptr && choices->IsArray() && !choices->Empty()) {
    const rapidjson::Value& choice = (*choices)[0];
    const rapidjson::Value* message = member(choice, "message");
    const rapidjson::Value* delta = member(choice, "delta");
    if (message != nullptr) out += is_string(*message, "content") ? " content" : " content?";
    if (delta != nullptr && is_string(*delta, "content")) out += " delta";
    if (is_string(choice, "text")) out += " text";
    if (const rapidjson::Value* f = member(choice, "finish_reason"); f != nullptr) {
      out += std::string(" finish=") + (f->IsString() ? f->GetString() : "?");
    }
  } else if (choices != nullptr) {
    out += " no-choices";
  }
  return out + usage_shape(reply) + worker_shape(reply);
}

// A streamed chunk with a choice but no text, no finish_reason and no usage: the real frontend
// sends one now and then (a generated token whose text is not yet whole UTF-8 decodes to an empty
// delta), and convoy reads nothing from it, so the comparison leaves it out.
bool carries_nothing(const rapidjson::Value& chunk) {
  const rapidjson::Value* choices = member(chunk, "choices");
  if (choices == nullptr || !choices->IsArray() || choices->Empty()) return false;
  if (member(chunk, "usage") != nullptr) return false;
  const rapidjson::Value& choice = (*choices)[0];
  const rapidjson::Value* delta = member(choice, "delta");
  const bool text =
      delta != nullptr && is_string(*delta, "content") && (*delta)["content"].GetStringLength() > 0;
  return !text && member(choice, "finish_reason") == nullptr;
}

// A whole reply: one object, or a stream's events with consecutive repeats folded and chunks
// that carry nothing convoy reads left out.
std::string shape(const Response& res) {
  if (res.header("content-type").rfind("text/event-stream", 0) != 0) {
    return reply_shape(mock::test::parse_json(res.body));
  }
  std::string out;
  std::string last;
  for (const std::string& data : mock::test::sse_data(res.body)) {
    if (data != "[DONE]" && carries_nothing(mock::test::parse_json(data))) continue;
    const std::string event =
        data == "[DONE]" ? "[DONE]" : reply_shape(mock::test::parse_json(data));
    if (event != last) out += event + "\n";
    last = event;
  }
  return out;
}

Response send(Client& client, const Case& c) {
  Headers headers = c.headers;
  if (c.method == "POST") headers.emplace_back("Content-Type", "application/json");
  return client.request(c.method, c.path, c.body, headers);
}

// Sends every case to both servers and compares.
void conform(uint16_t real_port, uint16_t mock_port, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO("case: " << c.name << "\n  " << c.method << " " << c.path << " " << c.body);
    Client real(real_port);
    Client mocked(mock_port);
    const Response r = send(real, c);
    const Response m = send(mocked, c);
    INFO("real:\n" << r.body << "\nmock:\n" << m.body);
    REQUIRE(r.status != 0);
    CHECK(m.status == r.status);
    if (c.compare == Compare::kExact) {
      CHECK(m.body == r.body);
      CHECK(m.header("allow") == r.header("allow"));
    } else {
      CHECK(shape(m) == shape(r));
    }
  }
}

std::string chat(const std::string& model, const std::string& extra, int max_tokens = 3) {
  return R"({"model":")" + model +
         R"(","messages":[{"role":"user","content":"Tell me about the sea."}],"max_tokens":)" +
         std::to_string(max_tokens) + extra + "}";
}

std::string control(const std::string& json) {
  return R"(,"nvext":{"session_control":)" + json + "}";
}

// Requests both eras answer the same way.
std::vector<Case> common_cases(const std::string& model) {
  const std::string worker_id = R"(,"nvext":{"extra_fields":["worker_id"]})";
  const std::string stream = R"(,"stream":true,"stream_options":{"include_usage":true})";
  return {
      {"plain chat", "POST", "/v1/chat/completions", chat(model, ""), {}, Compare::kShape},
      {"nvext.extra_fields worker_id",
       "POST",
       "/v1/chat/completions",
       chat(model, worker_id),
       {},
       Compare::kShape},
      {"streamed chat with usage",
       "POST",
       "/v1/chat/completions",
       chat(model, stream),
       {},
       Compare::kShape},
      {"streamed chat with usage and worker_id",
       "POST",
       "/v1/chat/completions",
       chat(model, stream + worker_id),
       {},
       Compare::kShape},
      {"completions",
       "POST",
       "/v1/completions",
       R"({"model":")" + model + R"(","prompt":"The sea is","max_tokens":3})",
       {},
       Compare::kShape},
      {"unknown model", "POST", "/v1/chat/completions", chat("not-a-model", ""), {}},
      {"missing messages", "POST", "/v1/chat/completions", R"({"model":")" + model + R"("})", {}},
      {"missing role",
       "POST",
       "/v1/chat/completions",
       R"({"model":")" + model + R"(","messages":[{"content":"hi"}]})",
       {}},
      {"empty messages",
       "POST",
       "/v1/chat/completions",
       R"({"model":")" + model + R"(","messages":[]})",
       {}},
      {"max_tokens -1", "POST", "/v1/chat/completions", chat(model, "", -1), {}},
      {"trailing comma", "POST", "/v1/chat/completions", R"({"model":")" + model + R"(",})", {}},
      {"empty body", "POST", "/v1/chat/completions", "", {}},
      {"unknown route", "POST", "/v1/unknown", "{}", {}},
      {"GET on a POST route", "GET", "/v1/chat/completions", "", {}},
      {"POST on a GET route", "POST", "/v1/models", "", {}},
  };
}

std::string served_model(uint16_t port) {
  Client client(port);
  const auto models = mock::test::parse_json(client.get("/v1/models").body);
  REQUIRE(models.IsObject());
  REQUIRE(models["data"].Size() >= 1);
  return models["data"][0]["id"].GetString();
}

TEST_CASE("conformance: convoy-mock --contract header answers as the real Dynamo 1.6.1 does") {
  DynamoOptions options;
  options.version = "1.6.1";
  options.workers = 2;
  options.affinity_ttl_s = 60;
  DynamoStack stack(options, "conform-161");
  CONVOY_REQUIRE_DYNAMO(stack);
  const auto real_port = static_cast<uint16_t>(stack.port());
  const std::string model = served_model(real_port);

  mock::Options mo = mock::test::test_options();
  mo.model = model;
  mo.contract = mock::Contract::kHeader;
  mo.affinity_ttl_s = 60;
  mo.workers = 2;
  mock::test::RunningMock mocked(mo);

  std::vector<Case> cases = common_cases(model);
  const std::string id = R"({"session_id":"conv-1")";
  const std::vector<std::string> actions = {R"(,"action":"bind","timeout":30)",
                                            R"(,"action":"open","timeout":30)",
                                            R"(,"action":"close")", ""};
  for (const std::string& action : actions) {
    cases.push_back({"session_control " + (action.empty() ? "bare" : action),
                     "POST",
                     "/v1/chat/completions",
                     chat(model, control(id + action + "}")),
                     {}});
  }
  cases.push_back({"unknown nvext field",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, R"(,"nvext":{"bogus":1})"),
                   {}});
  // 1.2.1 never answers this one (the connection stays open): header era only.
  cases.push_back({"max_tokens 0", "POST", "/v1/chat/completions", chat(model, "", 0), {}});
  cases.push_back({"X-Dynamo-Session-ID of 256 bytes",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, ""),
                   {{"X-Dynamo-Session-ID", std::string(256, 'a')}},
                   Compare::kShape});
  cases.push_back({"X-Dynamo-Session-ID of 257 bytes",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, ""),
                   {{"X-Dynamo-Session-ID", std::string(257, 'a')}}});
  cases.push_back({"X-Dynamo-Session-ID with final marker and parent",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, ""),
                   {{"X-Dynamo-Session-ID", "child-1"},
                    {"X-Dynamo-Parent-Session-ID", "lead-1"},
                    {"X-Dynamo-Session-Final", "true"}},
                   Compare::kShape});
  conform(real_port, mocked.port, cases);

  SUBCASE("an explicit worker that disagrees with the session's binding") {
    // Bind the session, then pin it to the other worker: each server names its own workers.
    for (const bool real : {true, false}) {
      INFO((real ? "real" : "mock"));
      Client client(real ? real_port : mocked.port);
      const Headers h = {{"X-Dynamo-Session-ID", "pin-1"}, {"Content-Type", "application/json"}};
      const auto first = client.post("/v1/chat/completions",
                                     chat(model, R"(,"nvext":{"extra_fields":["worker_id"]})"), h);
      REQUIRE(first.status == 200);
      const uint64_t bound =
          mock::test::parse_json(first.body)["nvext"]["worker_id"]["decode_worker_id"].GetUint64();
      std::string other;
      if (real) {
        for (const std::string& w : stack.worker_ids()) {
          if (w != std::to_string(bound)) other = w;
        }
      } else {
        other = std::to_string(bound == mock::kInstanceIdBase ? bound + 1 : bound - 1);
      }
      REQUIRE_FALSE(other.empty());
      const auto res =
          client.post("/v1/chat/completions",
                      chat(model, R"(,"nvext":{"backend_instance_id":)" + other + "}"), h);
      CHECK(res.status == 400);
      CHECK(res.body == R"({"message":"Invalid request","type":"Bad Request","code":400})");
    }
  }
}

TEST_CASE("conformance: convoy-mock --contract legacy answers as the real Dynamo 1.2.1 does") {
  DynamoOptions options;
  options.version = "1.2.1";
  options.workers = 2;
  DynamoStack stack(options, "conform-121");
  CONVOY_REQUIRE_DYNAMO(stack);
  const auto real_port = static_cast<uint16_t>(stack.port());
  const std::string model = served_model(real_port);

  mock::Options mo = mock::test::test_options();
  mo.model = model;
  mo.contract = mock::Contract::kLegacy;
  mo.workers = 2;
  mock::test::RunningMock mocked(mo);

  std::vector<Case> cases = common_cases(model);
  const std::string id = R"({"session_id":"conv-2")";
  cases.push_back({"session_control open",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, control(id + R"(,"action":"open","timeout":30})")),
                   {},
                   Compare::kShape});
  cases.push_back({"session_control bare",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, control(id + "}")),
                   {},
                   Compare::kShape});
  cases.push_back({"session_control close",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, control(id + R"(,"action":"close"})")),
                   {},
                   Compare::kShape});
  cases.push_back({"session_control bind",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, control(id + R"(,"action":"bind","timeout":30})")),
                   {}});
  cases.push_back({"session_control unknown action",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, control(id + R"(,"action":"frobnicate"})")),
                   {}});
  cases.push_back({"session_control without session_id",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, control(R"({"action":"open"})")),
                   {}});
  cases.push_back({"unknown nvext field",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, R"(,"nvext":{"bogus":1})"),
                   {},
                   Compare::kShape});
  cases.push_back({"X-Dynamo-Session-ID of 257 bytes (ignored)",
                   "POST",
                   "/v1/chat/completions",
                   chat(model, ""),
                   {{"X-Dynamo-Session-ID", std::string(257, 'a')}},
                   Compare::kShape});
  conform(real_port, mocked.port, cases);
}

}  // namespace
}  // namespace convoy::test
