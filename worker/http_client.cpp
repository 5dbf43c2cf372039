#include "worker/http_client.hpp"

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "worker/capped_append.hpp"
#include "worker/curl_handles.hpp"
#include "worker/curl_result.hpp"
#include "worker/reply_parser.hpp"
#include "worker/sse_parser.hpp"

namespace convoy::worker {

namespace {

using proto::ErrorKind;

constexpr size_t kMaxErrorBodyBytes = 64u << 10;  // of a non-2xx reply: enough for its message
constexpr size_t kEasyPoolSize = 256;             // idle easy handles kept for reuse
constexpr long kMaxConnections = 20000;

void curl_global_once() {
  // libcurl 7.84+ initialises thread-safely; a function-local static makes it once per process.
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)rc;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

long ms_of_seconds(double seconds) {
  return seconds <= 0 ? 0L : static_cast<long>(std::llround(seconds * 1000.0));
}

// How the reply's bytes are read, decided at its first body byte.
enum class BodyMode : uint8_t { kUnknown, kSse, kBody, kErrorBody };

struct Transfer {
  HttpClient::RequestId id = 0;
  const int64_t* read_ns = nullptr;  // the client's stamp of the read being processed
  CurlEasy easy;
  CurlSlist headers;
  HttpRequest request;  // owns the body curl sends from
  HttpClient::DoneCallback done;
  HttpResponse response;
  Endpoint endpoint = Endpoint::kChat;
  BodyMode mode = BodyMode::kUnknown;
  SseParser sse;
  std::string body;  // non-streaming reply, or the body of a non-2xx reply
  bool saw_done = false;
  bool attached = false;  // added to the multi handle
  EventLoop::TimerId cancel_timer = 0;
  char error_buffer[CURL_ERROR_SIZE] = {};
};

void set_error(HttpResponse& r, ErrorKind kind, std::string message, int64_t code = 0,
               std::string type = {}) {
  if (r.error.kind != ErrorKind::kNone) return;  // the first error wins
  r.error.kind = kind;
  r.error.code = code;
  r.error.type = std::move(type);
  r.error.message = std::move(message);
}

void set_server_error(HttpResponse& r, ErrorKind kind, const ServerError& e) {
  set_error(r, kind, e.message.empty() ? "error event" : e.message, e.code, e.type);
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

void apply_usage(HttpResponse& r, const Usage& usage) {
  if (!usage.present) return;
  r.has_usage = true;
  r.prompt_tokens = usage.prompt_tokens;
  r.completion_tokens = usage.completion_tokens;
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
    set_error(r, ErrorKind::kMalformedEvent,
              "event data is not JSON: " + trim_message(event.data, 200));
    return false;
  }
  if (chunk.error.present) {
    set_server_error(r, ErrorKind::kServerErrorEvent, chunk.error);
    return false;
  }
  apply_usage(r, chunk.usage);
  apply_served_by(r, chunk.served_by);
  if (chunk.has_content) record_content(r, event.recv_ns);
  if (chunk.has_reasoning) ++r.reasoning_events;
  if (chunk.has_output && r.first_output_token_ns == 0) r.first_output_token_ns = event.recv_ns;
  if (r.reply_text.size() > t.request.max_response_bytes) {  // live history holds it all
    set_error(r, ErrorKind::kResponseTooLarge,
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
    set_error(t.response, ErrorKind::kResponseTooLarge,
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

bool h2c_reuse_supported() {
  static const bool supported = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
  return supported;
}

struct HttpClient::Impl {
  EventLoop& loop;
  CurlMulti multi = CurlMulti::create();
  std::unordered_map<RequestId, std::unique_ptr<Transfer>> transfers;  // attached to curl
  std::vector<std::unique_ptr<Transfer>> finished;      // waiting for deferred delivery
  std::vector<std::unique_ptr<Transfer>> done_scratch;  // collect_done()'s list, kept
  std::vector<CurlEasy> easy_pool;
  // Sockets registered in the loop. `parked` ones are idle connections in curl's cache that
  // curl asked us to stop watching: they stay registered (for EPOLLIN only), so a keep-alive
  // connection costs no epoll_ctl between its requests (two syscalls per request saved). An
  // event on a parked socket (the server closed it) unregisters it then; curl's own check at
  // reuse finds it dead. Only connections (opened and closed through our callbacks, so that a
  // close always unparks) are parked: curl closes other descriptors it asks us to watch, like
  // the threaded resolver's socketpair, itself.
  std::unordered_map<int, bool> sockets;  // fd -> parked
  EventLoop::TimerId curl_timer = 0;
  EventLoop::TimerId deliver_timer = 0;
  // Sockets curl opened and has not closed: every connection, busy or idle in its cache.
  std::unordered_set<int> connections;
  RequestId next_id = 1;
  // Steady time of the socket read being processed: one stamp per read, shared by every
  // event the read completes.
  int64_t read_ns = 0;

  explicit Impl(EventLoop& l) : loop(l) {}

  static int on_socket(CURL*, curl_socket_t s, int what, void* userp, void*) noexcept;
  static int on_timer(CURLM*, long timeout_ms, void* userp) noexcept;
  static size_t on_header(char*, size_t size, size_t count, void* userp) noexcept;
  static curl_socket_t on_open_socket(void* userp, curlsocktype, curl_sockaddr* address) noexcept;
  static int on_close_socket(void* userp, curl_socket_t s) noexcept;
  static size_t on_write(char* ptr, size_t size, size_t count, void* userp) noexcept;

  void socket_action(curl_socket_t s, int flags) {
    read_ns = steady_now_ns();
    int running = 0;
    curl_multi_socket_action(multi.get(), s, flags, &running);
    collect_done();
  }

  void on_ready(int fd, uint32_t events) {
    if (auto it = sockets.find(fd); it != sockets.end() && it->second) {
      sockets.erase(it);  // an idle connection changed state (closed by the server, most often)
      loop.remove_fd(fd);
      return;
    }
    int flags = 0;
    if ((events & EPOLLIN) != 0) flags |= CURL_CSELECT_IN;
    if ((events & EPOLLOUT) != 0) flags |= CURL_CSELECT_OUT;
    if ((events & (EPOLLERR | EPOLLHUP)) != 0) {
      flags |= CURL_CSELECT_ERR | CURL_CSELECT_IN | CURL_CSELECT_OUT;
    }
    socket_action(fd, flags);
  }

  CurlEasy take_easy() {
    if (easy_pool.empty()) return CurlEasy::create();
    CurlEasy easy = std::move(easy_pool.back());
    easy_pool.pop_back();
    return easy;
  }

  // Detaches the transfer from curl and the loop. Never called from inside a curl callback.
  void release(Transfer& t) {
    if (t.cancel_timer != 0) loop.cancel_timer(t.cancel_timer);
    t.cancel_timer = 0;
    if (t.attached) curl_multi_remove_handle(multi.get(), t.easy.get());
    t.attached = false;
    if (t.easy && easy_pool.size() < kEasyPoolSize) {
      curl_easy_reset(t.easy.get());  // keeps the multi's connection and DNS caches
      easy_pool.push_back(std::move(t.easy));
    }
  }

  std::string configure(Transfer& t);
  void complete(Transfer& t, CURLcode code);
  void collect_done();
  void defer(std::unique_ptr<Transfer> t);
  void cancel(RequestId id, const char* why);
};

int HttpClient::Impl::on_socket(CURL*, curl_socket_t s, int what, void* userp, void*) noexcept {
  auto* self = static_cast<Impl*>(userp);
  try {
    if (what == CURL_POLL_REMOVE) {
      auto it = self->sockets.find(s);
      if (it == self->sockets.end()) return 0;
      if (self->loop.fd_events(s) == EPOLLIN && self->connections.count(s) != 0) {
        it->second = true;  // park: keep the registration for the next request
      } else {
        // Watched for writing (idle, it would wake the loop forever) or not a connection.
        self->sockets.erase(it);
        self->loop.remove_fd(s);
      }
      return 0;
    }
    uint32_t events = 0;
    if ((what & CURL_POLL_IN) != 0) events |= EPOLLIN;
    if ((what & CURL_POLL_OUT) != 0) events |= EPOLLOUT;
    auto [it, added] = self->sockets.try_emplace(s, false);
    if (added) {
      self->loop.add_fd(s, events, [self, s](uint32_t ready) { self->on_ready(s, ready); });
    } else {
      it->second = false;
      self->loop.modify_fd(s, events);  // no syscall when the events are unchanged
    }
    return 0;
  } catch (...) {
    return -1;  // curl fails the transfers on this socket
  }
}

int HttpClient::Impl::on_timer(CURLM*, long timeout_ms, void* userp) noexcept {
  auto* self = static_cast<Impl*>(userp);
  try {
    if (self->curl_timer != 0) self->loop.cancel_timer(self->curl_timer);
    self->curl_timer = 0;
    if (timeout_ms < 0) return 0;
    // curl must not be re-entered from this callback: even a 0 ms timeout runs from the loop.
    const int64_t deadline_ns = steady_now_ns() + static_cast<int64_t>(timeout_ms) * 1'000'000;
    self->curl_timer = self->loop.add_timer(deadline_ns, [self] {
      self->curl_timer = 0;
      self->socket_action(CURL_SOCKET_TIMEOUT, 0);
    });
    return 0;
  } catch (...) {
    return -1;
  }
}

curl_socket_t HttpClient::Impl::on_open_socket(void* userp, curlsocktype,
                                               curl_sockaddr* address) noexcept {
  const curl_socket_t s = ::socket(address->family, address->socktype, address->protocol);
  if (s != CURL_SOCKET_BAD) {
    try {
      static_cast<Impl*>(userp)->connections.insert(s);
    } catch (...) {
      ::close(s);
      return CURL_SOCKET_BAD;
    }
  }
  return s;
}

int HttpClient::Impl::on_close_socket(void* userp, curl_socket_t s) noexcept {
  auto* self = static_cast<Impl*>(userp);
  self->connections.erase(s);
  // A parked socket is still registered; forget it before its fd number can be reused.
  if (self->sockets.erase(s) != 0) self->loop.remove_fd(s);
  return ::close(s);
}

size_t HttpClient::Impl::on_header(char*, size_t size, size_t count, void* userp) noexcept {
  auto& t = *static_cast<Transfer*>(userp);
  if (t.response.first_byte_ns == 0) t.response.first_byte_ns = *t.read_ns;
  return size * count;
}

size_t HttpClient::Impl::on_write(char* ptr, size_t size, size_t count, void* userp) noexcept {
  auto& t = *static_cast<Transfer*>(userp);
  const size_t n = size * count;
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
          set_error(r, ErrorKind::kResponseTooLarge,
                    "reply body larger than target.max_response_bytes (" + std::to_string(limit) +
                        " bytes)");
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
            set_error(r, ErrorKind::kResponseTooLarge,
                      "SSE line or event larger than target.max_response_bytes (" +
                          std::to_string(t.sse.max_event_bytes()) + " bytes)");
          } else {
            set_error(r, ErrorKind::kMalformedEvent, "event larger than 16 MiB");
          }
        }
        // After a malformed or error event the rest of the stream means nothing: abort.
        return r.error.kind == ErrorKind::kNone ? n : 0;
      }
    }
  } catch (...) {
    set_error(r, ErrorKind::kOther, "out of memory while reading the reply");
  }
  return 0;
}

std::string HttpClient::Impl::configure(Transfer& t) {
  CURL* h = t.easy.get();
  if (h == nullptr) return "curl_easy_init failed";
  const HttpRequest& req = t.request;
  bool has_content_type = false;
  for (const std::string& line : req.headers) {
    has_content_type = has_content_type || starts_with_nocase(line, "content-type:");
    if (!t.headers.append(line.c_str())) return "out of memory building headers";
  }
  if (!req.body.empty() && !has_content_type &&
      !t.headers.append("Content-Type: application/json")) {
    return "out of memory building headers";
  }
  if (!t.headers.append("Expect:")) return "out of memory building headers";  // no 100-continue

  curl_easy_setopt(h, CURLOPT_PRIVATE, static_cast<void*>(&t));
  if (curl_easy_setopt(h, CURLOPT_URL, req.url.c_str()) != CURLE_OK) return "bad url";
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms_of_seconds(req.connect_timeout_s));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms_of_seconds(req.request_timeout_s));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, t.headers.get());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t.error_buffer);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &Impl::on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, static_cast<void*>(&t));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Impl::on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, static_cast<void*>(&t));
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, &Impl::on_open_socket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, static_cast<void*>(this));
  curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, &Impl::on_close_socket);
  curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, static_cast<void*>(this));
  // libcurl looks for a reusable connection by walking every connection to the host, so
  // starting N transfers costs O(N^2): at 10,000 streams the ramp blocked the loop for seconds
  // (docs/benchmarks.md). With HTTP/1.1 a connection carries one transfer at a time, so when
  // the transfers already in flight hold at least every open connection none can be idle: skip
  // the walk and open a new one. The connection is cached for reuse like any other afterwards.
  if (!req.http2 && transfers.size() >= connections.size()) {
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
  }
  if (req.body.empty()) {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  if (req.http2) {
    const bool tls = starts_with_nocase(req.url, "https:");
    curl_easy_setopt(
        h, CURLOPT_HTTP_VERSION,
        tls ? long{CURL_HTTP_VERSION_2TLS} : long{CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE});
    if (tls || h2c_reuse_supported()) {
      curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);  // multiplex onto an open connection
    } else {
      curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);  // see h2c_reuse_supported()
      curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    }
  } else {
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_1_1});
  }
  if (req.insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  return {};
}

