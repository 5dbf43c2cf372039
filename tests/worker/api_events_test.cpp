// The Responses and Messages APIs' events, one per type, as the real Dynamo 1.6.1 frontend
// sent them (curl against scripts/dynamo up, docs/worker.md), plus the reasoning and error
// events of each API's reference.
#include "worker/api_events.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace convoy::worker;

TEST_CASE("responses events: text, reasoning, id, usage, end and errors") {
  std::string text;
  SUBCASE("response.created carries the id and no usage yet, and is no token") {
    const auto c = parse_stream_event(
        R"({"type":"response.created","sequence_number":0,"response":{"id":"resp_b25","object":"response","output":[],"status":"in_progress","usage":null,"error":null}})",
        Endpoint::kResponses, text);
    CHECK(c.valid_json);
    CHECK(c.response_id == "resp_b25");
    CHECK_FALSE(c.usage.present);
    CHECK_FALSE(c.has_content);
    CHECK_FALSE(c.stream_end);
    CHECK_FALSE(c.error.present);
  }
  SUBCASE("scaffolding events are neither tokens nor ends") {
    for (
        const char* e :
        {R"({"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","usage":null}})",
         R"({"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"type":"message","content":[],"id":"msg_d0","role":"assistant","status":"in_progress"}})",
         R"({"type":"response.content_part.added","sequence_number":3,"item_id":"msg_d0","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}})",
         R"({"type":"response.output_text.done","sequence_number":9,"item_id":"msg_d0","output_index":0,"content_index":0,"text":" action It","logprobs":[]})"}) {
      CAPTURE(e);
      const auto c = parse_stream_event(e, Endpoint::kResponses, text);
      CHECK(c.valid_json);
      CHECK_FALSE(c.has_content);
      CHECK_FALSE(c.stream_end);
    }
    CHECK(text.empty());
  }
  SUBCASE("response.output_text.delta is output") {
    const auto c = parse_stream_event(
        R"({"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_d0","output_index":0,"content_index":0,"delta":" action","logprobs":[]})",
        Endpoint::kResponses, text);
    CHECK(c.has_content);
    CHECK(c.has_output);
    CHECK_FALSE(c.has_reasoning);
    CHECK(text == " action");
  }
  SUBCASE("reasoning text and summary deltas are reasoning, not text") {
    for (const char* type :
         {"response.reasoning_text.delta", "response.reasoning_summary_text.delta"}) {
      CAPTURE(type);
      const auto c = parse_stream_event(
          std::string(R"({"type":")") + type + R"(","item_id":"rs_1","delta":"hmm"})",
          Endpoint::kResponses, text);
      CHECK(c.has_content);
      CHECK(c.has_reasoning);
      CHECK_FALSE(c.has_output);
    }
    CHECK(text.empty());
  }
  SUBCASE("response.incomplete and response.completed end the stream with usage") {
    for (const char* type : {"response.incomplete", "response.completed"}) {
      CAPTURE(type);
      const auto c = parse_stream_event(
          std::string(R"({"type":")") + type +
              R"(","sequence_number":12,"response":{"id":"resp_b25","status":"incomplete","error":null,"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":15}}})",
          Endpoint::kResponses, text);
      CHECK(c.stream_end);
      CHECK_FALSE(c.error.present);
      CHECK(c.response_id == "resp_b25");
      REQUIRE(c.usage.present);
      CHECK(c.usage.prompt_tokens == 10);
      CHECK(c.usage.completion_tokens == 5);
      CHECK(c.usage.cached_tokens == 4);
      CHECK(c.usage.reasoning_tokens == 2);
    }
  }
  SUBCASE("response.failed is an error with the response's error object") {
    const auto c = parse_stream_event(
        R"({"type":"response.failed","response":{"id":"resp_x","status":"failed","error":{"code":"server_error","message":"engine died"},"usage":null}})",
        Endpoint::kResponses, text);
    CHECK(c.stream_end);
    REQUIRE(c.error.present);
    CHECK(c.error.message == "engine died");
    CHECK(c.error.type == "server_error");
  }
  SUBCASE("an error event") {
    const auto c = parse_stream_event(
        R"({"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null,"sequence_number":3})",
        Endpoint::kResponses, text);
    REQUIRE(c.error.present);
    CHECK(c.error.message == "slow down");
    CHECK(c.error.type == "rate_limit_exceeded");
  }
  SUBCASE("not JSON") {
    CHECK_FALSE(parse_stream_event("{\"type\":", Endpoint::kResponses, text).valid_json);
  }
}

