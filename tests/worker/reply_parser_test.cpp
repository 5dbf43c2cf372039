#include "worker/reply_parser.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace convoy::worker;

TEST_CASE("reply parser: streamed events") {
  std::string text;
  SUBCASE("chat content appends; empty content is not a token") {
    auto c =
        parse_stream_event(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
                           Endpoint::kChat, text);
    CHECK(c.valid_json);
    CHECK_FALSE(c.has_content);
    c = parse_stream_event(R"({"choices":[{"index":0,"delta":{"content":"hé"}}]})", Endpoint::kChat,
                           text);
    CHECK(c.has_content);
    CHECK(text == "hé");
  }
  SUBCASE("only choice 0 goes into the text; any choice is a token") {
    const auto c = parse_stream_event(R"({"choices":[{"index":1,"delta":{"content":"x"}}]})",
                                      Endpoint::kChat, text);
    CHECK(c.has_content);
    CHECK(text.empty());
  }
  SUBCASE("vLLM's reasoning field counts as content for timing") {
    const auto c =
        parse_stream_event(R"({"choices":[{"delta":{"reasoning":"hmm"}}]})", Endpoint::kChat, text);
    CHECK(c.has_content);
    CHECK(text.empty());
  }
  SUBCASE("usage chunk with choices: [] and cached tokens, or null details") {
    auto c = parse_stream_event(
        R"({"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":5}}})",
        Endpoint::kChat, text);
    CHECK(c.usage.present);
    CHECK(c.usage.prompt_tokens == 7);
    CHECK(c.usage.completion_tokens == 3);
    CHECK(c.usage.cached_tokens == 5);
    c = parse_stream_event(
        R"({"choices":[],"usage":{"prompt_tokens":7,"prompt_tokens_details":null}})",
        Endpoint::kChat, text);
    CHECK(c.usage.cached_tokens == -1);
    c = parse_stream_event(R"({"choices":[],"usage":null})", Endpoint::kChat, text);
    CHECK_FALSE(c.usage.present);
  }
  SUBCASE("errors inside data") {
    auto c = parse_stream_event(R"({"error":{"message":"m","type":"t","code":"c"}})",
                                Endpoint::kChat, text);
    CHECK(c.error.present);
    CHECK(c.error.message == "m");
    CHECK(c.error.type == "t");
    c = parse_stream_event(
        R"({"object":"error","message":"vllm","type":"BadRequestError","code":400})",
        Endpoint::kChat, text);
    CHECK(c.error.present);
    CHECK(c.error.code == 400);
    c = parse_stream_event(R"({"error":"plain"})", Endpoint::kChat, text);
    CHECK(c.error.message == "plain");
    c = parse_stream_event(R"({"error":null,"choices":[]})", Endpoint::kChat, text);
    CHECK_FALSE(c.error.present);
  }
  SUBCASE("not JSON, or JSON with trailing bytes") {
    CHECK_FALSE(parse_stream_event("{\"choices\":", Endpoint::kChat, text).valid_json);
    CHECK_FALSE(parse_stream_event("{} x", Endpoint::kChat, text).valid_json);
    CHECK_FALSE(parse_stream_event(std::string(100000, '['), Endpoint::kChat, text).valid_json);
  }
}

TEST_CASE("reply parser: reasoning deltas are told apart from output content") {
  std::string text;
  SUBCASE("SGLang's reasoning_content and vLLM's reasoning: reasoning, not output") {
    for (const char* data : {R"({"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]})",
                             R"({"choices":[{"index":0,"delta":{"reasoning":"hmm"}}]})"}) {
      CAPTURE(data);
      const auto c = parse_stream_event(data, Endpoint::kChat, text);
      CHECK(c.has_content);
      CHECK(c.has_reasoning);
      CHECK_FALSE(c.has_output);
      CHECK(text.empty());
    }
  }
  SUBCASE("content is output; a chunk may carry both") {
    auto c = parse_stream_event(R"({"choices":[{"delta":{"content":"a","reasoning":null}}]})",
                                Endpoint::kChat, text);
    CHECK(c.has_output);
    CHECK_FALSE(c.has_reasoning);
    c = parse_stream_event(R"({"choices":[{"delta":{"content":"b","reasoning_content":"r"}}]})",
                           Endpoint::kChat, text);
    CHECK(c.has_output);
    CHECK(c.has_reasoning);
    CHECK(text == "ab");
  }
  SUBCASE("empty reasoning is nothing") {
    const auto c = parse_stream_event(
        R"({"choices":[{"delta":{"reasoning_content":"","content":""}}]})", Endpoint::kChat, text);
    CHECK_FALSE(c.has_content);
    CHECK_FALSE(c.has_reasoning);
  }
  SUBCASE("completions text is output") {
    const auto c =
        parse_stream_event(R"({"choices":[{"text":"t"}]})", Endpoint::kCompletions, text);
    CHECK(c.has_output);
    CHECK_FALSE(c.has_reasoning);
  }
  SUBCASE("usage.completion_tokens_details.reasoning_tokens, streamed or whole") {
    auto c = parse_stream_event(
        R"({"choices":[],"usage":{"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":6}}})",
        Endpoint::kChat, text);
    CHECK(c.usage.reasoning_tokens == 6);
    c = parse_stream_event(R"({"choices":[],"usage":{"completion_tokens":9}})", Endpoint::kChat,
                           text);
    CHECK(c.usage.reasoning_tokens == -1);
    c = parse_reply_body(
        R"({"choices":[{"message":{"content":"x","reasoning_content":"y"}}],"usage":{"completion_tokens_details":{"reasoning_tokens":4}}})",
        Endpoint::kChat, text);
    CHECK(c.has_output);
    CHECK(c.has_reasoning);
    CHECK(c.usage.reasoning_tokens == 4);
  }
}

