#include "worker/http_transfer.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "worker/capped_append.hpp"
#include "worker/curl_result.hpp"

namespace convoy::worker {

using proto::ErrorKind;

void set_transfer_error(HttpResponse& r, ErrorKind kind, std::string message, int64_t code,
                        std::string type) {
  if (r.error.kind != ErrorKind::kNone) return;  // the first error wins
  r.error.kind = kind;
  r.error.code = code;
  r.error.type = std::move(type);
  r.error.message = std::move(message);
}

namespace {

constexpr size_t kMaxErrorBodyBytes = 64u << 10;  // of a non-2xx reply: enough for its message

void set_server_error(HttpResponse& r, ErrorKind kind, const ServerError& e) {
  set_transfer_error(r, kind, e.message.empty() ? "error event" : e.message, e.code, e.type);
}

void record_content(HttpResponse& r, int64_t recv_ns) {
  if (r.first_token_ns == 0) {
    r.first_token_ns = recv_ns;
  } else {
    if (r.second_token_ns == 0) r.second_token_ns = recv_ns;
    // Events delivered by one read share its timestamp: a gap of 0 means they were coalesced.
    r.chunk_gaps_ns.push_back(recv_ns - r.last_token_ns);
  }
  r.last_token_ns = recv_ns;
  ++r.content_events;
}

void apply_served_by(HttpResponse& r, const ServedBy& served) {
  if (!served.present || !r.served_by.empty()) return;  // the first report wins
  r.served_by = served.worker;
  r.dp_rank = served.dp_rank;
}

void apply_server_timing(HttpResponse& r, const proto::ServerTiming& timing) {
  if (timing.present() && !r.server_timing.present()) r.server_timing = timing;  // the first wins
}

void apply_usage(HttpResponse& r, const Usage& usage) {
  if (!usage.present) return;
  r.has_usage = true;
  // -1: this event did not report it (messages report input and output in different events).
  if (usage.prompt_tokens >= 0) r.prompt_tokens = usage.prompt_tokens;
  if (usage.completion_tokens >= 0) r.completion_tokens = usage.completion_tokens;
  if (usage.cached_tokens >= 0) r.cached_tokens = usage.cached_tokens;
  if (usage.reasoning_tokens >= 0) r.reasoning_tokens = usage.reasoning_tokens;
}

// One SSE event of a streamed reply. Returns false to abort the transfer.
bool on_sse_event(Transfer& t, const SseEvent& event) {
  HttpResponse& r = t.response;
  if (t.saw_done) return true;  // nothing after [DONE] counts
  if (event.type == "error") {
    set_server_error(r, ErrorKind::kServerErrorEvent, parse_error_body(event.data));
    return false;
  }
  if (event.data == "[DONE]") {
    t.saw_done = true;
    return true;
  }
  if (event.data.empty()) return true;
  const ReplyChunk chunk = parse_stream_event(event.data, t.endpoint, r.reply_text);
  if (!chunk.valid_json) {
    set_transfer_error(r, ErrorKind::kMalformedEvent,
                       "event data is not JSON: " + trim_message(event.data, 200));
    return false;
  }
  if (chunk.error.present) {
    set_server_error(r, ErrorKind::kServerErrorEvent, chunk.error);
    return false;
  }
  apply_usage(r, chunk.usage);
  apply_served_by(r, chunk.served_by);
  apply_server_timing(r, chunk.server_timing);
  if (!chunk.response_id.empty()) r.response_id = chunk.response_id;
  // responses and messages end with their own event; what follows ([DONE] from Dynamo) is moot.
  if (chunk.stream_end) t.saw_done = true;
  if (chunk.has_content) {
    const bool first = r.first_token_ns == 0;
    record_content(r, event.recv_ns);
    if (first && t.request.on_first_token) t.request.on_first_token();
  }
  if (chunk.has_reasoning) ++r.reasoning_events;
  if (chunk.has_output && r.first_output_token_ns == 0) r.first_output_token_ns = event.recv_ns;
  if (r.reply_text.size() > t.request.max_response_bytes) {  // live history holds it all
    set_transfer_error(r, ErrorKind::kResponseTooLarge,
                       "streamed reply text larger than target.max_response_bytes (" +
                           std::to_string(t.request.max_response_bytes) + " bytes)");
    return false;
  }
  return true;
}

// A body that cannot fit fails before its first byte is kept: a Content-Length over the limit
// ends the transfer at once; one under it is reserved exactly (no doubling past it).
bool start_body(Transfer& t) {
  curl_off_t length = -1;
  curl_easy_getinfo(t.easy.get(), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  const size_t limit = t.request.max_response_bytes;
  if (length > 0 && static_cast<uint64_t>(length) > limit) {
    set_transfer_error(t.response, ErrorKind::kResponseTooLarge,
                       "reply body of " + std::to_string(length) +
                           " bytes (Content-Length) larger than target.max_response_bytes (" +
                           std::to_string(limit) + " bytes)");
    return false;
  }
  if (length > 0) t.body.reserve(static_cast<size_t>(length));
  return true;
}

void decide_mode(Transfer& t) {
  long status = 0;
  curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
  t.response.http_status = status;
  if (status < 200 || status >= 300) {
    t.mode = BodyMode::kErrorBody;
    return;
  }
  if (!t.request.streaming) {
    t.mode = BodyMode::kBody;
    return;
  }
  // A server that ignores "stream": true answers with one JSON body: read it as such.
  const char* content_type = nullptr;
  curl_easy_getinfo(t.easy.get(), CURLINFO_CONTENT_TYPE, &content_type);
  const std::string_view type = content_type == nullptr ? "" : content_type;
  const bool json = type.find("json") != std::string_view::npos;
  t.mode = json && type.find("event-stream") == std::string_view::npos ? BodyMode::kBody
                                                                       : BodyMode::kSse;
}

}  // namespace

size_t read_reply_bytes(Transfer& t, const char* ptr, size_t n) noexcept {
  HttpResponse& r = t.response;
  const int64_t now = *t.read_ns;
  if (r.first_byte_ns == 0) r.first_byte_ns = now;
  try {
    if (t.mode == BodyMode::kUnknown) {
      decide_mode(t);
      if (t.mode == BodyMode::kBody && !start_body(t)) return 0;
      if (t.mode == BodyMode::kSse) t.sse.set_max_event_bytes(t.request.max_response_bytes);
    }
    switch (t.mode) {
      case BodyMode::kErrorBody: {
        const size_t limit = std::min(kMaxErrorBodyBytes, t.request.max_response_bytes);
        append_capped(t.body, ptr, std::min(n, limit - std::min(limit, t.body.size())), limit);
        r.max_buffered_bytes = std::max(r.max_buffered_bytes, t.body.capacity());
        return n;
      }
      case BodyMode::kBody: {
        const size_t limit = t.request.max_response_bytes;
        if (n > limit - std::min(limit, t.body.size())) {
          set_transfer_error(r, ErrorKind::kResponseTooLarge,
                             "reply body larger than target.max_response_bytes (" +
                                 std::to_string(limit) + " bytes)");
          return 0;
        }
        append_capped(t.body, ptr, n, limit);
        r.max_buffered_bytes = std::max(r.max_buffered_bytes, t.body.capacity());
        return n;
      }
      case BodyMode::kSse:
      case BodyMode::kUnknown: {
        const auto status = t.sse.feed(
            {ptr, n}, now, [&t](const SseEvent& event) { return on_sse_event(t, event); });
        r.max_buffered_bytes = std::max(r.max_buffered_bytes, t.sse.buffered_bytes());
        if (status == SseParser::Status::kOverflow) {
          if (t.request.max_response_bytes <= SseParser::kMaxEventBytes) {
            set_transfer_error(r, ErrorKind::kResponseTooLarge,
                               "SSE line or event larger than target.max_response_bytes (" +
                                   std::to_string(t.sse.max_event_bytes()) + " bytes)");
          } else {
            set_transfer_error(r, ErrorKind::kMalformedEvent, "event larger than 16 MiB");
          }
        }
        // After a malformed or error event the rest of the stream means nothing: abort.
        return r.error.kind == ErrorKind::kNone ? n : 0;
      }
    }
  } catch (...) {
    set_transfer_error(r, ErrorKind::kOther, "out of memory while reading the reply");
  }
  return 0;
}

void finish_reply(Transfer& t, CURLcode code) {
  HttpResponse& r = t.response;
  r.end_ns = steady_now_ns();
  long status = 0;
  curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) r.http_status = status;
  curl_off_t request_bytes = 0;
  curl_easy_getinfo(t.easy.get(), CURLINFO_REQUEST_SIZE, &request_bytes);
  if (code == CURLE_OK && t.mode == BodyMode::kSse) {
    t.sse.finish(r.end_ns, [&t](const SseEvent& event) { return on_sse_event(t, event); });
  }
  const std::string_view curl_message =
      t.error_buffer[0] != '\0' ? t.error_buffer : curl_easy_strerror(code);
  CurlOutcome outcome;
  outcome.code = code;
  outcome.curl_message = curl_message;
  outcome.http_status = r.http_status;
  outcome.got_bytes = r.first_byte_ns != 0;
  outcome.request_sent = request_bytes > 0;
  outcome.body_started = t.mode != BodyMode::kUnknown;
  outcome.read_as_stream = t.request.streaming && t.mode != BodyMode::kBody;
  outcome.saw_done = t.saw_done;
  outcome.error_body = t.body;
  proto::RecordError e = classify_curl_result(outcome);
  if (e.kind != ErrorKind::kNone) {
    set_transfer_error(r, e.kind, std::move(e.message), e.code, std::move(e.type));
  } else if (code == CURLE_OK && !outcome.read_as_stream && r.error.kind == ErrorKind::kNone) {
    const ReplyChunk chunk = parse_reply_body(t.body, t.endpoint, r.reply_text);
    if (!chunk.valid_json) {
      set_transfer_error(r, ErrorKind::kMalformedEvent,
                         "reply body is not JSON: " + trim_message(t.body, 200));
    } else if (chunk.error.present) {
      set_server_error(r, ErrorKind::kServerErrorEvent, chunk.error);
    } else {
      apply_usage(r, chunk.usage);
      apply_served_by(r, chunk.served_by);
      apply_server_timing(r, chunk.server_timing);
      r.response_id = chunk.response_id;
      // A whole body arrives at once: it has no first token, so no TTFT, TTST or ITL (as in
      // AIPerf, whose streaming metrics need SSE); latency ends at end_ns.
      r.content_events = chunk.items > 0 ? chunk.items : (chunk.has_content ? 1 : 0);
    }
  }
  r.request_reached_server = reached_server(r.error.kind);
}

}  // namespace convoy::worker
