// The fast path of parse_stream_event must give exactly what the DOM path gives: same validity,
// content flag, usage and text, on real chunk shapes, on edge cases of JSON and of the lookups
// (duplicate members, index after content, error objects), and on thousands of mutations.
#include "worker/stream_event_parser.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "worker/reply_parser.hpp"

using namespace convoy::worker;

namespace {

std::string describe(const ReplyChunk& c, const std::string& text) {
  return std::to_string(c.valid_json) + "|" + std::to_string(c.has_content) +
         std::to_string(c.has_output) + std::to_string(c.has_reasoning) + "|" +
         std::to_string(c.items) + "|" + std::to_string(c.usage.present) + "," +
         std::to_string(c.usage.prompt_tokens) + "," + std::to_string(c.usage.completion_tokens) +
         "," + std::to_string(c.usage.cached_tokens) + "," +
         std::to_string(c.usage.reasoning_tokens) + "|" + std::to_string(c.error.present) + "," +
         std::to_string(c.error.code) + "," + c.error.type + "," + c.error.message + "|" +
         std::to_string(c.served_by.present) + "," + c.served_by.worker + "," +
         std::to_string(c.served_by.dp_rank) + "|" + std::to_string(c.server_timing.ttft_ms) + "," +
         std::to_string(c.server_timing.total_ms) + "|" + text;
}

std::string via_document(const std::string& data, Endpoint endpoint) {
  std::string text = "before";
  const ReplyChunk c = parse_stream_event_document(data, endpoint, text);
  return describe(c, text);
}

std::string via_fast_path(const std::string& data, Endpoint endpoint) {
  std::string text = "before";
  const ReplyChunk c = parse_stream_event(data, endpoint, text);
  return describe(c, text);
}

std::vector<std::string> seeds() {
  std::vector<std::string> s = {
      R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1718000000,"choices":[{"index":0,"delta":{"content":" tokens"},"logprobs":null,"finish_reason":null}]})",
      R"({"choices":[{"delta":{"content":"a\"b\u00e9\n"},"index":1},{"index":0,"delta":{"content":"c","reasoning":"r"}}]})",
      R"({"choices":[{"delta":{"reasoning_content":"think"}}],"usage":null})",
      R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3.7,"prompt_tokens_details":{"cached_tokens":8}}})",
      R"({"choices":[],"usage":{"prompt_tokens":"12","prompt_tokens_details":null}})",
      // Reasoning models: vLLM's `reasoning`, SGLang's `reasoning_content`, both beside content,
      // and OpenAI's completion_tokens_details.reasoning_tokens.
      R"({"choices":[{"index":0,"delta":{"reasoning":"","content":"c"}},{"index":1,"delta":{"reasoning_content":"r"}}]})",
      R"({"choices":[{"delta":{"reasoning_content":"r","reasoning_content":"","content":null}}]})",
      R"({"choices":[{"index":0,"delta":{"reasoning":"why","reasoning":5}}],"usage":{"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":6}}})",
      R"({"choices":[],"usage":{"completion_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":2}}})",
      R"({"choices":[],"usage":{"completion_tokens_details":{"reasoning_tokens":"3","reasoning_tokens":4}}})",
      R"({"choices":[],"usage":{"completion_tokens_details":{"reasoning_tokens":1.5,"accepted_prediction_tokens":0}}})",
      R"({"error":{"message":"boom","type":"x","code":500}})",
      R"({"error":null,"choices":[{"text":"t","index":0}]})",
      R"({"error":false,"object":"error","message":"m"})",
      R"({"object":"text_completion","choices":[{"text":"tt","index":0},{"text":"u","index":2}]})",
      R"({"choices":[{"index":0,"delta":{"content":"x","content":"y"},"delta":{"content":"z"}}],"choices":[{"delta":{"content":"w"}}]})",
      R"({"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":2},"error":"e"})",
      R"([1,2,{"choices":[]}])",
      R"("str")",
      R"(-0.5e3)",
      R"({"choices":{"a":1}})",
      R"({"choices":[[{"delta":{"content":"n"}}],{"delta":[1]},{"delta":{"content":5}},{"delta":{"content":""}}]})",
      "\xEF\xBB\xBF{\"choices\":[{\"delta\":{\"content\":\"bom\"}}]}",
      R"({"choices":[{"index":18446744073709551615,"delta":{"content":"big"}},{"index":1e0,"delta":{"content":"e"}}]})",
      R"({"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":[[[[[[1]]]]]]}}}}}}}},"choices":[{"delta":{"content":"deep"}}]})",
      R"({"choices":[{"delta":{"content":"x"}}]} trailing)",
      R"({"error":true})",
      R"({"error":0})",
      R"({"error":[]})",
      R"({"object":5,"object":"error"})",
      // session_routing.verify: Dynamo's nvext.worker_id, and what is not one.
      R"({"choices":[{"index":0,"delta":{"content":"v"}}],"nvext":{"worker_id":{"prefill_worker_id":7,"prefill_dp_rank":1,"decode_worker_id":9,"decode_dp_rank":2}}})",
      R"({"choices":[],"nvext":{"timing":{"ttft_ms":4.5},"worker_id":{"prefill_worker_id":7587890000000000001,"prefill_dp_rank":0}}})",
      // target.server_timing: the finish chunk's nvext.timing, as Dynamo 1.6.1 sends it.
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"nvext":{"worker_id":{"decode_worker_id":9},"timing":{"request_received_ms":1796566390683,"prefill_wait_time_ms":3.85,"prefill_time_ms":17.6,"ttft_ms":21.47,"total_time_ms":35.73,"kv_hit_rate":0.0,"router_queue_depth":0}}})",
      R"({"choices":[{"delta":{"content":"t"}}],"nvext":{"timing":{"ttft_ms":-1,"total_time_ms":"x"},"timing":{"ttft_ms":2}}})",
      R"({"nvext":{"worker_id":{"decode_worker_id":18446744073709551615,"decode_dp_rank":18446744073709551615}}})",
      R"({"nvext":{"worker_id":{"decode_worker_id":"w-3","decode_dp_rank":-1,"decode_worker_id":4}}})",
      R"({"nvext":{"worker_id":{"decode_worker_id":-4,"decode_dp_rank":1.0,"prefill_worker_id":2.5}}})",
      R"({"nvext":{"worker_id":{"decode_worker_id":"","prefill_worker_id":3,"prefill_dp_rank":1e0}}})",
      R"({"nvext":{"worker_id":null},"nvext":{"worker_id":{"decode_worker_id":1}}})",
      R"({"nvext":{"worker_id":[1],"worker_id":{"decode_worker_id":1}}})",
      R"({"nvext":{"worker_id":{"decode_worker_id":{"x":1},"decode_dp_rank":[3],"prefill_worker_id":5}}})",
  };
  // Escapes, control characters and quotes at every offset of a long string (the 16-byte scan).
  for (size_t pos = 0; pos < 40; ++pos) {
    const std::string plain(40, 'x');
    std::string escaped = plain;
    escaped.insert(pos, "\\n");
    std::string control = plain;
    control[pos] = '\x01';
    std::string unicode = plain;
    unicode.insert(pos, "\\u00e9");
    std::string quote = plain;
    quote[pos] = '"';
    for (const auto& v : {escaped, control, unicode, quote}) {
      s.push_back(R"({"choices":[{"delta":{"content":")" + v + R"("}}],")" + v + R"(":1})");
    }
  }
  return s;
}

}  // namespace

