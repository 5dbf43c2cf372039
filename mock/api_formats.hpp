// The Responses API (POST /v1/responses) and the Messages API (POST /v1/messages) as Dynamo
// 1.6.1's frontend writes them (measured with curl against the real frontend; docs/mock.md):
// each SSE event is "event: TYPE\ndata: {...}\n\n", and both streams end with "data: [DONE]"
// after their own last event, as Dynamo's do. Output tokens are the same as chat's; the first
// info.reasoning_tokens of them are reasoning (response.reasoning_text.delta, thinking_delta).
#pragma once

#include <cstdint>
#include <string>

#include "mock/responses.hpp"

namespace convoy::mock {

// The id prefix of a response on `endpoint` ("chatcmpl-", "resp_", "msg_" ...).
const char* response_id_prefix(Endpoint endpoint);

// Sent right after the stream's header, before the first token: responses' response.created,
// .in_progress, .output_item.added and .content_part.added; messages' message_start (usage
// with input_tokens) and the first content_block_start. "" for chat and completions.
std::string stream_open_events(Endpoint endpoint, const ResponseInfo& info);
// Output token `index` of a responses or messages stream (with the block change of a messages
// stream at the first text token after reasoning).
std::string api_token_event(Endpoint endpoint, const ResponseInfo& info, int64_t index);
// After the last token: responses' .output_text.done, .content_part.done, .output_item.done
// and response.incomplete (reason max_output_tokens: the mock stops at the limit, as Dynamo
// reports it) with usage; messages' content_block_stop, message_delta (stop_reason max_tokens,
// usage) and message_stop. Then [DONE].
std::string stream_close_events(Endpoint endpoint, const ResponseInfo& info);
// A whole non-streaming body.
std::string api_response(Endpoint endpoint, const ResponseInfo& info);

}  // namespace convoy::mock
