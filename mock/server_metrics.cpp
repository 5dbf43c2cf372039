#include "mock/server_metrics.hpp"

#include <algorithm>
#include <charconv>

namespace convoy::mock {

namespace {

void put(std::string& out, double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void put(std::string& out, int64_t v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

template <class V>
void sample(std::string& out, const std::string& name, const std::string& labels, V v) {
  out.append(name).append("{").append(labels).append("} ");
  put(out, v);
  out.push_back('\n');
}

// Dynamo's endpoint label (metrics.rs Endpoint::as_str).
const char* dynamo_endpoint(Endpoint e) {
  switch (e) {
    case Endpoint::kChat:
      return "chat_completions";
    case Endpoint::kCompletions:
      return "completions";
    case Endpoint::kEmbeddings:
      return "embeddings";
    case Endpoint::kResponses:
      return "responses";
    case Endpoint::kMessages:
      return "anthropic_messages";  // as the real 1.6.1 frontend labels POST /v1/messages
  }
  return "chat_completions";
}

// Dynamo's error_type label for a request answered with an error status (prometheus_names.rs
// frontend_service::error_type at commit 04070c75: validation 4xx, not_found 404, overload
// 503/529 and rate limits, internal 500 and the rest).
const char* dynamo_error_type(int status) {
  if (status == 404) return "not_found";
  if (status == 429 || status == 503 || status == 529) return "overload";
  if (status == 501) return "not_implemented";
  if (status >= 400 && status < 500) return "validation";
  return "internal";
}

std::string escaped(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out.append("\\n");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

void BucketHistogram::observe(double v) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);  // first bound >= v
  if (it != bounds_.end()) ++counts_[static_cast<size_t>(it - bounds_.begin())];
  sum_ += v;
  ++count_;
}

void BucketHistogram::render(std::string& out, const std::string& name,
                             const std::string& labels) const {
  const std::string prefix = labels.empty() ? labels : labels + ",";
  int64_t cumulative = 0;
  for (size_t b = 0; b < bounds_.size(); ++b) {
    cumulative += counts_[b];
    std::string le;
    put(le, bounds_[b]);
    sample(out, name + "_bucket", prefix + "le=\"" + le + "\"", cumulative);
  }
  sample(out, name + "_bucket", prefix + "le=\"+Inf\"", count_);
  sample(out, name + "_sum", labels, sum_);
  sample(out, name + "_count", labels, count_);
}

ServerMetrics::EngineRow& ServerMetrics::engine(int worker) {
  const auto i = static_cast<size_t>(std::max(worker, 0));
  if (engines_.size() <= i) engines_.resize(i + 1);
  return engines_[i];
}

void ServerMetrics::on_admit(int worker, int64_t prompt_tokens, int64_t cached_tokens) {
  EngineRow& e = engine(worker);
  e.prefix_cache_queries += prompt_tokens;
  e.prefix_cache_hits += cached_tokens;
}

void ServerMetrics::on_first_token(int worker, int64_t prompt_tokens, double ttft_s) {
  EngineRow& e = engine(worker);
  e.prompt_tokens += prompt_tokens;
  e.ttft.observe(ttft_s);
  frontend_ttft_.observe(ttft_s);
}

void ServerMetrics::on_end(int worker, Endpoint endpoint, bool stream, int64_t generated_tokens,
                           Outcome outcome, int http_status) {
  if (worker >= 0) engine(worker).generation_tokens += generated_tokens;
  frontend_output_tokens_ += generated_tokens;
  const bool ok = outcome == Outcome::kSuccess;
  const std::string error_type = ok                               ? ""
                                 : outcome == Outcome::kCancelled ? "cancelled"
                                                                  : dynamo_error_type(http_status);
  ++requests_[{static_cast<int>(endpoint), stream, ok ? "success" : "error", error_type}];
}

void ServerMetrics::clear() { *this = ServerMetrics(); }

std::string ServerMetrics::prometheus(const std::vector<EngineGauges>& workers,
                                      const std::string& model) const {
  std::string out;
  render_vllm(out, workers, model);
  render_dynamo(out, workers, model);
  return out;
}

void ServerMetrics::render_vllm(std::string& out, const std::vector<EngineGauges>& workers,
                                const std::string& model) const {
  // prometheus_client renders the labels in declared order: model_name, engine.
  std::vector<std::string> labels;
  for (size_t w = 0; w < workers.size(); ++w) {
    labels.push_back("model_name=\"" + escaped(model) + "\",engine=\"" + std::to_string(w) + "\"");
  }
  static const EngineRow kIdle;
  auto row = [&](size_t w) -> const EngineRow& {
    return w < engines_.size() ? engines_[w] : kIdle;
  };
  auto gauge = [&](const char* name, const char* help, auto value) {
    family(out, name, "gauge", help);
    for (size_t w = 0; w < workers.size(); ++w) sample(out, name, labels[w], value(w));
  };
  auto counter = [&](const char* name, const char* help, int64_t EngineRow::*field) {
    family(out, name, "counter", help);
    for (size_t w = 0; w < workers.size(); ++w) sample(out, name, labels[w], row(w).*field);
  };
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
        [&](size_t w) { return workers[w].running; });
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
        [&](size_t w) { return workers[w].waiting; });
  // vLLM: 1 - free blocks / total, where blocks cached but unreferenced count as free: the
  // blocks running sequences hold.
  gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", [&](size_t w) {
    const auto& g = workers[w];
    return g.capacity_blocks > 0 ? std::min(1.0, static_cast<double>(g.running_blocks) /
                                                     static_cast<double>(g.capacity_blocks))
                                 : 0.0;
  });
  counter("vllm:prefix_cache_queries_total",
          "Prefix cache queries, in terms of number of queried tokens.",
          &EngineRow::prefix_cache_queries);
  counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
          &EngineRow::prefix_cache_hits);
  // The mock never preempts: present, and 0.
  family(out, "vllm:num_preemptions_total", "counter",
         "Cumulative number of preemption from the engine.");
  for (size_t w = 0; w < workers.size(); ++w) {
    sample(out, "vllm:num_preemptions_total", labels[w], int64_t{0});
  }
  counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.",
          &EngineRow::prompt_tokens);
  counter("vllm:generation_tokens_total", "Number of generation tokens processed.",
          &EngineRow::generation_tokens);
  family(out, "vllm:time_to_first_token_seconds", "histogram",
         "Histogram of time to first token in seconds.");
  for (size_t w = 0; w < workers.size(); ++w) {
    row(w).ttft.render(out, "vllm:time_to_first_token_seconds", labels[w]);
  }
}

