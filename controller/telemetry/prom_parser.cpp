#include "controller/telemetry/prom_parser.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace convoy::telemetry {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view skip_blanks(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

std::string_view trim(std::string_view s) {
  s = skip_blanks(s);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
bool label_start(char c) { return name_start(c) && c != ':'; }
bool label_char(char c) { return name_char(c) && c != ':'; }

// The longest metric name at the front of `s` ("" when none).
std::string_view take_name(std::string_view s, bool label) {
  if (s.empty() || !(label ? label_start(s[0]) : name_start(s[0]))) return {};
  size_t i = 1;
  while (i < s.size() && (label ? label_char(s[i]) : name_char(s[i]))) ++i;
  return s.substr(0, i);
}

// The next blank-separated token of `s`, and `s` moved past it.
std::string_view take_token(std::string_view& s) {
  s = skip_blanks(s);
  size_t i = 0;
  while (i < s.size() && !is_blank(s[i])) ++i;
  std::string_view token = s.substr(0, i);
  s = s.substr(i);
  return token;
}

std::optional<MetricType> parse_type(std::string_view t) {
  if (t == "counter") return MetricType::kCounter;
  if (t == "gauge") return MetricType::kGauge;
  if (t == "histogram") return MetricType::kHistogram;
  if (t == "summary") return MetricType::kSummary;
  if (t == "untyped" || t == "unknown") return MetricType::kUntyped;
  if (t == "gaugehistogram") return MetricType::kGaugeHistogram;
  if (t == "info") return MetricType::kInfo;
  if (t == "stateset") return MetricType::kStateset;
  return std::nullopt;
}

// HELP text escapes: \\ and \n (0.0.4); OpenMetrics adds \". Anything else is kept as written.
std::string unescape_help(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char n = s[i + 1];
      if (n == 'n' || n == '\\' || n == '"') {
        out += n == 'n' ? '\n' : n;
        ++i;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool ieq(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

// Roles a sample name suffix can have in a family of type `t`.
struct Suffix {
  std::string_view text;
  SampleRole role;
};
constexpr std::array<Suffix, 7> kSuffixes{{{"_bucket", SampleRole::kBucket},
                                           {"_sum", SampleRole::kSum},
                                           {"_count", SampleRole::kCount},
                                           {"_total", SampleRole::kValue},
                                           {"_created", SampleRole::kCreated},
                                           {"_gsum", SampleRole::kSum},
                                           {"_gcount", SampleRole::kCount}}};

bool suffix_fits(MetricType t, std::string_view suffix) {
  switch (t) {
    case MetricType::kCounter:
      return suffix == "_total" || suffix == "_created";
    case MetricType::kHistogram:
      return suffix == "_bucket" || suffix == "_sum" || suffix == "_count" || suffix == "_created";
    case MetricType::kSummary:
      return suffix == "_sum" || suffix == "_count" || suffix == "_created";
    case MetricType::kGaugeHistogram:
      return suffix == "_bucket" || suffix == "_gsum" || suffix == "_gcount";
    case MetricType::kInfo:
      return suffix == "_info";
    default:
      return false;
  }
}

}  // namespace

const char* to_string(MetricType t) {
  switch (t) {
    case MetricType::kUntyped:
      return "untyped";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
    case MetricType::kInfo:
      return "info";
    case MetricType::kStateset:
      return "stateset";
  }
  return "untyped";
}

const char* to_string(SampleRole r) {
  switch (r) {
    case SampleRole::kValue:
      return "value";
    case SampleRole::kBucket:
      return "bucket";
    case SampleRole::kSum:
      return "sum";
    case SampleRole::kCount:
      return "count";
    case SampleRole::kCreated:
      return "created";
    case SampleRole::kQuantile:
      return "quantile";
  }
  return "value";
}

std::optional<double> parse_prom_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string_view body = text;
  bool negative = false;
  if (body[0] == '+' || body[0] == '-') {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (ieq(body, "inf") || ieq(body, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (ieq(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (body.empty() || !((body[0] >= '0' && body[0] <= '9') || body[0] == '.')) {
    return std::nullopt;
  }
  double v = 0;
  const auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  // Out of range: from_chars leaves v alone; Prometheus (Go's ParseFloat) gives +-Inf or 0.
  if (ec == std::errc::result_out_of_range) return std::nullopt;
  if (ec != std::errc{} || ptr != body.data() + body.size()) return std::nullopt;
  return negative ? -v : v;
}

ParseResult PromParser::parse(std::string_view text, const Sink& sink) {
  ParseResult result;
  int64_t line_number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string error = parse_line(line, sink, result);
    if (!error.empty()) {
      ++result.malformed;
      if (result.first_error.empty()) {
        result.first_error = "line " + std::to_string(line_number) + ": " + error;
      }
    }
    if (result.eof_marker) break;
  }
  return result;
}

std::string PromParser::parse_line(std::string_view line, const Sink& sink, ParseResult& result) {
  const std::string_view content = skip_blanks(line);
  if (content.empty()) return {};
  if (content[0] == '#') return parse_comment(content, result);
  std::string error = parse_sample(content);
  if (!error.empty()) return error;
  classify();
  if (sample_.role == SampleRole::kBucket &&
      std::none_of(sample_.labels.begin(), sample_.labels.end(),
                   [](const Label& l) { return l.name == "le"; })) {
    return "histogram bucket " + sample_.name + " without an le label";
  }
  ++result.samples;
  sink(sample_);
  return {};
}

std::string PromParser::parse_comment(std::string_view line, ParseResult& result) {
  std::string_view rest = line.substr(1);
  if (trim(rest) == "EOF") {
    result.eof_marker = true;
    return {};
  }
  rest = skip_blanks(rest);
  const std::string_view keyword = take_token(rest);
  if (keyword != "HELP" && keyword != "TYPE" && keyword != "UNIT") return {};  // a comment
  const std::string_view name = take_token(rest);
  if (name.empty() || take_name(name, false) != name) {
    return std::string("# ") + std::string(keyword) + " without a valid metric name";
  }
  if (keyword == "HELP") {
    // One blank separates the name from the text; the text may hold more blanks.
    if (!rest.empty()) rest.remove_prefix(1);
    families_[std::string(name)].help = unescape_help(rest);
    return {};
  }
  const std::string_view value = trim(rest);
  if (keyword == "UNIT") {
    families_[std::string(name)].unit = std::string(value);
    return {};
  }
  const auto type = parse_type(value);
  if (!type) return "# TYPE " + std::string(name) + ": unknown type \"" + std::string(value) + "\"";
  families_[std::string(name)].type = *type;
  return {};
}

std::string PromParser::parse_sample(std::string_view line) {
  const std::string_view name = take_name(line, false);
  if (name.empty()) return "no metric name";
  sample_.name.assign(name);
  sample_.labels.clear();
  sample_.timestamp.reset();
  std::string_view rest = line.substr(name.size());
  if (!rest.empty() && !is_blank(rest[0]) && rest[0] != '{') return "bad metric name";
  rest = skip_blanks(rest);
  if (!rest.empty() && rest[0] == '{') {
    rest.remove_prefix(1);
    while (true) {
      rest = skip_blanks(rest);
      if (rest.empty()) return "label set not closed";
      if (rest[0] == '}') {
        rest.remove_prefix(1);
        break;
      }
      const std::string_view label = take_name(rest, true);
      if (label.empty()) return "bad label name";
      rest = skip_blanks(rest.substr(label.size()));
      if (rest.empty() || rest[0] != '=') return "no '=' after label " + std::string(label);
      rest = skip_blanks(rest.substr(1));
      if (rest.empty() || rest[0] != '"') return "label " + std::string(label) + " not quoted";
      std::string value;
      size_t i = 1;
      while (i < rest.size() && rest[i] != '"') {
        // The run up to the next quote or backslash in one append (most values have neither).
        size_t run = i;
        while (run < rest.size() && rest[run] != '"' && rest[run] != '\\') ++run;
        value.append(rest.data() + i, run - i);
        i = run;
        if (i == rest.size() || rest[i] == '"') break;
        if (++i == rest.size()) break;
        const char e = rest[i];
        if (e != '\\' && e != '"' && e != 'n') return "bad escape in label " + std::string(label);
        value += e == 'n' ? '\n' : e;
        ++i;
      }
      if (i >= rest.size()) return "label " + std::string(label) + " value not closed";
      rest = skip_blanks(rest.substr(i + 1));
      for (const Label& l : sample_.labels) {
        if (l.name == label) return "duplicate label " + std::string(label);
      }
      sample_.labels.push_back({std::string(label), std::move(value)});
      if (!rest.empty() && rest[0] == ',') {
        rest.remove_prefix(1);
      } else if (rest.empty() || rest[0] != '}') {
        return "expected ',' or '}' after label " + std::string(label);
      }
    }
  }
  const std::string_view value_text = take_token(rest);
  if (value_text.empty()) return "no value";
  const auto value = parse_prom_number(value_text);
  if (!value) return "bad value \"" + std::string(value_text.substr(0, 64)) + "\"";
  sample_.value = *value;
  rest = skip_blanks(rest);
  if (rest.empty()) return {};
  if (rest[0] != '#') {
    const std::string_view ts_text = take_token(rest);
    const auto ts = parse_prom_number(ts_text);
    if (!ts || !std::isfinite(*ts)) {
      return "bad timestamp \"" + std::string(ts_text.substr(0, 64)) + "\"";
    }
    sample_.timestamp = *ts;
    rest = skip_blanks(rest);
  }
  // An OpenMetrics exemplar ("# {trace_id=...} 1.0") is allowed and ignored; nothing else is.
  if (!rest.empty() && rest[0] != '#') return "unexpected text after the value";
  return {};
}

void PromParser::classify() {
  const std::string& name = sample_.name;
  sample_.family = name;
  sample_.type = MetricType::kUntyped;
  sample_.role = SampleRole::kValue;
  if (auto it = families_.find(name); it != families_.end()) {
    sample_.type = it->second.type;
    // 0.0.4 counters are declared with their `_total` name; a summary's bare name is a quantile.
    if (sample_.type == MetricType::kSummary) sample_.role = SampleRole::kQuantile;
    if (sample_.type == MetricType::kHistogram || sample_.type == MetricType::kGaugeHistogram) {
      sample_.type = MetricType::kUntyped;  // a histogram has no bare sample
    }
    return;
  }
  for (const Suffix& s : kSuffixes) {
    if (name.size() <= s.text.size() || name.compare(name.size() - s.text.size(), std::string::npos,
                                                     s.text.data(), s.text.size()) != 0) {
      continue;
    }
    const std::string base = name.substr(0, name.size() - s.text.size());
    auto it = families_.find(base);
    if (it == families_.end() || !suffix_fits(it->second.type, s.text)) continue;
    sample_.family = base;
    sample_.type = it->second.type;
    sample_.role = s.role;
    return;
  }
  // OpenMetrics info: `# TYPE build info` with samples `build_info`.
  constexpr std::string_view kInfo = "_info";
  if (name.size() > kInfo.size() &&
      name.compare(name.size() - kInfo.size(), kInfo.size(), kInfo.data(), kInfo.size()) == 0) {
    auto it = families_.find(name.substr(0, name.size() - kInfo.size()));
    if (it != families_.end() && it->second.type == MetricType::kInfo) {
      sample_.family = it->first;
      sample_.type = MetricType::kInfo;
    }
  }
}

}  // namespace convoy::telemetry