TEST_CASE("messages events: text, thinking, id, usage as last reported, end and errors") {
  std::string text;
  SUBCASE("message_start carries the id and the input tokens") {
    const auto c = parse_stream_event(
        R"({"type":"message_start","message":{"id":"msg_a5b","type":"message","role":"assistant","content":[],"model":"Qwen/Qwen3-0.6B","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":7,"output_tokens":0,"cache_creation_input_tokens":0}}})",
        Endpoint::kMessages, text);
    CHECK(c.valid_json);
    CHECK(c.response_id == "msg_a5b");
    REQUIRE(c.usage.present);
    CHECK(c.usage.prompt_tokens == 7);
    CHECK(c.usage.completion_tokens == 0);
    CHECK(c.usage.cached_tokens == -1);
    CHECK_FALSE(c.has_content);
  }
  SUBCASE("content_block_start, content_block_stop and ping are neither tokens nor ends") {
    for (const char* e :
         {R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
          R"({"type":"content_block_stop","index":0})", R"({"type":"ping"})"}) {
      CAPTURE(e);
      const auto c = parse_stream_event(e, Endpoint::kMessages, text);
      CHECK(c.valid_json);
      CHECK_FALSE(c.has_content);
      CHECK_FALSE(c.stream_end);
      CHECK_FALSE(c.usage.present);
    }
  }
  SUBCASE("a text_delta is output, with Dynamo's running usage") {
    const auto c = parse_stream_event(
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Error"},"usage":{"input_tokens":17,"output_tokens":1,"cache_creation_input_tokens":0,"total_tokens":18}})",
        Endpoint::kMessages, text);
    CHECK(c.has_output);
    CHECK(text == "Error");
    CHECK(c.usage.prompt_tokens == 17);
    CHECK(c.usage.completion_tokens == 1);
  }
  SUBCASE("a thinking_delta is reasoning; a signature_delta is nothing") {
    auto c = parse_stream_event(
        R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me see"}})",
        Endpoint::kMessages, text);
    CHECK(c.has_reasoning);
    CHECK(c.has_content);
    CHECK_FALSE(c.has_output);
    c = parse_stream_event(
        R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}})",
        Endpoint::kMessages, text);
    CHECK_FALSE(c.has_content);
    CHECK(text.empty());
  }
  SUBCASE("message_delta's usage: output tokens only leaves the input as it was") {
    const auto c = parse_stream_event(
        R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}})",
        Endpoint::kMessages, text);
    REQUIRE(c.usage.present);
    CHECK(c.usage.prompt_tokens == -1);
    CHECK(c.usage.completion_tokens == 15);
    CHECK_FALSE(c.stream_end);
  }
  SUBCASE("cached input counts in the input tokens and as cached") {
    const auto c = parse_stream_event(
        R"({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":3,"output_tokens":4,"cache_creation_input_tokens":2,"cache_read_input_tokens":10}})",
        Endpoint::kMessages, text);
    CHECK(c.usage.prompt_tokens == 15);
    CHECK(c.usage.cached_tokens == 10);
  }
  SUBCASE("message_stop ends the stream") {
    const auto c = parse_stream_event(R"({"type":"message_stop"})", Endpoint::kMessages, text);
    CHECK(c.stream_end);
  }
  SUBCASE("an error event, in the Messages API's shape") {
    const auto c = parse_stream_event(
        R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
        Endpoint::kMessages, text);
    REQUIRE(c.error.present);
    CHECK(c.error.type == "overloaded_error");
    CHECK(c.error.message == "Overloaded");
  }
}

TEST_CASE("whole responses and messages bodies, and their error bodies") {
  std::string text;
  SUBCASE("responses") {
    const auto c = parse_reply_body(
        R"({"id":"resp_89c","object":"response","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","content":[{"type":"output_text","annotations":[],"text":" key"}],"id":"msg_d","role":"assistant","status":"incomplete"}],"status":"incomplete","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15},"error":null})",
        Endpoint::kResponses, text);
    CHECK(c.valid_json);
    CHECK_FALSE(c.error.present);
    CHECK(text == " key");
    CHECK(c.has_output);
    CHECK(c.has_reasoning);
    CHECK(c.response_id == "resp_89c");
    CHECK(c.usage.prompt_tokens == 10);
    CHECK(c.usage.completion_tokens == 5);
    CHECK(c.usage.cached_tokens == 0);
  }
  SUBCASE("messages") {
    const auto c = parse_reply_body(
        R"({"id":"msg_798","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":""},{"type":"text","text":" buOnt"}],"model":"Qwen/Qwen3-0.6B","stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":4,"cache_creation_input_tokens":0}})",
        Endpoint::kMessages, text);
    CHECK(text == " buOnt");
    CHECK(c.has_reasoning);
    CHECK(c.usage.prompt_tokens == 10);
    CHECK(c.usage.completion_tokens == 4);
  }
  SUBCASE("Dynamo's error bodies of each route") {
    auto e = parse_error_body(
        R"({"type":"error","error":{"type":"invalid_request_error","message":"Failed to deserialize the JSON body into the target type: missing field `max_tokens` at line 1 column 71"}})");
    CHECK(e.type == "invalid_request_error");
    CHECK(e.message.find("missing field `max_tokens`") != std::string::npos);
    e = parse_error_body(
        R"({"message":"Validation: `previous_response_id` is not supported.","type":"Not Implemented","code":501})");
    CHECK(e.code == 501);
    CHECK(e.message == "Validation: `previous_response_id` is not supported.");
  }
}
