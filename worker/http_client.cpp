#include "worker/http_client.hpp"

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <new>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/curl_handle.hpp"
#include "common/duration.hpp"
#include "worker/http_transfer.hpp"

namespace convoy::worker {

namespace {

using proto::ErrorKind;

constexpr size_t kIdleTransfers = 256;  // finished Transfers kept for reuse
constexpr long kMaxConnections = 20000;
// A pooled Transfer keeps its body and SSE buffers up to this capacity each (a stream's events
// are a few hundred bytes; a rare large reply does not stay resident 256 times over).
constexpr size_t kKeptBufferBytes = 64u << 10;
// The next reply's content and gap list are reserved at the last one's size, up to these.
constexpr size_t kMaxTextHintBytes = 64u << 10;
constexpr size_t kMaxGapsHint = 4096;

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

// libcurl's timeouts in whole ms, where 0 is none: a positive timeout is at least 1 ms.
long ms_of_seconds(double seconds) { return static_cast<long>(seconds_to_limit_ms(seconds)); }

// The request's header lines as CURLOPT_HTTPHEADER's list, without an allocation once the
// Transfer's node vector has grown: curl_slist_append costs two per line (a node and a copy of
// the line). libcurl only reads the list (7.88.1 lib/http.c, Curl_add_custom_headers: strchr()
// on each line, strdup() of one it must rewrite), does not copy it, so it must live until the
// transfer ends (CURLOPT_HTTPHEADER(3)), and curl_slist is the public {char* data; curl_slist*
// next} of curl/curl.h. The lines are request.headers' own (the Transfer holds them) and two
// constant lines the client keeps.
void link_headers(Transfer& t, std::string& content_type_line, std::string& expect_line) {
  std::vector<curl_slist>& nodes = t.header_nodes;
  nodes.clear();
  bool has_content_type = false;
  for (std::string& line : t.request.headers) {
    has_content_type = has_content_type || starts_with_nocase(line, "content-type:");
    nodes.push_back({line.data(), nullptr});
  }
  if (!t.request.body.empty() && !has_content_type) {
    nodes.push_back({content_type_line.data(), nullptr});
  }
  nodes.push_back({expect_line.data(), nullptr});  // no 100-continue
  for (size_t i = 0; i + 1 < nodes.size(); ++i) nodes[i].next = &nodes[i + 1];
}

}  // namespace

bool h2c_reuse_supported() {
  static const bool supported = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
  return supported;
}

struct HttpClient::Impl {
  EventLoop& loop;
  CurlMulti multi = CurlMulti::create();
  // Every Transfer lives in a slot, and a request's id names its slot and the slot's
  // generation, so that finding one costs no hashing and starting one no allocation (the slot
  // and its Transfer are reused), while the id of a finished request never names the slot's
  // next one. `active` slots are attached to curl and can be cancelled; a finished Transfer is
  // neither until its callback has run, then it is idle (kept, up to kIdleTransfers) or freed.
  struct Slot {
    std::unique_ptr<Transfer> transfer;  // null when freed
    uint32_t generation = 1;
    bool active = false;
  };
  std::vector<Slot> slots;
  std::vector<uint32_t> idle_slots;   // free, holding a Transfer: taken first
  std::vector<uint32_t> empty_slots;  // free, without one
  size_t active_count = 0;
  std::vector<Transfer*> finished;      // waiting for deferred delivery
  std::vector<Transfer*> done_scratch;  // collect_done()'s list, kept
  // The last reply's content bytes and chunk gaps: the next one reserves as much at its start
  // (one allocation each instead of one per doubling).
  size_t text_hint = 0;
  size_t gaps_hint = 0;
  std::string content_type_line = "Content-Type: application/json";  // see link_headers()
  std::string expect_line = "Expect:";
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

  // The active Transfer `id` names; null for a finished, cancelled or unknown id.
  Transfer* find_active(RequestId id) {
    const auto slot = static_cast<uint32_t>(id);
    if (slot >= slots.size()) return nullptr;
    const Slot& s = slots[slot];
    return s.active && s.generation == static_cast<uint32_t>(id >> 32) ? s.transfer.get() : nullptr;
  }
  void set_active(Transfer& t, bool active) {
    slots[t.slot].active = active;
    if (active) {
      ++active_count;
    } else {
      --active_count;
    }
  }