void ServerMetrics::render_dynamo(std::string& out, const std::vector<EngineGauges>& workers,
                                  const std::string& model) const {
  // The Rust prometheus crate renders labels sorted by name.
  const std::string m = "model=\"" + escaped(model) + "\"";
  family(out, "dynamo_frontend_requests_total", "counter",
         "Total number of LLM requests processed");
  for (const auto& [key, n] : requests_) {
    const auto& [endpoint, stream, status, error_type] = key;
    sample(out, "dynamo_frontend_requests_total",
           std::string("endpoint=\"") + dynamo_endpoint(static_cast<Endpoint>(endpoint)) +
               "\",error_type=\"" + error_type + "\"," + m + ",request_type=\"" +
               (stream ? "stream" : "unary") + "\",status=\"" + status + "\"",
           n);
  }
  // Inflight: from the handler's start to the response's end. Queued (HTTP queue): from the
  // handler's start to the first token, so waiting for a slot and prefill.
  int64_t inflight = 0;
  int64_t queued = 0;
  for (const auto& g : workers) {
    inflight += g.running + g.waiting;
    queued += g.waiting + g.prefilling;
  }
  family(out, "dynamo_frontend_inflight_requests", "gauge", "Number of inflight requests");
  sample(out, "dynamo_frontend_inflight_requests", m, inflight);
  family(out, "dynamo_frontend_queued_requests", "gauge",
         "Number of requests in HTTP processing queue");
  sample(out, "dynamo_frontend_queued_requests", m, queued);
  family(out, "dynamo_frontend_output_tokens_total", "counter",
         "Total number of output tokens generated (updates in real-time)");
  sample(out, "dynamo_frontend_output_tokens_total", m, frontend_output_tokens_);
  family(out, "dynamo_frontend_time_to_first_token_seconds", "histogram",
         "Time to first token in seconds");
  frontend_ttft_.render(out, "dynamo_frontend_time_to_first_token_seconds", m);
}

}  // namespace convoy::mock
