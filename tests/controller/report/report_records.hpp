// Shared by the report writers' tests (summary.json, records.jsonl, AIPerf's export): a streamed
// request whose every figure is known, placed by its intended time.
#pragma once

#include <cstdint>
#include <string>

#include "proto/messages.hpp"

namespace convoy::test {

// A streamed request intended at `at_ns` that succeeded: sent 1 ms later, first byte at 20 ms,
// first token at 21 ms, the second at 26 ms, the last at 41 ms (5 output tokens, a 5 ms gap
// between chunks), ended at 42 ms; 64 input tokens, HTTP 200; x_request_id "rid-<at_ns>". The
// caller names its conversation.
inline proto::Record streamed_ok_record(int64_t at_ns) {
  constexpr int64_t ms = 1'000'000;
  proto::Record r;
  r.x_request_id = "rid-" + std::to_string(at_ns);
  r.intended_ns = at_ns;
  r.sent_ns = at_ns + ms;
  r.first_byte_ns = at_ns + 20 * ms;
  r.first_token_ns = at_ns + 21 * ms;
  r.second_token_ns = at_ns + 26 * ms;
  r.last_token_ns = at_ns + 41 * ms;
  r.end_ns = at_ns + 42 * ms;
  r.chunk_gaps_ns = {5 * ms, 5 * ms, 5 * ms, 5 * ms};
  r.input_tokens = 64;
  r.output_tokens = 5;
  r.http_status = 200;
  return r;
}

}  // namespace convoy::test
