#include "worker/sse_parser.hpp"

#include <cstring>

#include "worker/capped_append.hpp"

namespace convoy::worker {

namespace {

// The first CR or LF in [p, end), or end. memchr is vectorised; streams end lines with LF (or
// CRLF), so the CR search only runs over the current line.
const char* find_eol(const char* p, const char* end) {
  const auto* lf = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
  const char* limit = lf == nullptr ? end : lf;
  const auto* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(limit - p)));
  return cr != nullptr ? cr : limit;
}

}  // namespace

SseParser::Status SseParser::feed(std::string_view bytes, int64_t recv_ns, SseSink sink) {
  if (overflow_) return Status::kOverflow;
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (skip_lf_ && p != end) {
    skip_lf_ = false;
    if (*p == '\n') ++p;
  }
  while (p != end) {
    const char* eol = find_eol(p, end);
    const auto length = static_cast<size_t>(eol - p);
    if (line_.size() + length > max_event_bytes_) {  // a line, or its part in this read
      overflow_ = true;
      return Status::kOverflow;
    }
    if (eol == end) {  // the line continues in the next read
      append_capped(line_, p, length, max_event_bytes_);
      break;
    }
    std::string_view line(p, length);
    if (!line_.empty()) {
      append_capped(line_, p, length, max_event_bytes_);
      line = line_;
    }
    p = eol + 1;
    if (*eol == '\r') {
      if (p == end) {
        skip_lf_ = true;
      } else if (*p == '\n') {
        ++p;
      }
    }
    const bool go_on = process_line(line, recv_ns, sink);
    line_.clear();
    if (overflow_) return Status::kOverflow;
    if (!go_on) return Status::kStopped;
  }
  return Status::kOk;
}

SseParser::Status SseParser::finish(int64_t recv_ns, SseSink sink) {
  Status status = overflow_ ? Status::kOverflow : Status::kOk;
  bool go_on = true;
  if (status == Status::kOk && !line_.empty()) {
    const std::string last = std::move(line_);
    line_.clear();
    go_on = process_line(last, recv_ns, sink);
  }
  if (status == Status::kOk && !overflow_ && go_on && (has_data_ || !type_.empty())) {
    go_on = dispatch(recv_ns, sink);
  }
  if (overflow_) status = Status::kOverflow;
  if (!go_on) status = Status::kStopped;
  const uint64_t events = events_;
  const uint64_t comments = comments_;
  reset();
  events_ = events;
  comments_ = comments;
  return status;
}

void SseParser::reset() {
  line_.clear();
  data_.clear();
  type_.clear();
  has_data_ = false;
  skip_lf_ = false;
  overflow_ = false;
  events_ = 0;
  comments_ = 0;
}

void SseParser::trim(size_t max_bytes) {
  for (std::string* buffer : {&line_, &data_, &type_}) {
    if (buffer->capacity() > max_bytes) std::string().swap(*buffer);
  }
}

bool SseParser::process_line(std::string_view line, int64_t recv_ns, SseSink& sink) {
  if (line.empty()) return dispatch(recv_ns, sink);
  if (line.front() == ':') {
    ++comments_;
    return true;
  }
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_event_bytes_) {
      overflow_ = true;
      return false;
    }
    if (has_data_) append_capped(data_, "\n", 1, max_event_bytes_);
    append_capped(data_, value.data(), value.size(), max_event_bytes_);
    has_data_ = true;
  } else if (field == "event") {
    type_.assign(value.substr(0, max_event_bytes_));
  }
  // `id`, `retry` and unknown fields do not matter to a load generator.
  return true;
}

// An event is delivered when it has data or a type: the grammar drops a typeless event without
// data, and an `event: error` without data must still reach the caller.
bool SseParser::dispatch(int64_t recv_ns, SseSink& sink) {
  if (!has_data_ && type_.empty()) return true;
  ++events_;
  const bool go_on = sink(SseEvent{type_, data_, recv_ns});
  data_.clear();
  type_.clear();
  has_data_ = false;
  return go_on;
}

}  // namespace convoy::worker
