// Headline metrics per request class: per tenant (dataset.tenants) and per agent_hints priority
// (dataset.agent_hints), so that a multi-tenant or priority test shows what each class got
// (did the high class really get the lower TTFT?). summary.json "tenants" and "priorities".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/histogram.hpp"
#include "controller/report/metrics.hpp"

namespace convoy::controller {

// Measured requests of one class, keyed by a label; at most kMaxClasses labels (later new ones
// count in `other_requests`, so memory stays bounded whatever the draws).
class ClassAggregator {
 public:
  static constexpr size_t kMaxClasses = 64;
  void add(const std::string& label, const RequestMetrics& m);
  std::vector<ClassStats> snapshot() const;
  int64_t other_requests() const { return other_; }
  size_t memory_bytes() const;

 private:
  struct Agg {
    int64_t requests = 0;
    int64_t errors = 0;
    Histogram ttft;
    Histogram latency;
  };
  std::map<std::string, Agg> classes_;
  int64_t other_ = 0;
};

// [{label, requests, errors, error_rate, time_to_first_token: {...} | null,
// request_latency: {...} | null}], `label_key` naming the label ("tenant", "priority"; a
// priority is written as a number).
std::string classes_json(const std::vector<ClassStats>& classes, const char* label_key,
                         bool numeric_label);

}  // namespace convoy::controller