  Transfer& take();
  void recycle(Transfer& t);
  void start_buffers(Transfer& t);

  // Detaches the transfer from curl and the loop. Never called from inside a curl callback.
  void release(Transfer& t) {
    if (t.cancel_timer != 0) loop.cancel_timer(t.cancel_timer);
    t.cancel_timer = 0;
    if (t.attached) curl_multi_remove_handle(multi.get(), t.easy.get());
    t.attached = false;
  }

  std::string configure(Transfer& t);
  void complete(Transfer& t, CURLcode code);
  void collect_done();
  void defer(Transfer& t);
  void cancel(RequestId id, const char* why);
};

// A free slot, its Transfer idle (reset by recycle()) or new, and the request id for it.
Transfer& HttpClient::Impl::take() {
  uint32_t slot = 0;
  if (!idle_slots.empty()) {
    slot = idle_slots.back();
    idle_slots.pop_back();
  } else if (!empty_slots.empty()) {
    slot = empty_slots.back();
    empty_slots.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots.size());
    slots.emplace_back();
  }
  Slot& s = slots[slot];
  if (!s.transfer) s.transfer = std::make_unique<Transfer>();
  Transfer& t = *s.transfer;
  t.slot = slot;
  t.id = (static_cast<RequestId>(s.generation) << 32) | slot;
  return t;
}

// After the transfer's callback has run: the slot's next request gets a new id, and the
// Transfer is reset for it (buffers kept, within kKeptBufferBytes) or freed when enough are
// idle. What the request and the callback held is released now, not at the slot's next use.
void HttpClient::Impl::recycle(Transfer& t) {
  const uint32_t slot = t.slot;
  Slot& s = slots[slot];
  if (++s.generation == 0) s.generation = 1;  // an id is never 0
  if (idle_slots.size() >= kIdleTransfers || !t.easy) {
    s.transfer.reset();
    empty_slots.push_back(slot);
    return;
  }
  curl_easy_reset(t.easy.get());  // keeps the multi's connection and DNS caches
  t.id = 0;
  t.done = nullptr;
  t.request = HttpRequest{};
  t.response = HttpResponse{};
  t.mode = BodyMode::kUnknown;
  t.saw_done = false;
  t.error_buffer[0] = '\0';
  t.body.clear();
  if (t.body.capacity() > kKeptBufferBytes) std::string().swap(t.body);
  t.sse.reset();
  t.sse.set_max_event_bytes(SseParser::kMaxEventBytes);
  t.sse.trim(kKeptBufferBytes);
  idle_slots.push_back(slot);
}

// A reused Transfer's buffers never hold more than this request's limit; the reply's content
// and gaps are reserved at the last reply's size.
void HttpClient::Impl::start_buffers(Transfer& t) {
  const size_t limit = t.request.max_response_bytes;
  if (t.body.capacity() > limit) std::string().swap(t.body);
  t.sse.trim(limit);
  t.response.reply_text.reserve(std::min(text_hint, limit));
  t.response.chunk_gaps_ns.reserve(gaps_hint);
}

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
  return read_reply_bytes(*static_cast<Transfer*>(userp), ptr, size * count);
}

std::string HttpClient::Impl::configure(Transfer& t) {
  if (!t.easy) t.easy = CurlEasy::create();
  CURL* h = t.easy.get();
  if (h == nullptr) return "curl_easy_init failed";
  const HttpRequest& req = t.request;
  try {
    link_headers(t, content_type_line, expect_line);
  } catch (const std::bad_alloc&) {
    return "out of memory building headers";
  }

  curl_easy_setopt(h, CURLOPT_PRIVATE, static_cast<void*>(&t));
  if (curl_easy_setopt(h, CURLOPT_URL, req.url.c_str()) != CURLE_OK) return "bad url";
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms_of_seconds(req.connect_timeout_s));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms_of_seconds(req.request_timeout_s));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, t.header_nodes.data());
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
  if (!req.http2 && active_count >= connections.size()) {
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

void HttpClient::Impl::complete(Transfer& t, CURLcode code) {
  finish_reply(t, code);
  text_hint = std::min(t.response.reply_text.size(), kMaxTextHintBytes);
  gaps_hint = std::min(t.response.chunk_gaps_ns.size(), kMaxGapsHint);
}

void HttpClient::Impl::collect_done() {
  // The list is reused from call to call (one per socket read); a callback that re-enters
  // collect_done() gets an empty one of its own.
  std::vector<Transfer*> done = std::move(done_scratch);
  done.clear();
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    void* priv = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
    const CURLcode code = msg->data.result;
    auto* t = static_cast<Transfer*>(priv);
    if (find_active(t->id) != t) continue;
    complete(*t, code);
    release(*t);
    set_active(*t, false);
    done.push_back(t);
  }
  // Callbacks run after curl is left alone: they may start or cancel transfers (never reusing
  // these Transfers, which are recycled only once their own callback has returned).
  for (Transfer* t : done) {
    t->done(std::move(t->response));
    recycle(*t);
  }
  done.clear();
  if (done.capacity() > done_scratch.capacity()) done_scratch = std::move(done);
}

