// The per-event fast path of parse_stream_event (worker/reply_parser.hpp): content and usage of
// one SSE data payload without building a JSON document. Results are identical to the DOM path
// (tests/worker/stream_event_parser_test.cpp compares them on mutated payloads); anything the
// fast path does not handle itself is declined and the caller uses the DOM path.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "worker/reply_parser.hpp"

namespace convoy::worker {

// nullopt: declined (an error object, or the endpoint is not chat or completions); `text` is then
// unchanged. Otherwise what parse_stream_event returns, with choice 0's content appended to `text`.
std::optional<ReplyChunk> parse_stream_event_fast(std::string_view data, Endpoint endpoint,
                                                  std::string& text);

}  // namespace convoy::worker