// Classifies a finished transfer (classify_curl_result) and reads a non-streamed body. Errors
// recorded while reading (malformed or error events) came first and win.
void HttpClient::Impl::complete(Transfer& t, CURLcode code) {
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
  const std::string curl_message =
      t.error_buffer[0] != '\0' ? std::string(t.error_buffer) : curl_easy_strerror(code);
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
    set_error(r, e.kind, std::move(e.message), e.code, std::move(e.type));
  } else if (code == CURLE_OK && !outcome.read_as_stream && r.error.kind == ErrorKind::kNone) {
    const ReplyChunk chunk = parse_reply_body(t.body, t.endpoint, r.reply_text);
    if (!chunk.valid_json) {
      set_error(r, ErrorKind::kMalformedEvent,
                "reply body is not JSON: " + trim_message(t.body, 200));
    } else if (chunk.error.present) {
      set_server_error(r, ErrorKind::kServerErrorEvent, chunk.error);
    } else {
      apply_usage(r, chunk.usage);
      apply_served_by(r, chunk.served_by);
      // A whole body arrives at once: it has no first token, so no TTFT, TTST or ITL (as in
      // AIPerf, whose streaming metrics need SSE); latency ends at end_ns.
      r.content_events = chunk.items > 0 ? chunk.items : (chunk.has_content ? 1 : 0);
    }
  }
  r.request_reached_server = reached_server(r.error.kind);
}