void HttpClient::Impl::defer(Transfer& t) {
  finished.push_back(&t);
  if (deliver_timer != 0) return;
  deliver_timer = loop.add_timer(0, [this] {
    deliver_timer = 0;
    std::vector<Transfer*> batch;
    batch.swap(finished);
    for (Transfer* f : batch) {
      f->done(std::move(f->response));
      recycle(*f);
    }
  });
}

void HttpClient::Impl::cancel(RequestId id, const char* why) {
  Transfer* t = find_active(id);
  if (t == nullptr) return;
  set_active(*t, false);
  HttpResponse& r = t->response;
  r.end_ns = steady_now_ns();
  long status = 0;
  curl_easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) r.http_status = status;
  curl_off_t request_bytes = 0;
  curl_easy_getinfo(t->easy.get(), CURLINFO_REQUEST_SIZE, &request_bytes);
  set_transfer_error(r, ErrorKind::kCancelled, why);
  r.request_reached_server = request_bytes > 0 || r.first_byte_ns != 0;
  release(*t);
  defer(*t);
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
  for (Impl::Slot& slot : s.slots) {
    if (slot.active) s.release(*slot.transfer);
  }
  s.finished.clear();
  if (s.deliver_timer != 0) s.loop.cancel_timer(s.deliver_timer);
  s.slots.clear();  // the easy handles go before the multi handle
  // Closing the connection cache may still call on_socket; impl_ is alive until the end.
  s.multi.reset();
  if (s.curl_timer != 0) s.loop.cancel_timer(s.curl_timer);
  for (const auto& entry : s.sockets) s.loop.remove_fd(entry.first);
}

HttpClient::RequestId HttpClient::start(HttpRequest request, DoneCallback done) {
  Impl& s = *impl_;
  Transfer& t = s.take();
  t.read_ns = &s.read_ns;
  t.request = std::move(request);
  t.done = std::move(done);
  t.endpoint = t.request.endpoint;
  t.response.sent_ns = steady_now_ns();
  s.start_buffers(t);
  const RequestId id = t.id;
  std::string failure = s.configure(t);
  if (failure.empty()) {
    const CURLMcode rc = curl_multi_add_handle(s.multi.get(), t.easy.get());
    if (rc == CURLM_OK) {
      t.attached = true;
    } else {
      failure = curl_multi_strerror(rc);
    }
  }
  if (!failure.empty()) {
    t.response.end_ns = steady_now_ns();
    set_transfer_error(t.response, ErrorKind::kOther, failure);
    s.release(t);
    s.defer(t);  // `done` never runs inside start()
    return id;
  }
  if (t.request.cancel_after_ms >= 0) {
    const int64_t after_ns = ms_to_ns(t.request.cancel_after_ms);
    t.cancel_timer = s.loop.add_timer(t.response.sent_ns + after_ns, [&s, id] {
      if (Transfer* active = s.find_active(id)) active->cancel_timer = 0;
      s.cancel(id, "cancelled by the client after cancel_after_ms");
    });
  }
  s.set_active(t, true);
  return id;
}

void HttpClient::cancel(RequestId id) { impl_->cancel(id, "cancelled by the client"); }

void HttpClient::cancel_all() {
  std::vector<RequestId> ids;
  ids.reserve(impl_->active_count);
  for (const Impl::Slot& slot : impl_->slots) {
    if (slot.active) ids.push_back(slot.transfer->id);
  }
  for (const RequestId id : ids) impl_->cancel(id, "cancelled by the client");
}

size_t HttpClient::in_flight() const { return impl_->active_count + impl_->finished.size(); }

}  // namespace convoy::worker
