// OpenAI response bodies and SSE events, as Dynamo's frontend writes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mock/api_request.hpp"

namespace convoy::mock {

// What one response reports besides its tokens.
struct ResponseInfo {
  std::string id;                    // "chatcmpl-N" / "cmpl-N" / "embd-N" / "resp_N" / "msg_N"
  std::string previous_response_id;  // responses: the request's, echoed ("" when none)
  int64_t created = 0;               // unix seconds
  std::string model;                 // owned: the request it names is gone before the reply ends
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  // usage.prompt_tokens_details.cached_tokens: 1.6.1 always reports it; 1.2.1 (the legacy
  // contract) never did, not even for a repeated prompt on its KV router (measured).
  bool report_cached_tokens = true;
  // Chat, responses, messages: the first this many of completion_tokens are reasoning
  // (Options::reasoning_tokens).
  int64_t reasoning_tokens = 0;
  // nvext observability (nvext.extra_fields)
  bool with_worker_id = false;
  bool with_timing = false;
  uint64_t instance_id = 0;  // the serving worker as nvext.worker_id reports it
  int dp_rank = 0;
  // nvext.timing, as Dynamo 1.6.1's frontend reports it (measured: request_received_ms,
  // prefill_wait_time_ms, prefill_time_ms, ttft_ms, total_time_ms, kv_hit_rate,
  // router_queue_depth): the mock's own exact times for this request.
  int64_t received_unix_ms = 0;  // when the request arrived (unix ms)
  double ttft_ms = 0;            // arrival -> first token
  double queue_ms = 0;           // arrival -> admitted (prefill_wait_time_ms)
  double prefill_ms = 0;         // admitted -> first token (prefill_time_ms)
  double total_ms = 0;           // arrival -> last token (total_time_ms)
};

// One SSE event ("data: {...}\n\n") carrying output token `index` of `info.completion_tokens`
// (in delta.reasoning_content while index < info.reasoning_tokens, as SGLang streams reasoning).
// The first chat chunk carries the role; a completions stream's last token chunk carries
// finish_reason "length" (a chat stream ends with finish_event). As Dynamo's delta generators
// do (lib/llm/src/protocols/openai/chat_completions/delta.rs,
// NvExtResponseFieldSelection::build_response_nvext in .../openai/nvext.rs), every chunk carries
// nvext.worker_id when asked for, and nvext.timing rides the one with finish_reason.
std::string token_event(Endpoint endpoint, const ResponseInfo& info, int64_t index);
// The chunk that ends a chat stream after its last token, as the real frontends send it: no
// content, finish_reason "length", "delta":{} (1.6.1) or "delta":{"role":"assistant"} (1.2.1,
// `legacy_era`).
std::string finish_event(const ResponseInfo& info, bool legacy_era);
// The usage chunk ("choices": []) sent when stream_options.include_usage.
std::string usage_event(Endpoint endpoint, const ResponseInfo& info);
inline constexpr std::string_view kDoneEvent = "data: [DONE]\n\n";
// An event whose data is not valid JSON (fault injection).
inline constexpr std::string_view kMalformedEvent =
    "data: {\"id\":\"chatcmpl-broken\",\"choices\":[{\n\n";

// Whole non-streaming bodies.
std::string chat_response(const ResponseInfo& info);
std::string completion_response(const ResponseInfo& info);
std::string embeddings_response(const ResponseInfo& info, int64_t inputs, uint64_t seed);

std::string models_response(const std::vector<std::string>& models, int64_t created);
std::string health_response(std::string_view model, int workers);

}  // namespace convoy::mock