void HttpClient::Impl::collect_done() {
  // The list is reused from call to call (one per socket read); a callback that re-enters
  // collect_done() gets an empty one of its own.
  std::vector<std::unique_ptr<Transfer>> done = std::move(done_scratch);
  done.clear();
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    void* priv = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
    const CURLcode code = msg->data.result;
    auto it = transfers.find(static_cast<Transfer*>(priv)->id);
    if (it == transfers.end()) continue;
    complete(*it->second, code);
    release(*it->second);
    done.push_back(std::move(it->second));
    transfers.erase(it);
  }
  // Callbacks run after curl is left alone: they may start or cancel transfers.
  for (auto& t : done) t->done(std::move(t->response));
  done.clear();
  if (done.capacity() > done_scratch.capacity()) done_scratch = std::move(done);
}

void HttpClient::Impl::defer(std::unique_ptr<Transfer> t) {
  finished.push_back(std::move(t));
  if (deliver_timer != 0) return;
  deliver_timer = loop.add_timer(0, [this] {
    deliver_timer = 0;
    std::vector<std::unique_ptr<Transfer>> batch;
    batch.swap(finished);
    for (auto& f : batch) f->done(std::move(f->response));
  });
}

void HttpClient::Impl::cancel(RequestId id, const char* why) {
  auto it = transfers.find(id);
  if (it == transfers.end()) return;
  std::unique_ptr<Transfer> t = std::move(it->second);
  transfers.erase(it);
  HttpResponse& r = t->response;
  r.end_ns = steady_now_ns();
  long status = 0;
  curl_easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) r.http_status = status;
  curl_off_t request_bytes = 0;
  curl_easy_getinfo(t->easy.get(), CURLINFO_REQUEST_SIZE, &request_bytes);
  set_error(r, ErrorKind::kCancelled, why);
  r.request_reached_server = request_bytes > 0 || r.first_byte_ns != 0;
  release(*t);
  defer(std::move(t));
}

