// Incremental Server-Sent Events parser (the WHATWG event-stream grammar) for streamed replies.
// Bytes arrive in reads of any size; a read may end inside a line, inside a CRLF, or hold many
// events. Every event carries the steady time of the read that completed it. No per-byte or
// per-event allocation once the internal buffers have grown to the stream's event size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace convoy::worker {

struct SseEvent {
  std::string_view type;  // the `event:` field; empty for the default ("message")
  std::string_view data;  // `data:` lines joined with '\n' (valid during the callback only)
  int64_t recv_ns = 0;    // steady time of the read that completed the event
};

// A non-owning reference to a callable `bool(const SseEvent&)`; returning false stops parsing.
class SseSink {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, SseSink>>>
  SseSink(F&& f) noexcept  // NOLINT(google-explicit-constructor): a function_ref
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* object, const SseEvent& event) -> bool {
          return (*static_cast<std::remove_reference_t<F>*>(object))(event);
        }) {}
  bool operator()(const SseEvent& event) const { return call_(object_, event); }

 private:
  void* object_;
  bool (*call_)(void*, const SseEvent&);
};

class SseParser {
 public:
  // A line or an event larger than this is refused (kOverflow): a broken or hostile stream
  // cannot grow the worker without bound. set_max_event_bytes() may only lower it.
  static constexpr size_t kMaxEventBytes = 16u << 20;

  enum class Status : uint8_t {
    kOk,        // all bytes consumed
    kStopped,   // the sink returned false; the rest of the read was dropped
    kOverflow,  // an event exceeded kMaxEventBytes; the parser refuses further input
  };

  // Consumes one read. Calls `sink` for each event completed by a blank line.
  Status feed(std::string_view bytes, int64_t recv_ns, SseSink sink);

  // End of stream. Leniently delivers a final unterminated line and an event that lacks its
  // closing blank line (the grammar would drop them; a server that ends with "data: [DONE]\n"
  // is common), then resets.
  Status finish(int64_t recv_ns, SseSink sink);

  void reset();
  // Frees the line, event and type buffers whose capacity is over `max_bytes` (a reused parser
  // keeps the rest: no allocation per event or per stream once they have grown).
  void trim(size_t max_bytes);

  // Lowers the line and event limit (target.max_response_bytes); kMaxEventBytes stays the
  // ceiling. Neither buffer's capacity ever exceeds the limit.
  void set_max_event_bytes(size_t limit) {
    max_event_bytes_ = limit < kMaxEventBytes ? limit : kMaxEventBytes;
  }
  size_t max_event_bytes() const { return max_event_bytes_; }
  // Memory held by the line and event buffers (capacity).
  size_t buffered_bytes() const { return line_.capacity() + data_.capacity(); }

  uint64_t events() const { return events_; }
  uint64_t comments() const { return comments_; }  // `:` lines (keep-alives)

 private:
  bool process_line(std::string_view line, int64_t recv_ns, SseSink& sink);
  bool dispatch(int64_t recv_ns, SseSink& sink);

  std::string line_;  // a line split across reads
  std::string data_;
  std::string type_;
  bool has_data_ = false;
  bool skip_lf_ = false;  // the previous read ended in CR: a leading LF ends nothing new
  bool overflow_ = false;
  size_t max_event_bytes_ = kMaxEventBytes;
  uint64_t events_ = 0;
  uint64_t comments_ = 0;
};

}  // namespace convoy::worker
