#include "controller/telemetry/telemetry.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "common/curl_handle.hpp"
#include "common/duration.hpp"
#include "common/log.hpp"
#include "common/redact.hpp"
#include "common/utf8.hpp"

namespace convoy::telemetry {

namespace {

constexpr int kScrapeNice = 10;  // the scraper thread's nice value (Telemetry::run)

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kMaxPollMs = 100;  // the thread looks at the stop flag at least this often

// Prometheus' own preference: the text format first; OpenMetrics text is parsed as well.
constexpr const char* kAccept =
    "Accept: text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,"
    "*/*;q=0.1";

// A JSON number (the shortest text that reads back as `v`), or "NaN", "+Inf", "-Inf".
void append_number_or_text(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "\"NaN\"";
  } else if (std::isinf(v)) {
    out += v > 0 ? "\"+Inf\"" : "\"-Inf\"";
  } else {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    out.append(buf, end);
  }
}

// A sample's JSON object up to its value: {"name": ..., "type": ..., "labels": {...}, "value":
std::string sample_prefix(const Sample& s) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto text = [&w](const std::string& t) {
    w.String(t.c_str(), static_cast<rapidjson::SizeType>(t.size()));
  };
  w.StartObject();
  w.Key("name");
  text(s.name);
  w.Key("type");
  w.String(to_string(s.type));
  w.Key("labels");
  w.StartObject();
  for (const Label& l : s.labels) {
    w.Key(l.name.c_str(), static_cast<rapidjson::SizeType>(l.name.size()));
    text(l.value);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + ",\"value\":";
}

}  // namespace

// One endpoint: its easy handle (reused, so connections are kept alive) and its transfer.
struct Telemetry::Target {
  TelemetryEndpoint config;
  CurlEasy easy;
  CurlHeaders headers;
  std::string body;
  bool too_large = false;
  bool in_flight = false;
  bool first_done = false;
  std::string first_error;  // the first scrape's error ("" when it succeeded)
  int64_t started_ns = 0;
  int64_t next_due_ns = 0;
  char error_buffer[CURL_ERROR_SIZE] = {};

  static size_t on_body(char* data, size_t size, size_t count, void* user) noexcept {
    auto* t = static_cast<Target*>(user);
    const size_t bytes = size * count;
    if (t->body.size() + bytes > kMaxScrapeBytes) {
      t->too_large = true;
      return 0;  // aborts the transfer
    }
    try {
      t->body.append(data, bytes);
    } catch (...) {
      return 0;
    }
    return bytes;
  }
};

std::vector<TelemetryEndpoint> run_endpoints(const Config& config,
                                             const std::string& resolved_url) {
  std::vector<TelemetryEndpoint> out = config.telemetry.endpoints;
  if (config.target.url != "mock") return out;
  const bool named =
      std::any_of(out.begin(), out.end(), [](const auto& e) { return e.name == "mock"; });
  if (named) return out;
  std::string base = resolved_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  TelemetryEndpoint mock;
  mock.name = "mock";
  mock.url = base + "/metrics";
  mock.required = false;  // convoy started it; its absence is reported, never fatal
  out.push_back(std::move(mock));
  return out;
}

Telemetry::Telemetry(const TelemetryConfig& config, std::vector<TelemetryEndpoint> endpoints,
                     std::function<int64_t()> clock, const std::filesystem::path& jsonl_path)
    : config_(config),
      clock_(std::move(clock)),
      jsonl_(jsonl_path, "scrapes", 0),
      store_(
          [&] {
            std::vector<EndpointStats> stats;
            stats.reserve(endpoints.size());
            for (const auto& e : endpoints) stats.push_back({e.name, redact_url(e.url)});
            return stats;
          }(),
          config.max_series) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  multi_ = CurlMulti::create();
  if (!multi_) throw std::runtime_error("telemetry: curl_multi_init failed");
  const long timeout_ms =
      std::max<long>(1, static_cast<long>(seconds_to_limit_ms(config_.timeout_s)));
  for (auto& e : endpoints) {
    auto t = std::make_unique<Target>();
    t->config = std::move(e);
    t->easy = CurlEasy::create();
    if (!t->easy) throw std::runtime_error("telemetry: curl_easy_init failed");
    CURL* c = t->easy.get();
    curl_easy_setopt(c, CURLOPT_URL, t->config.url.c_str());
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // a thread of the controller: no SIGALRM
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Target::on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, t->error_buffer);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the exporter offers it
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    t->headers.append(kAccept);
    for (const auto& [name, value] : t->config.headers) t->headers.append(name + ": " + value);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, t->headers.get());
    targets_.push_back(std::move(t));
  }
  thread_ = std::thread([this] { run(); });
}