HttpClient::HttpClient(EventLoop& loop) : impl_(std::make_unique<Impl>(loop)) {
  curl_global_once();
  CURLM* m = impl_->multi.get();
  if (m == nullptr) throw std::runtime_error("curl_multi_init failed");
  curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, &Impl::on_socket);
  curl_multi_setopt(m, CURLMOPT_SOCKETDATA, static_cast<void*>(impl_.get()));
  curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, &Impl::on_timer);
  curl_multi_setopt(m, CURLMOPT_TIMERDATA, static_cast<void*>(impl_.get()));
  curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, kMaxConnections);
  curl_multi_setopt(m, CURLMOPT_PIPELINING, long{CURLPIPE_MULTIPLEX});
}

HttpClient::~HttpClient() {
  Impl& s = *impl_;
  for (auto& [id, t] : s.transfers) s.release(*t);
  s.transfers.clear();
  s.finished.clear();
  if (s.deliver_timer != 0) s.loop.cancel_timer(s.deliver_timer);
  s.easy_pool.clear();
  // Closing the connection cache may still call on_socket; impl_ is alive until the end.
  s.multi.reset();
  if (s.curl_timer != 0) s.loop.cancel_timer(s.curl_timer);
  for (const auto& entry : s.sockets) s.loop.remove_fd(entry.first);
}

