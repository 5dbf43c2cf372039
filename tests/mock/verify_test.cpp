// What a verifying client reads back: nvext.worker_id in Dynamo's
// WorkerIdInfo shape (lib/llm/src/protocols/openai/nvext.rs) on every streamed content chunk
// and in whole bodies, and the request log's per-request routing facts.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

const std::string kWorkerId = R"("nvext":{"extra_fields":["worker_id"]})";

void check_worker_id(const rapidjson::Value& doc, uint64_t instance, int rank) {
  REQUIRE(doc.HasMember("nvext"));
  const auto& id = doc["nvext"]["worker_id"];
  REQUIRE(id.IsObject());
  CHECK(id["prefill_worker_id"].GetUint64() == instance);
  CHECK(id["decode_worker_id"].GetUint64() == instance);
  CHECK(id["prefill_dp_rank"].GetInt() == rank);
  CHECK(id["decode_dp_rank"].GetInt() == rank);
}

TEST_CASE("nvext.worker_id has Dynamo's WorkerIdInfo shape in whole and streamed replies") {
  auto options = test_options();
  options.workers = 4;
  options.data_parallel_size = 2;
  options.router_mode = RouterMode::kRoundRobin;
  options.itl_ms = 0.2;
  RunningMock mock(options);
  Client client(mock.port);
  const auto stats = parse_json(client.get("/mock/stats").body);
  const auto workers = stats["workers"].GetArray();
  REQUIRE(workers.Size() == 4);
  // Worker w is instance 1000 + w / 2, DP rank w % 2, as /mock/stats says too.
  for (int w = 0; w < 4; ++w) {
    CHECK(workers[static_cast<rapidjson::SizeType>(w)]["instance_id"].GetUint64() ==
          1000u + static_cast<uint64_t>(w / 2));
    CHECK(workers[static_cast<rapidjson::SizeType>(w)]["dp_rank"].GetInt() == w % 2);
  }

  SUBCASE("non-streaming: top-level nvext of the body") {
    for (int w = 0; w < 4; ++w) {  // round robin: worker w serves request w
      const auto res =
          client.post("/v1/chat/completions", chat_body({{"user", "hi"}}, 2, false, kWorkerId));
      REQUIRE(res.status == 200);
      check_worker_id(parse_json(res.body), 1000u + static_cast<uint64_t>(w / 2), w % 2);
    }
    const auto res =
        client.post("/v1/completions",
                    R"({"model":"mock-model","prompt":"abcd","max_tokens":1,)" + kWorkerId + "}");
    REQUIRE(res.status == 200);
    check_worker_id(parse_json(res.body), 1000, 0);
  }
  SUBCASE("streaming: every content chunk, never the usage chunk") {
    REQUIRE(client.post("/v1/chat/completions", chat_body({{"user", "x"}}, 1, false)).status ==
            200);  // worker 0
    const auto res = client.post(
        "/v1/chat/completions",
        chat_body(
            {{"user", "hi"}}, 4, true,
            R"("stream_options":{"include_usage":true},"nvext":{"extra_fields":["worker_id","timing"]})"));
    REQUIRE(res.status == 200);
    int content = 0;
    int usage = 0;
    int timing = 0;
    for (const auto& data : sse_data(res.body)) {
      if (data == "[DONE]") continue;
      const auto doc = parse_json(data);
      if (doc["choices"].Empty()) {
        ++usage;
        CHECK_FALSE(doc.HasMember("nvext"));
        continue;
      }
      ++content;
      check_worker_id(doc, 1000, 1);  // worker 1: instance 1000, rank 1
      // Timing rides the final chunk only (Dynamo emits it with finish_reason).
      const bool last = doc["choices"][0]["finish_reason"].IsString();
      CHECK(doc["nvext"].HasMember("timing") == last);
      timing += doc["nvext"].HasMember("timing") ? 1 : 0;
    }
    CHECK(content == 4 + 1);  // the tokens and the finish chunk, each with worker_id
    CHECK(usage == 1);
    CHECK(timing == 1);
  }
  SUBCASE("not asked: no nvext") {
    const auto res = client.post("/v1/chat/completions", chat_body({{"user", "hi"}}, 2, true));
    for (const auto& data : sse_data(res.body)) {
      if (data != "[DONE]") CHECK_FALSE(parse_json(data).HasMember("nvext"));
    }
  }
}

TEST_CASE("the request log names each request's session, parent, final marker and worker") {
  const std::string path = std::string(CONVOY_BINARY_DIR) + "/mock_routing_log_test.jsonl";
  std::remove(path.c_str());
  {
    auto options = test_options();
    options.contract = Contract::kHeader;
    options.affinity_ttl_s = 60;
    options.log_requests_path = path;
    RunningMock mock(options);
    Client client(mock.port);
    REQUIRE(client
                .post("/v1/chat/completions", chat_body({{"user", "hi"}}, 1, false),
                      {{"X-Dynamo-Session-ID", " child "},
                       {"X-Dynamo-Parent-Session-ID", "lead"},
                       {"X-Dynamo-Session-Final", "true"}})
                .status == 200);
    REQUIRE(client
                .post("/v1/chat/completions", chat_body({{"user", "hi"}}, 1, false),
                      {{"X-Dynamo-Session-ID", std::string(300, 'x')}})
                .status == 400);
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 2);
  const auto first = parse_json(lines[0]);
  const auto& r = first["routing"];
  CHECK(std::string(r["session_id"].GetString()) == "child");
  CHECK(std::string(r["parent_session_id"].GetString()) == "lead");
  CHECK(r["session_final"].GetBool());
  CHECK(r["frontend"].GetInt() == 0);
  CHECK(r["worker"].GetInt() >= 0);
  CHECK(r["status"].GetInt() == 200);
  const auto second = parse_json(lines[1]);
  CHECK(second["routing"]["status"].GetInt() == 400);
  CHECK(second["routing"]["worker"].GetInt() == -1);
  CHECK(second["routing"]["parent_session_id"].IsNull());
  CHECK(second["routing"]["session_final"].IsNull());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace convoy::mock::test