TEST_CASE("reply parser: error bodies") {
  SUBCASE("OpenAI, with a string code used as the type when there is none") {
    const auto e = parse_error_body(R"({"error":{"message":"bad key","code":"invalid_api_key"}})");
    CHECK(e.message == "bad key");
    CHECK(e.type == "invalid_api_key");
  }
  SUBCASE("Dynamo") {
    const auto e = parse_error_body(R"({"message":"busy","type":"Overloaded","code":529})");
    CHECK(e.message == "busy");
    CHECK(e.type == "Overloaded");
    CHECK(e.code == 529);
  }
  SUBCASE("FastAPI detail") {
    CHECK(parse_error_body(R"({"detail":"Not Found"})").message == "Not Found");
    CHECK(parse_error_body(R"({"detail":[{"loc":["body"]}]})").message == R"([{"loc":["body"]}])");
  }
  SUBCASE("raw text, trimmed on a character boundary") {
    CHECK(parse_error_body("  upstream connect error \n").message == "upstream connect error");
    CHECK(parse_error_body(std::string(2000, 'z')).message.size() == kMaxErrorMessageBytes);
    CHECK(trim_message("ab\xC3\xA9", 3) == "ab");
    CHECK(trim_message("abc\xC3\xA9", 5) == "abc\xC3\xA9");
  }
}

TEST_CASE("reply parser: whole bodies") {
  std::string text;
  SUBCASE("completions text") {
    const auto c =
        parse_reply_body(R"({"choices":[{"index":0,"text":"42"}],"usage":{"completion_tokens":1}})",
                         Endpoint::kCompletions, text);
    CHECK(c.has_content);
    CHECK(text == "42");
    CHECK(c.usage.completion_tokens == 1);
  }
  SUBCASE("embeddings") {
    const auto c =
        parse_reply_body(R"({"data":[{"embedding":[1]},{"embedding":[2]},{"embedding":[3]}]})",
                         Endpoint::kEmbeddings, text);
    CHECK(c.items == 3);
  }
}

TEST_CASE("reply parser: nvext.timing as Dynamo 1.6.1 sends it, streamed and whole") {
  std::string text;
  // The finish chunk of a real 1.6.1 stream asked for nvext.extra_fields ["worker_id","timing"].
  const std::string finish =
      R"({"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"length","logprobs":null}],"object":"chat.completion.chunk","nvext":{"worker_id":{"prefill_worker_id":1,"prefill_dp_rank":0,"decode_worker_id":1,"decode_dp_rank":0},"timing":{"request_received_ms":1796566390683,"prefill_wait_time_ms":3.856077,"prefill_time_ms":17.623097,"ttft_ms":21.479174,"total_time_ms":35.73591,"kv_hit_rate":0.0,"router_queue_depth":0}}})";
  ReplyChunk c = parse_stream_event(finish, Endpoint::kChat, text);
  CHECK(c.valid_json);
  CHECK(c.server_timing.present());
  CHECK(c.server_timing.queue_ms == doctest::Approx(3.856077));
  CHECK(c.server_timing.prefill_ms == doctest::Approx(17.623097));
  CHECK(c.server_timing.ttft_ms == doctest::Approx(21.479174));
  CHECK(c.server_timing.total_ms == doctest::Approx(35.73591));
  CHECK(c.server_timing.avg_itl_ms == -1);  // 1.6.1 does not send it
  CHECK(c.served_by.worker == "1");
  SUBCASE("a content chunk without timing has none") {
    c = parse_stream_event(R"({"choices":[{"delta":{"content":"a"}}],"nvext":{"worker_id":{}}})",
                           Endpoint::kChat, text);
    CHECK_FALSE(c.server_timing.present());
  }
  SUBCASE("a whole body's top-level nvext, avg_itl_ms when given") {
    c = parse_reply_body(
        R"({"choices":[{"message":{"content":"abc"}}],"nvext":{"timing":{"ttft_ms":20.1,"total_time_ms":37.3,"avg_itl_ms":5.7}}})",
        Endpoint::kChat, text);
    CHECK(c.server_timing.ttft_ms == doctest::Approx(20.1));
    CHECK(c.server_timing.avg_itl_ms == doctest::Approx(5.7));
    CHECK(c.server_timing.queue_ms == -1);
  }
  SUBCASE("negative, non-numeric or non-finite values are not reported") {
    c = parse_reply_body(
        R"({"choices":[{"message":{"content":"abc"}}],"nvext":{"timing":{"ttft_ms":-3,"total_time_ms":"12","prefill_time_ms":null}}})",
        Endpoint::kChat, text);
    CHECK_FALSE(c.server_timing.present());
  }
}