HttpClient::RequestId HttpClient::start(HttpRequest request, DoneCallback done) {
  Impl& s = *impl_;
  auto t = std::make_unique<Transfer>();
  t->id = s.next_id++;
  t->read_ns = &s.read_ns;
  t->easy = s.take_easy();
  t->request = std::move(request);
  t->done = std::move(done);
  t->endpoint = t->request.endpoint;
  t->response.sent_ns = steady_now_ns();
  const RequestId id = t->id;
  std::string failure = s.configure(*t);
  if (failure.empty()) {
    const CURLMcode rc = curl_multi_add_handle(s.multi.get(), t->easy.get());
    if (rc == CURLM_OK) {
      t->attached = true;
    } else {
      failure = curl_multi_strerror(rc);
    }
  }
  if (!failure.empty()) {
    t->response.end_ns = steady_now_ns();
    set_error(t->response, ErrorKind::kOther, failure);
    s.release(*t);
    s.defer(std::move(t));  // `done` never runs inside start()
    return id;
  }
  if (t->request.cancel_after_ms >= 0) {
    const auto after_ns = static_cast<int64_t>(std::llround(t->request.cancel_after_ms * 1e6));
    t->cancel_timer = s.loop.add_timer(t->response.sent_ns + after_ns, [&s, id] {
      auto it = s.transfers.find(id);
      if (it != s.transfers.end()) it->second->cancel_timer = 0;
      s.cancel(id, "cancelled by the client after cancel_after_ms");
    });
  }
  s.transfers.emplace(id, std::move(t));
  return id;
}

void HttpClient::cancel(RequestId id) { impl_->cancel(id, "cancelled by the client"); }

void HttpClient::cancel_all() {
  std::vector<RequestId> ids;
  ids.reserve(impl_->transfers.size());
  for (const auto& [id, t] : impl_->transfers) ids.push_back(id);
  for (const RequestId id : ids) impl_->cancel(id, "cancelled by the client");
}

size_t HttpClient::in_flight() const { return impl_->transfers.size() + impl_->finished.size(); }

}  // namespace convoy::worker
