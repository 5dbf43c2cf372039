// The Prometheus text exposition format (0.0.4) and OpenMetrics text (1.0), parsed line by line
// into samples. A malformed line is counted and skipped, never fatal: a scrape of a server that
// writes one bad line still yields every other sample.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace convoy::telemetry {

// A family's type, from its `# TYPE` line (kUntyped without one). OpenMetrics' "unknown" is
// kUntyped.
enum class MetricType {
  kUntyped,
  kCounter,
  kGauge,
  kHistogram,
  kSummary,
  kGaugeHistogram,
  kInfo,
  kStateset
};
const char* to_string(MetricType t);

// What a sample is within its family: histogram `x_bucket` / `x_sum` / `x_count`, a summary's
// `x{quantile=...}` / `x_sum` / `x_count`, a counter's `x_total` (kValue) and `x_created`.
enum class SampleRole { kValue, kBucket, kSum, kCount, kCreated, kQuantile };
const char* to_string(SampleRole r);

struct Label {
  std::string name;
  std::string value;  // unescaped
  bool operator==(const Label& o) const { return name == o.name && value == o.value; }
};

struct Sample {
  std::string name;    // as written, e.g. "vllm:time_to_first_token_seconds_bucket"
  std::string family;  // the `# TYPE` family it belongs to ("vllm:time_to_first_token_seconds")
  MetricType type = MetricType::kUntyped;
  SampleRole role = SampleRole::kValue;
  std::vector<Label> labels;  // as written (no duplicates)
  double value = 0;           // NaN, +Inf and -Inf as IEEE values
  // As written: milliseconds in 0.0.4, seconds in OpenMetrics (the content type says which).
  std::optional<double> timestamp;
};

struct FamilyInfo {
  MetricType type = MetricType::kUntyped;
  std::string help;  // unescaped
  std::string unit;  // OpenMetrics `# UNIT`
};

struct ParseResult {
  int64_t samples = 0;      // given to the sink
  int64_t malformed = 0;    // lines skipped
  std::string first_error;  // "line 12: bad value \"abc\"" ("" when none)
  bool eof_marker = false;  // `# EOF` was seen (OpenMetrics); nothing after it is read
};

// One parser per scrape (it remembers the families' TYPE/HELP/UNIT lines of the text it read).
// The Sample given to the sink is reused: copy what you keep.
class PromParser {
 public:
  using Sink = std::function<void(const Sample&)>;

  ParseResult parse(std::string_view text, const Sink& sink);
  const std::unordered_map<std::string, FamilyInfo>& families() const { return families_; }

 private:
  // One line without its newline; returns an error ("" when it parsed).
  std::string parse_line(std::string_view line, const Sink& sink, ParseResult& result);
  std::string parse_comment(std::string_view line, ParseResult& result);
  std::string parse_sample(std::string_view line);
  void classify();  // sets sample_.family / type / role from the known families

  std::unordered_map<std::string, FamilyInfo> families_;
  Sample sample_;
};

// Parses `text` as a number the way Prometheus does: decimal or exponent notation, "NaN",
// "+Inf", "-Inf", "Inf" (case-insensitive). Nothing else, no surrounding blanks.
std::optional<double> parse_prom_number(std::string_view text);

}  // namespace convoy::telemetry