TEST_CASE("stream event fast path: identical to the document path") {
  const Endpoint endpoints[] = {Endpoint::kChat, Endpoint::kCompletions, Endpoint::kEmbeddings};
  SUBCASE("seeds") {
    for (const Endpoint endpoint : endpoints) {
      for (const auto& s : seeds()) {
        CAPTURE(s);
        CHECK(via_fast_path(s, endpoint) == via_document(s, endpoint));
      }
    }
  }
  SUBCASE("mutations of the seeds") {
    std::mt19937 rng(7);
    const std::string alphabet = "{}[]\":,0123456789.eE-+ abcnrtu_\\";
    size_t differences = 0;
    for (const Endpoint endpoint : endpoints) {
      for (const auto& seed : seeds()) {
        for (int m = 0; m < 60; ++m) {
          std::string t = seed;
          for (int e = 0; e < 1 + m % 3 && !t.empty(); ++e) {
            const size_t pos = rng() % t.size();
            switch (rng() % 4) {
              case 0:
                t[pos] = alphabet[rng() % alphabet.size()];
                break;
              case 1:
                t.erase(pos, 1 + rng() % 3);
                break;
              case 2:
                t.insert(pos, 1, alphabet[rng() % alphabet.size()]);
                break;
              default:
                t.insert(pos, t.substr(rng() % t.size(), rng() % 20));
                break;
            }
          }
          if (via_fast_path(t, endpoint) != via_document(t, endpoint)) {
            ++differences;
            CAPTURE(t);
            CHECK(via_fast_path(t, endpoint) == via_document(t, endpoint));
          }
        }
      }
    }
    CHECK(differences == 0);
  }
  SUBCASE("declines error objects and leaves the text alone") {
    std::string text = "kept";
    CHECK_FALSE(parse_stream_event_fast(R"({"choices":[{"delta":{"content":"x"}}],"error":{}})",
                                        Endpoint::kChat, text));
    CHECK(text == "kept");
    const auto c = parse_stream_event_fast(R"({"choices":[{"delta":{"content":"x"}}]})",
                                           Endpoint::kChat, text);
    REQUIRE(c);
    CHECK(c->has_content);
    CHECK(text == "keptx");
  }
}

TEST_CASE("stream event fast path: numbers outside int64 go to the document path") {
  // Found by sse_fuzz: a token count of 4e50 was cast to int64 (undefined behaviour).
  for (const char* data : {R"({"choices":[],"usage":{"prompt_tokens":4.4e50}})",
                           R"({"choices":[{"index":-9.3e18,"delta":{"content":"x"}}]})"}) {
    INFO(data);
    std::string text;
    CHECK_FALSE(parse_stream_event_fast(data, Endpoint::kChat, text).has_value());
    CHECK(via_fast_path(data, Endpoint::kChat) == via_document(data, Endpoint::kChat));
  }
}