Telemetry::~Telemetry() {
  stop_.store(2);
  if (multi_) curl_multi_wakeup(multi_.get());
  if (thread_.joinable()) thread_.join();
  jsonl_.close();
  curl_global_cleanup();
}

void Telemetry::stop(bool final_scrape) {
  if (stopped_) return;
  stopped_ = true;
  // Without the last scrape (Ctrl-C) the thread leaves at once, abandoning a scrape in flight:
  // an endpoint that dribbles its reply must not hold an interrupted run for timeout_s.
  stop_.store(final_scrape ? 1 : 2);
  curl_multi_wakeup(multi_.get());
  if (thread_.joinable()) thread_.join();
  jsonl_.close();
}

std::vector<Telemetry::StartFailure> Telemetry::wait_first_round(bool (*cancelled)()) {
  std::unique_lock lock(mutex_);
  constexpr auto kCancelPoll = std::chrono::milliseconds(100);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::nanoseconds(seconds_to_ns(config_.timeout_s + 1));
  auto done = [&] { return first_round_done_ == targets_.size(); };
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    if (cancelled && cancelled()) break;
    first_round_cv_.wait_until(
        lock, std::min(deadline, std::chrono::steady_clock::now() + kCancelPoll), done);
  }
  std::vector<StartFailure> out;
  for (const auto& t : targets_) {
    if (t->first_done && t->first_error.empty()) continue;
    const std::string error = t->first_done ? t->first_error : "no answer at start";
    out.push_back(
        {t->config.name + " (" + redact_url(t->config.url) + "): " + error, t->config.required});
  }
  return out;
}

void Telemetry::start_window(int64_t t_ns) {
  std::lock_guard lock(events_mutex_);
  pending_events_.push_back({WindowEvent::kStartWindow, {}, t_ns});
}

void Telemetry::mark_stage(std::string name, int64_t t_ns) {
  std::lock_guard lock(events_mutex_);
  pending_events_.push_back({WindowEvent::kStage, std::move(name), t_ns});
}

void Telemetry::mark_settle(int64_t t_ns) {
  std::lock_guard lock(events_mutex_);
  pending_events_.push_back({WindowEvent::kSettle, {}, t_ns});
}

// Called with mutex_ held, so events are applied in the order they were queued whoever applies
// them, and always before a scrape that is folded in after they were queued.
void Telemetry::apply_window_events() {
  std::vector<WindowEvent> events;
  {
    std::lock_guard lock(events_mutex_);
    events.swap(pending_events_);
  }
  for (WindowEvent& e : events) {
    switch (e.kind) {
      case WindowEvent::kStartWindow:
        store_.start_window(e.t_ns);
        break;
      case WindowEvent::kStage:
        store_.mark_stage(std::move(e.stage), e.t_ns);
        break;
      case WindowEvent::kSettle:
        store_.mark_settle(e.t_ns);
        break;
    }
  }
}

controller::ServerMetrics Telemetry::server_metrics() {
  std::lock_guard lock(mutex_);
  apply_window_events();
  return store_.server_metrics(config_.interval_s);
}

std::shared_ptr<const controller::ServerTelemetry> Telemetry::results() {
  return controller::make_server_telemetry(server_metrics());
}

std::optional<controller::OutputError> Telemetry::output_failure() const {
  return jsonl_.failure();
}

std::vector<EndpointStats> Telemetry::endpoint_stats() const {
  std::lock_guard lock(mutex_);
  return store_.endpoints();
}

