// Replies of the Responses API (OpenAI, POST /v1/responses) and the Messages API (Anthropic,
// POST /v1/messages): their streamed events and whole bodies, read into the same ReplyChunk as
// chat's. Pure functions over bytes; no I/O, no clocks.
//
// Each event's JSON names its own type ("type"), so the data line alone is enough (the SSE
// `event:` line repeats it). What counts (docs/worker.md has the bytes Dynamo 1.6.1 sends):
//   responses: response.output_text.delta (text, `delta`): a token event and output;
//              response.reasoning_text.delta, response.reasoning_summary_text.delta: a token
//              event and reasoning; response.created: the response id; response.completed,
//              response.incomplete, response.failed: the end of the stream, with
//              response.usage {input_tokens, input_tokens_details.cached_tokens, output_tokens,
//              output_tokens_details.reasoning_tokens}; response.failed's response.error and
//              an "error" event ({code, message}) are server errors.
//   messages:  content_block_delta with a text_delta (`text`): a token event and output; with
//              a thinking_delta (`thinking`): a token event and reasoning; message_start
//              (message.id, message.usage), message_delta (usage) and any event carrying usage:
//              the usage, each field as last reported; message_stop: the end of the stream;
//              {"type":"error","error":{type, message}}: a server error. Input tokens are
//              input_tokens + cache_read_input_tokens + cache_creation_input_tokens (Anthropic
//              counts cached input apart); cached tokens are cache_read_input_tokens.
#pragma once

#include <string>
#include <string_view>

#include "worker/reply_parser.hpp"

namespace convoy::worker {

// One SSE data payload of a streamed responses reply; appends output text to `text`.
ReplyChunk parse_responses_event(std::string_view data, std::string& text);
// One SSE data payload of a streamed messages reply; appends output text to `text`.
ReplyChunk parse_messages_event(std::string_view data, std::string& text);
// A whole non-streaming responses body: output[] messages' output_text parts, usage, id.
ReplyChunk parse_responses_body(std::string_view body, std::string& text);
// A whole non-streaming messages body: content[] text blocks, usage, id.
ReplyChunk parse_messages_body(std::string_view body, std::string& text);

}  // namespace convoy::worker
