// A fixed scrape sequence for the series store (server_metrics_bytes_test): three endpoints
// (one only ever failing), gauges with values of 17 significant digits, counters (a reset, one
// that appears late), a headline histogram with a timeline, an unknown histogram, a summary's
// quantiles, labels that need escaping or hold invalid UTF-8, NaN and infinite values, two
// stages (a settle between them, the last still open), malformed lines, scrape errors and
// series dropped at the max_series bound.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "controller/telemetry/series_store.hpp"
#include "series_store_test_util.hpp"

namespace convoy::test {

inline std::string bytes_number(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

// The engine's exposition at step i (0..9).
inline std::string engine_text(int i) {
  const double third = i / 3.0;
  std::string t;
  t += "# TYPE vllm:num_requests_running gauge\n";
  t += "vllm:num_requests_running{model_name=\"m\",engine=\"0\"} " + bytes_number(third) + "\n";
  t += "# TYPE vllm:kv_cache_usage_perc gauge\n";
  t += "vllm:kv_cache_usage_perc{model_name=\"m\"} " + bytes_number(0.1 * i + 0.2 / 3) + "\n";
  t += "# TYPE vllm:prompt_tokens counter\n";
  // Grows 1234.5678 a step, reset at step 6.
  const double prompt = i < 6 ? 1000 + 1234.5678 * i : 1234.5678 * (i - 5);
  t += "vllm:prompt_tokens_total{model_name=\"m\"} " + bytes_number(prompt) + "\n";
  t += "# TYPE vllm:time_to_first_token_seconds histogram\n";
  const double fast = 3.0 * i, mid = 5.0 * i, slow = 7.0 * i, all = 7.0 * i + (i > 6 ? 1 : 0);
  const char* ttft = "vllm:time_to_first_token_seconds";
  t += std::string(ttft) + "_bucket{model_name=\"m\",le=\"0.01\"} " + bytes_number(fast) + "\n";
  t += std::string(ttft) + "_bucket{model_name=\"m\",le=\"0.1\"} " + bytes_number(mid) + "\n";
  t += std::string(ttft) + "_bucket{model_name=\"m\",le=\"1\"} " + bytes_number(slow) + "\n";
  t += std::string(ttft) + "_bucket{model_name=\"m\",le=\"+Inf\"} " + bytes_number(all) + "\n";
  t += std::string(ttft) + "_sum{model_name=\"m\"} " + bytes_number(0.0123456789 * i) + "\n";
  t += std::string(ttft) + "_count{model_name=\"m\"} " + bytes_number(all) + "\n";
  t += "# TYPE other_hist histogram\n";
  t += "other_hist_bucket{le=\"5\"} " + bytes_number(i) + "\n";
  t += "other_hist_bucket{le=\"+Inf\"} " + bytes_number(2 * i) + "\n";
  t += "other_hist_sum " + bytes_number(7.7 * i) + "\nother_hist_count " + bytes_number(2 * i) +
       "\n";
  t += "# TYPE rpc_duration summary\n";
  t += "rpc_duration{quantile=\"0.5\"} " + bytes_number(0.05 + i / 7.0) + "\n";
  t += "rpc_duration{quantile=\"0.99\"} " + (i == 4 ? std::string("NaN") : bytes_number(0.5 + i)) +
       "\n";
  t += "rpc_duration_sum " + bytes_number(1.1 * i) + "\nrpc_duration_count " + bytes_number(i) +
       "\n";
  t += "# TYPE weird gauge\n";
  t += "weird{path=\"/a\\\"b\\\\c\\nd\",city=\"Z\xC3\xBCrich\",bad=\"x\xFF\xFEy\xE2\x82\"} " +
       std::string(i == 3   ? "+Inf"
                   : i == 5 ? "NaN"
                            : bytes_number(-i * 1e-7)) +
       "\n";
  t += "untyped_thing " + bytes_number(1e21 + i) + "\n";
  if (i >= 5) {
    t += "# TYPE late_counter counter\nlate_counter_total " + bytes_number(i * 2.5) + "\n";
  }
  return t;
}

// The GPU exporter's at step i: two GPUs, and from step 8 twelve more series than fit.
inline std::string dcgm_text(int i) {
  std::string t = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
  for (int gpu = 0; gpu < 2; ++gpu) {
    t += "DCGM_FI_DEV_GPU_UTIL{gpu=\"" + std::to_string(gpu) + "\"} " +
         bytes_number(50 + gpu + i * 0.7) + "\n";
  }
  if (i >= 8) {
    t += "# TYPE extra gauge\n";
    for (int k = 0; k < 12; ++k) {
      t += "extra{k=\"" + std::to_string(k) + "\"} " + bytes_number(k + i / 9.0) + "\n";
    }
  }
  return t;
}

// The store after the whole sequence.
inline telemetry::SeriesStore fed_store() {
  telemetry::SeriesStore store({{"engine", "http://127.0.0.1:9/metrics"},
                                {"dcgm", "http://127.0.0.1:9400/metrics"},
                                {"down", "http://127.0.0.1:1/metrics"}},
                               30);
  const int64_t s = kSecond;
  for (int i = 0; i <= 9; ++i) {
    if (i == 1) {
      store.start_window(s);
      store.mark_stage("low", s);
    }
    if (i == 5) store.mark_settle(s * 9 / 2);
    if (i == 6) store.mark_stage("high \"2\"", 6 * s);
    if (i == 7) {
      store.add_error(0, "timeout after 2 s");
    } else {
      store.add_scrape(0, i * s, scrape_of(engine_text(i)), 0, "");
    }
    const auto dcgm = scrape_of(dcgm_text(i));
    store.add_scrape(1, i * s + s / 4, dcgm, i == 2 ? 1 : 0, i == 2 ? "line 7: bad value" : "");
    store.add_error(2, i < 9 ? "Connection refused" : "HTTP 503");
  }
  return store;
}

}  // namespace convoy::test