void Telemetry::run() {
  pthread_setname_np(pthread_self(), "convoy-scrape");
  // Below the run loop and the local workers (nice 0): when the cores are busy the scheduler
  // runs them first, and a scrape waits; its samples keep the time the reply arrived. At nice
  // 10 the thread still gets about a tenth of a contended core, far above the few percent it
  // needs (bench (j)). Not fatal when refused.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kScrapeNice);
  const int64_t start = clock_();
  for (auto& t : targets_) t->next_due_ns = start;
  bool final_round = false;
  while (true) {
    const int stop = stop_.load();
    if (stop == 2) break;
    // On stop, every endpoint not in flight starts its last scrape; the loop then ends when
    // none is in flight (each bounded by timeout_s).
    const size_t in_flight = start_due(clock_(), final_round ? kNone : (stop == 1 ? kAll : kDue));
    if (stop == 1) final_round = true;
    if (final_round && in_flight == 0) break;
    int running = 0;
    curl_multi_perform(multi_.get(), &running);
    int queued = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_.get(), &queued)) {
      if (m->msg == CURLMSG_DONE) on_done(m->easy_handle, m->data.result);
    }
    const int64_t wait_ms = poll_wait_ms();
    if (wait_ms > 0 && stop_.load() == stop) {
      curl_multi_poll(multi_.get(), nullptr, 0, static_cast<int>(wait_ms), nullptr);
    }
  }
  finish_thread();
}

size_t Telemetry::start_due(int64_t now, StartWhich which) {
  const int64_t interval_ns = std::max<int64_t>(1'000'000, seconds_to_ns(config_.interval_s));
  size_t in_flight = 0;
  for (auto& t : targets_) {
    const bool due = which == kAll || (which == kDue && now >= t->next_due_ns);
    if (!t->in_flight && due) {
      t->body.clear();
      t->too_large = false;
      t->error_buffer[0] = '\0';
      t->started_ns = now;
      t->in_flight = true;
      curl_multi_add_handle(multi_.get(), t->easy.get());
      while (t->next_due_ns <= now) t->next_due_ns += interval_ns;  // missed slots are skipped
    }
    if (t->in_flight) ++in_flight;
  }
  return in_flight;
}

int64_t Telemetry::poll_wait_ms() {
  long curl_ms = -1;
  curl_multi_timeout(multi_.get(), &curl_ms);
  int64_t wait_ms = kMaxPollMs;
  if (curl_ms >= 0) wait_ms = std::min<int64_t>(wait_ms, curl_ms);
  const int64_t now = clock_();
  for (const auto& t : targets_) {
    if (!t->in_flight) wait_ms = std::min(wait_ms, (t->next_due_ns - now) / kNsPerMs);
  }
  return wait_ms;
}

std::string Telemetry::scrape_error(const Target& t, CURLcode code) const {
  long status = 0;
  curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
  if (t.too_large) return "reply larger than " + std::to_string(kMaxScrapeBytes >> 20) + " MiB";
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return "no complete reply within " + std::to_string(config_.timeout_s) + " s";
  }
  if (code != CURLE_OK) return t.error_buffer[0] ? t.error_buffer : curl_easy_strerror(code);
  if (status != 200) return "HTTP " + std::to_string(status);
  return {};
}

void Telemetry::on_done(CURL* easy, CURLcode code) {
  auto it = std::find_if(targets_.begin(), targets_.end(),
                         [&](const auto& t) { return t->easy.get() == easy; });
  if (it == targets_.end()) return;
  Target& t = **it;
  const size_t index = static_cast<size_t>(it - targets_.begin());
  curl_multi_remove_handle(multi_.get(), easy);
  t.in_flight = false;
  const int64_t done_ns = clock_();
  slices_.start();
  const std::string error = redact_urls_in(scrape_error(t, code));  // curl may quote the URL
  ParseResult parsed;
  int64_t dropped = 0;
  batch_size_ = 0;
  if (error.empty()) {
    PromParser parser;
    parsed = parser.parse(t.body, [this](const Sample& s) {
      slices_.point();
      // Assigned over the previous scrape's samples: their strings' memory is reused.
      if (batch_size_ < batch_.size()) {
        batch_[batch_size_] = s;
      } else {
        batch_.push_back(s);
      }
      ++batch_size_;
    });
  }
  const std::span<const Sample> batch(batch_.data(), batch_size_);
  {
    std::lock_guard lock(mutex_);
    apply_window_events();
    if (error.empty()) {
      store_.add_scrape(index, t.started_ns, batch, parsed.malformed, parsed.first_error, &dropped,
                        &slices_);
    } else {
      store_.add_error(index, error);
    }
  }
  // Outside the lock: the series order and the prefixes are the scraper thread's alone.
  jsonl_.write_line(scrape_line(t, index, done_ns, error, parsed, batch, dropped));
  if (t.first_done) return;
  if (!error.empty()) {
    log_warn("telemetry: ", t.config.name, " (", redact_url(t.config.url),
             ") failed its first scrape: ", error, "; counted as a scrape error");
  }
  std::lock_guard lock(mutex_);
  t.first_done = true;
  t.first_error = error;
  ++first_round_done_;
  first_round_cv_.notify_all();
}

