#include "mock/http_session.hpp"

#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "mock/api_formats.hpp"
#include "mock/responses.hpp"
#include "mock/session_headers.hpp"
#include "mock/tokenize.hpp"
#include "mock/tokens.hpp"

namespace convoy::mock {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

constexpr uint64_t kMaxBodyBytes = 64ULL << 20;
constexpr uint32_t kMaxHeaderBytes = 64U << 10;
// Requests expected to take longer than this watch their socket, so a client that goes away
// frees its engine slot before the next token would have noticed.
constexpr double kWatchPeerAfterMs = 20;

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

// Renders a message's bytes (all of it, or the header only) with Beast's serializer.
template <class Body>
void render(http::response<Body>& res, std::string& out, bool header_only) {
  http::response_serializer<Body> sr{res};
  sr.split(header_only);
  error_code ec;
  while (!ec && !(header_only ? sr.is_header_done() : sr.is_done())) {
    sr.next(ec, [&](error_code&, const auto& buffers) {
      size_t n = 0;
      for (const auto b : beast::buffers_range_ref(buffers)) {
        out.append(static_cast<const char*>(b.data()), b.size());
        n += b.size();
      }
      sr.consume(n);
    });
  }
}

void append_hex(std::string& out, size_t n) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, n, 16);
  out.append(buf, r.ptr);
}

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, ServerContext& context)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), ctx_(context) {}
  ~HttpSession() {
    if (job_) ctx_.engine.abandon(job_, generated_tokens());
  }

  void start() { read_request(); }

 private:
  // ---- request loop -------------------------------------------------------------------------

  void read_request() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    parser_->header_limit(kMaxHeaderBytes);
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(error_code ec) {
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      respond_error(ApiError{413, "request body too large"});
      return;
    }
    if (ec) {
      close();
      return;
    }
    request_ = parser_->release();
    keep_alive_ = request_.keep_alive();
    http10_ = request_.version() < 11;
    request_id_ = sv(request_[kRequestIdHeader]);
    if (request_id_.empty()) request_id_ = "mock-" + std::to_string(ctx_.next_id++);
    dispatch();
  }

  static constexpr std::string_view kRequestIdHeader = "x-request-id";

  void dispatch() {
    std::string_view path = sv(request_.target());
    if (const auto q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
    const auto method = request_.method();
    const bool post = method == http::verb::post;
    const bool get = method == http::verb::get || method == http::verb::head;

    if (path == "/v1/chat/completions") return post ? generate(Endpoint::kChat) : not_allowed();
    if (path == "/v1/completions") return post ? generate(Endpoint::kCompletions) : not_allowed();
    if (path == "/v1/embeddings") return post ? generate(Endpoint::kEmbeddings) : not_allowed();
    if (path == "/v1/responses") return post ? generate(Endpoint::kResponses) : not_allowed();
    if (path == "/v1/messages") return post ? generate(Endpoint::kMessages) : not_allowed();
    // Not in the request log: convoy's check before a run lists the models (GET /v1/models),
    // and the log holds what the benchmark itself sent.
    if (path == "/v1/models" && get) {
      return respond_json(200, models_response(served_models(ctx_.options), ctx_.created_s));
    }
    log_request(nullptr);
    if (path == "/tokenize" && ctx_.options.tokenize) return post ? tokenize() : not_allowed();
    if (path == "/v1/models") return not_allowed();
    if (path == "/health") {
      return get ? respond_json(200, health_response(ctx_.options.model, ctx_.options.workers))
                 : not_allowed();
    }
    if (path == "/live") return get ? respond_json(200, "{\"status\":\"live\"}") : not_allowed();
    if (path == "/metrics") {
      return get ? respond(200, "text/plain; version=0.0.4", ctx_.engine.metrics_text())
                 : not_allowed();
    }
    if (path == "/mock/sessions") {
      return get ? respond_json(200, ctx_.engine.sessions_json(Clock::now())) : not_allowed();
    }
    if (path == "/mock/stats")
      return get ? respond_json(200, ctx_.engine.stats_json()) : not_allowed();
    if (path == "/mock/reset") {
      if (!post) return not_allowed();
      ctx_.engine.reset();
      return respond_json(200, "{\"reset\":true}");
    }
    constexpr std::string_view kWorkers = "/mock/workers/";
    if (path.substr(0, kWorkers.size()) == kWorkers)
      return worker_control(path.substr(kWorkers.size()), post);
    respond_error(route_not_found(ctx_.options.contract == Contract::kLegacy,
                                  sv(request_.method_string()), path));
  }

  // POST /mock/workers/{id}/down | /up
  void worker_control(std::string_view rest, bool post) {
    const auto slash = rest.find('/');
    int id = -1;
    const auto id_text = rest.substr(0, slash);
    const auto parsed = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    const auto action =
        slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (parsed.ec != std::errc{} || parsed.ptr != id_text.data() + id_text.size() ||
        (action != "down" && action != "up")) {
      return respond_error(not_found("Not Found: /mock/workers/" + std::string(rest)));
    }
    if (!post) return not_allowed();
    if (!ctx_.engine.set_worker_up(id, action == "up")) {
      return respond_error(not_found("no worker " + std::string(id_text)));
    }
    respond_json(200, "{\"worker\":" + std::to_string(id) +
                          ",\"up\":" + (action == "up" ? "true" : "false") + "}");
  }

  // axum's 405: no body, Allow names the route's methods (GET routes answer HEAD too).
  void not_allowed() {
    const std::string_view path = sv(request_.target());
    const bool post_only = (path.substr(0, 4) == "/v1/" && path != "/v1/models") ||
                           path == "/mock/reset" || path.substr(0, 14) == "/mock/workers/";
    respond_error(method_not_allowed(post_only ? "POST" : "GET,HEAD"));
  }

  void log_request(const rapidjson::Value* body_json, std::string_view routing = {}) {
    if (ctx_.log == nullptr) return;
    std::vector<std::pair<std::string_view, std::string_view>> headers;
    for (const auto& field : request_)
      headers.emplace_back(sv(field.name_string()), sv(field.value()));
    ctx_.log->write(sv(request_.method_string()), sv(request_.target()), headers, request_.body(),
                    body_json, routing);
  }

  // ---- generation ---------------------------------------------------------------------------

  // The session facts of the request's headers, and the frontend that serves it.
  RequestMeta read_meta() {
    RequestMeta meta;
    meta.correlation_id = std::string(sv(request_["X-Correlation-ID"]));
    if (ctx_.options.contract == Contract::kHeader) {
      const auto headers =
          read_session_headers([this](std::string_view name) -> std::optional<std::string_view> {
            const auto it = request_.find(beast::string_view(name.data(), name.size()));
            if (it == request_.end()) return std::nullopt;
            return sv(it->value());
          });
      meta.session_header = headers.session_id;
      meta.parent_session_id = headers.parent_session_id.value_or("");
      meta.session_final = headers.session_final;
    } else {
      meta.session_header = std::string(sv(request_["X-Dynamo-Session-ID"]));
    }
    meta.frontend = ctx_.engine.pick_frontend(meta.session_header);
    // lib/llm/src/protocols/openai/nvext.rs apply_header_routing_overrides: unparsable values
    // are ignored.
    const auto number = [this](const char* name) -> std::optional<uint64_t> {
      const auto v = sv(request_[name]);
      uint64_t n = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v.empty() || r.ec != std::errc{} || r.ptr != v.data() + v.size()) return std::nullopt;
      return n;
    };
    meta.target_instance = number("x-worker-instance-id");
    if (const auto rank = number("x-dp-rank"); rank && *rank <= 0xffffffffULL) {
      meta.target_rank = static_cast<uint32_t>(*rank);
    }
    // vLLM's X-data-parallel-rank (its _get_data_parallel_rank): the same pin to one DP rank.
    if (const auto rank = number("x-data-parallel-rank");
        !meta.target_rank && rank && *rank <= 0xffffffffULL) {
      meta.target_rank = static_cast<uint32_t>(*rank);
    }
    meta.routing_key = std::string(sv(request_["x-smg-routing-key"]));
    return meta;
  }

  // The request log's "routing" object: the session as read, where it went, how it ended.
  std::string routing_note(const RequestMeta& meta, int status, int worker) const {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    auto put = [&w](const std::string& v) {
      w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
    };
    w.StartObject();
    w.Key("session_id");
    put(meta.session_header);
    w.Key("parent_session_id");
    if (meta.parent_session_id.empty()) {
      w.Null();
    } else {
      put(meta.parent_session_id);
    }
    w.Key("session_final");
    if (meta.session_final) {
      w.Bool(*meta.session_final);
    } else {
      w.Null();
    }
    w.Key("frontend");
    w.Int(meta.frontend);
    w.Key("worker");
    w.Int(worker);
    w.Key("status");
    w.Int(status);
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize());
  }

  void reject(Endpoint endpoint, const ApiError& error, const rapidjson::Value* body_json,
              const RequestMeta& meta) {
    log_request(body_json, routing_note(meta, error.status, -1));
    ctx_.engine.count_rejection(endpoint, error.status);
    respond_error(error);
  }

  void tokenize() {
    const std::string& body = request_.body();
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError()) {
      return respond_error(
          json_syntax_error(doc, body, ctx_.options.contract == Contract::kLegacy));
    }
    auto reply = tokenize_reply(doc, body, ctx_.options);
    if (auto* error = std::get_if<ApiError>(&reply)) return respond_error(*error);
    respond_json(200, std::get<std::string>(reply));
  }

  // What the reply will say about the request, before the engine takes it.
  void start_reply(Endpoint endpoint, const ApiRequest& req) {
    endpoint_ = endpoint;
    stream_ = req.stream;
    include_usage_ = req.include_usage;
    inputs_ = req.inputs;
    info_ = ResponseInfo{};
    info_.id = response_id_prefix(endpoint) + std::to_string(ctx_.next_id++);
    info_.previous_response_id = req.previous_response_id;
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    info_.created = std::chrono::duration_cast<std::chrono::seconds>(wall).count();
    info_.received_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(wall).count();
    info_.model = req.model;
    info_.with_worker_id = req.want_worker_id;
    info_.with_timing = req.want_timing;
    info_.report_cached_tokens = ctx_.options.contract != Contract::kLegacy;
  }

  void generate(Endpoint endpoint) {
    const std::string& body = request_.body();
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    const rapidjson::Value* body_json = doc.HasParseError() ? nullptr : &doc;
    RequestMeta meta = read_meta();
    if (doc.HasParseError()) {
      return reject(endpoint,
                    json_syntax_error(doc, body, ctx_.options.contract == Contract::kLegacy),
                    body_json, meta);
    }

    auto control = read_session_control(ctx_.options.contract, doc, body);
    if (auto* error = std::get_if<ApiError>(&control)) {
      return reject(endpoint, *error, body_json, meta);
    }
    auto parsed = read_api_request(endpoint, doc, body, ctx_.options);
    if (auto* error = std::get_if<ApiError>(&parsed)) {
      return reject(endpoint, *error, body_json, meta);
    }
    ApiRequest req = std::move(std::get<ApiRequest>(parsed));
    if (auto e = chain_previous(ctx_.responses, req)) return reject(endpoint, *e, body_json, meta);
    req.session = std::move(std::get<SessionDirective>(control));
    if (!meta.target_instance) meta.target_instance = req.backend_instance_id;
    if (!meta.target_rank) meta.target_rank = req.dp_rank;
    if (meta.routing_key.empty()) meta.routing_key = req.session_id;

    start_reply(endpoint, req);
    auto on_admit = [self = shared_from_this(), generation = generation_] {
      net::post(self->socket_.get_executor(),
                [self, generation] { self->on_admitted(generation); });
    };
    auto submitted = ctx_.engine.submit(std::move(req), meta, std::move(on_admit), Clock::now());
    if (auto* error = std::get_if<ApiError>(&submitted)) {
      log_request(body_json, routing_note(meta, error->status, -1));
      return respond_error(*error);
    }
    auto& ok = std::get<Submitted>(submitted);
    job_ = std::move(ok.job);
    log_request(body_json, routing_note(meta, 200, job_->worker));
    info_.prompt_tokens = job_->prompt_tokens;
    info_.completion_tokens = job_->max_tokens;
    info_.reasoning_tokens = endpoint_ != Endpoint::kCompletions
                                 ? std::min(ctx_.options.reasoning_tokens, job_->max_tokens)
                                 : 0;
    info_.instance_id = instance_id(ctx_.options, job_->worker);
    info_.dp_rank = dp_rank(ctx_.options, job_->worker);
    next_token_ = 0;
    stall_shift_ = {};
    max_late_ = {};
    fault_pending_ = job_->faults.reset || job_->faults.malformed || job_->faults.stall;

    if (stream_) append_stream_header();
    // From the options, not the job: a queued job is admitted on whichever thread frees a slot.
    const double expected_ms =
        (prefill_ms(job_->prompt_tokens) +
         itl_ms_for(ctx_.options, info_.model) * static_cast<double>(job_->max_tokens)) /
        ctx_.options.speedup;
    if (!ok.admitted || expected_ms > kWatchPeerAfterMs) watch_peer();
    if (ok.admitted) on_admitted(generation_);
    if (stream_) {
      // The header goes out right after this handler: together with the first token when that
      // is already due (one write instead of two), on its own otherwise.
      net::post(socket_.get_executor(), [self = shared_from_this()] {
        if (!self->writing_ && !self->out_.empty()) self->write_out();
      });
    }
  }

  void on_admitted(uint64_t generation) {
    if (generation != generation_ || closed_ || !job_) return;
    schedule(job_->admitted_at + job_->prefill);
  }

  Clock::time_point token_time(int64_t index) const {
    return job_->admitted_at + job_->prefill + job_->itl * index + stall_shift_;
  }

  // The output tokens generated so far, for a request cut short: streamed, the ones written;
  // otherwise the decode steps that came due (the first token's step has run).
  int64_t generated_tokens() const {
    if (!job_ || next_token_ == 0) return 0;
    if (stream_) return next_token_;
    const auto since_first = Clock::now() - token_time(0);
    if (job_->itl <= Clock::duration::zero()) return job_->max_tokens;
    return std::min<int64_t>(job_->max_tokens, 1 + since_first / job_->itl);
  }

  void schedule(Clock::time_point at) {
    auto self = shared_from_this();
    const uint64_t generation = generation_;
    if (at <= Clock::now()) {
      net::post(socket_.get_executor(), [self, generation] { self->on_token(generation); });
      return;
    }
    timer_.expires_at(at);
    timer_.async_wait([self, generation](error_code ec) {
      if (!ec) self->on_token(generation);
    });
  }

  // A decode step is due: emit token `next_token_` (or, without streaming, just keep time).
  void on_token(uint64_t generation) {
    if (generation != generation_ || closed_ || !job_) return;
    const int64_t index = next_token_;
    const auto now = Clock::now();
    max_late_ = std::max(max_late_, now - token_time(index));
    if (index == 0) {
      ctx_.engine.first_token(job_, now);
      info_.ttft_ms = job_->ttft_ms;
      info_.queue_ms =
          std::chrono::duration<double, std::milli>(job_->admitted_at - job_->arrived_at).count();
      info_.prefill_ms = std::chrono::duration<double, std::milli>(job_->prefill).count();
      info_.cached_tokens = job_->cached_tokens;
    }
    if (index + 1 >= job_->max_tokens) {  // nvext.timing's total_time_ms
      info_.total_ms = std::chrono::duration<double, std::milli>(now - job_->arrived_at).count();
    }
    if (!stream_) {
      // Nothing to send until the last step.
      if (index + 1 >= job_->max_tokens) return finish();
      next_token_ = job_->max_tokens - 1;
      return schedule(token_time(next_token_));
    }
    if (fault_pending_ && index == job_->max_tokens / 2) {
      if (job_->faults.stall) {
        job_->faults.stall = false;
        stall_shift_ += std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double, std::milli>(ctx_.options.stall_ms));
        return schedule(token_time(index));
      }
      fault_pending_ = false;
      if (job_->faults.reset) return reset_connection();
      if (job_->faults.malformed) send_chunk(std::string(kMalformedEvent));
    }
    const bool api = endpoint_ == Endpoint::kResponses || endpoint_ == Endpoint::kMessages;
    std::string events =
        api ? api_token_event(endpoint_, info_, index) : token_event(endpoint_, info_, index);
    next_token_ = index + 1;
    if (next_token_ < job_->max_tokens) {
      send_chunk(events);
      return schedule(token_time(next_token_));
    }
    // The last token, the finish chunk, the usage chunk and [DONE] are due together: one write.
    if (api) {
      events += stream_close_events(endpoint_, info_);
    } else {
      if (endpoint_ == Endpoint::kChat) {
        events += finish_event(info_, ctx_.options.contract == Contract::kLegacy);
      }
      if (include_usage_) events += usage_event(endpoint_, info_);
      events.append(kDoneEvent);
    }
    append_chunk(events);
    finish();
  }

  void finish() {
    if (endpoint_ == Endpoint::kResponses) {
      remember_response(ctx_.responses, info_.id, job_->prompt, job_->max_tokens);
    }
    ctx_.engine.complete(job_, std::chrono::duration<double, std::milli>(max_late_).count());
    job_.reset();
    if (stream_) {
      if (!http10_) out_.append("0\r\n\r\n");
      response_done_ = true;
      if (!writing_) write_out();
      return;
    }
    switch (endpoint_) {
      case Endpoint::kChat:
        return respond_json(200, chat_response(info_));
      case Endpoint::kCompletions:
        return respond_json(200, completion_response(info_));
      case Endpoint::kEmbeddings:
        return respond_json(200, embeddings_response(info_, inputs_, ctx_.options.seed));
      case Endpoint::kResponses:
      case Endpoint::kMessages:
        return respond_json(200, api_response(endpoint_, info_));
    }
  }

  // Notices a client that hangs up while its request waits or generates.
  void watch_peer() {
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this(),
                                                generation = generation_](error_code ec) {
      if (ec || generation != self->generation_ || self->closed_) return;
      char c = 0;
      const auto n = ::recv(self->socket_.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      const bool gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
      if (gone) self->close();
    });
  }

  // ---- output -------------------------------------------------------------------------------

  void append_stream_header() {
    http::response<http::empty_body> res{http::status::ok, request_.version()};
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    res.set(kRequestIdHeader, request_id_);
    if (http10_) keep_alive_ = false;
    res.keep_alive(keep_alive_);
    if (!http10_) res.chunked(true);
    render(res, out_, true);
    // responses and messages open with events of their own before the first token.
    if (const std::string open = stream_open_events(endpoint_, info_); !open.empty()) {
      append_chunk(open);
    }
  }

  void append_chunk(const std::string& data) {
    if (http10_) {
      out_.append(data);
      return;
    }
    append_hex(out_, data.size());
    out_.append("\r\n");
    out_.append(data);
    out_.append("\r\n");
  }
  void send_chunk(const std::string& data) {
    append_chunk(data);
    if (!writing_) write_out();
  }

  void respond(int status, std::string_view content_type, std::string body) {
    http::response<http::string_body> res{static_cast<http::status>(status), request_.version()};
    res.set(http::field::content_type,
            beast::string_view(content_type.data(), content_type.size()));
    res.set(kRequestIdHeader, request_id_);
    res.keep_alive(keep_alive_);
    res.body() = std::move(body);
    res.prepare_payload();
    if (request_.method() == http::verb::head) res.body().clear();
    render(res, out_, false);
    response_done_ = true;
    if (!writing_) write_out();
  }
  void respond_json(int status, std::string body) {
    respond(status, "application/json", std::move(body));
  }
  void respond_error(ApiError error) {
    // POST /v1/messages answers in the Messages API's error shape, as Dynamo's does.
    std::string_view path = sv(request_.target());
    error.anthropic = path.substr(0, path.find('?')) == "/v1/messages";
    if (!error.bare) return respond_json(error.status, error_body(error));
    http::response<http::string_body> res{static_cast<http::status>(error.status),
                                          request_.version()};
    if (!error.message.empty()) res.set(http::field::content_type, "text/plain; charset=utf-8");
    if (!error.allow.empty()) res.set(http::field::allow, error.allow);
    res.set(kRequestIdHeader, request_id_);
    res.keep_alive(keep_alive_);
    res.body() = error.message;
    res.prepare_payload();
    render(res, out_, false);
    response_done_ = true;
    if (!writing_) write_out();
  }

  void write_out() {
    if (closed_) return;
    writing_ = true;
    inflight_.swap(out_);
    out_.clear();
    net::async_write(socket_, net::buffer(inflight_),
                     [self = shared_from_this()](error_code ec, size_t) { self->on_write(ec); });
  }

  void on_write(error_code ec) {
    writing_ = false;
    if (ec || closed_) return close();
    if (!out_.empty()) return write_out();
    if (response_done_) after_response();
  }

  void after_response() {
    response_done_ = false;
    ++generation_;
    if (!keep_alive_) {
      error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
      return close();
    }
    read_request();
  }

  void reset_connection() {
    error_code ignored;
    socket_.set_option(net::socket_base::linger(true, 0), ignored);
    close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    ++generation_;
    if (job_) {
      ctx_.engine.abandon(job_, generated_tokens());
      job_.reset();
    }
    error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
  }

  tcp::socket socket_;
  net::steady_timer timer_;
  ServerContext& ctx_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::string request_id_;
  bool keep_alive_ = true;
  bool http10_ = false;
  bool closed_ = false;
  uint64_t generation_ = 0;  // bumps per response: stale timers and callbacks check it

  // Output: bytes queued while a write is in flight go out together in the next write.
  std::string out_;
  std::string inflight_;
  bool writing_ = false;
  bool response_done_ = false;  // the current response's last bytes are queued

  // The request being generated.
  JobPtr job_;
  Endpoint endpoint_ = Endpoint::kChat;
  bool stream_ = false;
  bool include_usage_ = false;
  int64_t inputs_ = 1;
  ResponseInfo info_;
  int64_t next_token_ = 0;
  Clock::duration stall_shift_{};
  Clock::duration max_late_{};  // worst lateness of a token of this request
  bool fault_pending_ = false;
};

}  // namespace

void start_http_session(tcp::socket socket, ServerContext& context) {
  std::make_shared<HttpSession>(std::move(socket), context)->start();
}

}  // namespace convoy::mock
