// A request's moments, one type from the HTTP response to the record: the worker's transport
// fills them, its Record carries them (flat on the wire: the Record's map names each field, so
// the format is what it was before the type existed), and the controller maps them onto its
// own clock. A new per-request timestamp is one field here and one entry in kTimestamps.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace convoy::proto {

// Steady-clock nanoseconds of the clock that took them; 0 = did not happen.
struct Timings {
  int64_t sent_ns = 0;
  int64_t first_byte_ns = 0;
  int64_t first_token_ns = 0;          // first non-empty content (streamed replies only)
  int64_t first_output_token_ns = 0;   // first non-reasoning content (0: none, or not streamed)
  int64_t second_token_ns = 0;         // second non-empty content chunk
  int64_t last_token_ns = 0;           // last content chunk
  int64_t end_ns = 0;                  // the transfer ended (success or failure)
  std::vector<int64_t> chunk_gaps_ns;  // between consecutive non-empty content chunks
};

// Every timestamp of T (Timings or a type built on it) by name, in the order records.jsonl
// writes them: what maps clocks, checks bounds and writes the columns walks this list.
template <class T>
struct TimestampField {
  std::string_view name;
  int64_t T::*field;
};

template <class T>
inline constexpr std::array<TimestampField<T>, 7> kTimingsTimestamps{{
    {"sent_ns", &T::sent_ns},
    {"first_byte_ns", &T::first_byte_ns},
    {"first_token_ns", &T::first_token_ns},
    {"first_output_token_ns", &T::first_output_token_ns},
    {"second_token_ns", &T::second_token_ns},
    {"last_token_ns", &T::last_token_ns},
    {"end_ns", &T::end_ns},
}};

}  // namespace convoy::proto