// {"t_ns", "endpoint", "url", "duration_ms", "error", "bytes", "malformed_lines",
// "dropped_series", "samples": [{"name", "type", "labels", "value", "timestamp"?}]}
const std::string& Telemetry::scrape_line(const Target& t, size_t index, int64_t done_ns,
                                          const std::string& error, const ParseResult& parsed,
                                          std::span<const Sample> batch, int64_t dropped) {
  // The head (up to "samples":) is written by rapidjson; the samples are appended to the same
  // string: the line is built once, never copied (50,000 samples a second in bench (j)).
  rapidjson::StringBuffer head;
  rapidjson::Writer<rapidjson::StringBuffer> w(head);
  auto text = [&w](const std::string& s) {
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("t_ns");
  w.Int64(t.started_ns);
  w.Key("endpoint");
  text(t.config.name);
  w.Key("url");
  text(redact_url(t.config.url));
  w.Key("duration_ms");
  w.Double(static_cast<double>(done_ns - t.started_ns) / kNsPerMs);
  w.Key("error");
  if (!error.empty()) {
    text(error);
    w.EndObject();
    line_.assign(head.GetString(), head.GetSize());
    return line_;
  }
  w.Null();
  w.Key("bytes");
  w.Uint64(t.body.size());
  w.Key("malformed_lines");
  w.Int64(parsed.malformed);
  w.Key("dropped_series");
  w.Int64(dropped);
  w.Key("samples");
  line_.assign(head.GetString(), head.GetSize());  // rapidjson writes the ':' with a value
  // Each kept series' {"name", "type", "labels", "value": is formatted once and reused: the
  // line holds every sample of every scrape.
  const std::vector<size_t>& order = store_.last_order(index);
  line_ += ":[";
  for (size_t k = 0; k < batch.size(); ++k) {
    slices_.point();
    const Sample& s = batch[k];
    if (k > 0) line_ += ',';
    const size_t id = k < order.size() ? order[k] : SeriesStore::kNone;
    if (id == SeriesStore::kNone) {
      line_ += sample_prefix(s);  // a dropped series (max_series): still written
    } else {
      if (id >= sample_prefix_.size()) sample_prefix_.resize(id + 1);
      if (sample_prefix_[id].empty()) sample_prefix_[id] = sample_prefix(s);
      line_ += sample_prefix_[id];
    }
    append_number_or_text(line_, s.value);
    if (s.timestamp) {
      line_ += ",\"timestamp\":";
      append_number_or_text(line_, *s.timestamp);
    }
    line_ += '}';
  }
  line_ += "]}";
  // Label values are the server's bytes: checked on the (smaller) reply, mended only when bad.
  if (!is_valid_utf8(t.body)) sanitize_utf8_in_place(line_);
  return line_;
}

void Telemetry::finish_thread() {
  for (auto& t : targets_) {
    if (t->in_flight) curl_multi_remove_handle(multi_.get(), t->easy.get());
    t->in_flight = false;
  }
  // Whoever waits for the first round is not left waiting for endpoints that never answered.
  std::lock_guard lock(mutex_);
  first_round_cv_.notify_all();
}

}  // namespace convoy::telemetry
