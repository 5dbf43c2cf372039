#include "controller/report/headline.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "common/redact.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/svg_chart.hpp"

namespace convoy::controller {

namespace {

using chart::number;

// The short names a person reads for the SLO's metric tags.
std::string short_metric(const std::string& tag) {
  if (tag == "time_to_first_token") return "TTFT";
  if (tag == "inter_token_latency") return "ITL";
  if (tag == "request_latency") return "request latency";
  return tag;
}

// A percentile of `tag`, NaN when not measured.
double headline_pct(const MetricsSnapshot& s, std::string_view tag, double q) {
  const MetricStats* m = s.find(tag);
  if (m == nullptr || m->count == 0) return std::nan("");
  return m->p(q);
}

std::string end_text(std::optional<double> duration_s, std::optional<int64_t> sessions,
                     std::optional<int64_t> requests) {
  if (duration_s) return number(*duration_s) + " s";
  if (sessions) return std::to_string(*sessions) + " conversations";
  if (requests) return std::to_string(*requests) + " requests";
  return {};
}

std::string slo_limits_text(const SloSpec& slo) {
  std::string out;
  for (const auto& [tag, stats] : slo.limits) {
    for (const auto& [stat, limit] : stats) {
      out += (out.empty() ? "" : ", ") + short_metric(tag) + " " + stat + " <= " + number(limit) +
             " ms";
    }
  }
  if (slo.error_rate) {
    out += (out.empty() ? "" : ", ") + std::string("error rate <= ") +
           number(*slo.error_rate * 100) + "%";
  }
  return out;
}

std::string load_text(const Config& config) {
  const LoadConfig& l = config.load;
  if (l.profile == ProfileKind::kSearch && l.search) {
    const SearchConfig& s = *l.search;
    std::string text = std::string("capacity search of ") + to_string(s.vary) + " in [" +
                       number(s.low) + ", " + number(s.high) + "]";
    const std::string step = end_text(s.step_duration_s, std::nullopt, s.step_requests);
    if (!step.empty()) text += ", " + step + " a step";
    const std::string slo = slo_limits_text(s.slo);
    return slo.empty() ? text : text + "; SLO " + slo;
  }
  if (l.profile == ProfileKind::kSweep && l.sweep) {
    const SweepConfig& s = *l.sweep;
    std::string values;
    for (double v : s.values) values += (values.empty() ? "" : ", ") + number(v);
    std::string text = std::string("sweep of ") + to_string(s.vary) + " over " + values;
    const std::string step = end_text(s.duration_s, s.sessions, s.requests);
    return step.empty() ? text : text + " (" + step + " each)";
  }
  if (l.profile == ProfileKind::kStages) {
    std::string text = std::to_string(l.stages.size()) + " stages:";
    for (const StageConfig& st : l.stages) {
      text += (st.index > 1 ? ", " : " ") + st.name + " (" + stage_level_text(st) + ")";
    }
    return text;
  }
  std::string text = to_string(l.mode);
  if (l.mode == LoadMode::kConcurrency) text += " " + std::to_string(l.concurrency);
  if (l.mode == LoadMode::kUsers) {
    text += " " + std::to_string(l.concurrency) + " at " + number(l.rate) + "/s (each request " +
            number(static_cast<double>(l.concurrency) / l.rate) + " s after the user's last ended)";
  }
  if (l.mode == LoadMode::kRate) {
    text += " " + number(l.rate) + " conversations/s (" + to_string(l.arrival) + ")";
  }
  const std::string until = end_text(l.duration_s, l.sessions, l.requests);
  if (!until.empty()) text += ", until " + until;
  return text;
}

std::string dataset_text(const Config& config, const MetricsSnapshot& s) {
  const DatasetConfig& d = config.dataset;
  std::string text = to_string(d.type);
  if (d.path) text += " " + *d.path;
  const bool synthetic = d.type == DatasetType::kSynthetic;
  if (synthetic || d.conversations_set) {
    text += ", " + std::to_string(d.conversations) + " conversations";
  }
  auto measured = [&](std::string_view tag) -> std::string {
    const MetricStats* m = s.find(tag);
    if (m == nullptr || m->count == 0) return {};
    return "measured " + number(m->avg);
  };
  if (synthetic) text += "; turns mean " + number(d.turns.mean);
  const std::string isl = measured("input_sequence_length");
  const std::string osl = measured("output_sequence_length");
  if (synthetic) {
    text += "; ISL mean " + number(d.input_tokens.mean) + " tokens" +
            (isl.empty() ? "" : " (" + isl + ")") + "; OSL mean " + number(d.output_tokens.mean) +
            " tokens" + (osl.empty() ? "" : " (" + osl + ")");
  } else {
    if (!isl.empty()) text += "; ISL " + isl + " tokens";
    if (!osl.empty()) text += "; OSL " + osl + " tokens";
  }
  return text;
}

std::string results_text(const MetricsSnapshot& s) {
  if (s.request_count == 0) {
    if (s.error_request_count == 0) return "no measured request completed";
    return "no request succeeded: " + std::to_string(s.error_request_count) + " failed";
  }
  std::string text = std::to_string(s.request_count) + " requests ok, " +
                     std::to_string(s.error_request_count) + " failed; " +
                     number(s.request_throughput) + " req/s; " + number(s.output_token_throughput) +
                     " output tok/s";
  const double ttft50 = headline_pct(s, "time_to_first_token", 50);
  if (std::isfinite(ttft50)) {
    text += "; TTFT p50 " + number(ttft50) + " ms p99 " +
            number(headline_pct(s, "time_to_first_token", 99)) + " ms";
  }
  const double itl50 = headline_pct(s, "inter_token_latency", 50);
  if (std::isfinite(itl50)) {
    text += "; ITL p50 " + number(itl50) + " ms p99 " +
            number(headline_pct(s, "inter_token_latency", 99)) + " ms";
  }
  return text;
}

std::string search_answer(const SearchFacts& search, std::span<const StageFacts> stages) {
  const char* vary = to_string(search.config.vary);
  std::string text = std::string("highest ") + vary + " meeting the SLO: ";
  if (search.max_meeting_slo) {
    text += number(*search.max_meeting_slo);
  } else {
    text += search.steps.empty() ? "none judged"
                                 : "none, even " + number(search.config.low) + " missed it";
  }
  if (!search.min_failing) {
    text += search.complete ? "; even " + number(search.config.high) + " met it" : "";
    return text + " (" + std::to_string(search.steps.size()) + " steps)";
  }
  text += "; " + number(*search.min_failing) + " missed it";
  for (const SearchStep& step : search.steps) {
    if (step.met || step.value != *search.min_failing) continue;
    if (step.stage_index < 0 || static_cast<size_t>(step.stage_index) >= stages.size()) break;
    const auto& failures = stages[static_cast<size_t>(step.stage_index)].slo_failures;
    for (size_t i = 0; i < failures.size(); ++i) text += (i ? "; " : " (") + failures[i];
    if (!failures.empty()) text += ")";
    break;
  }
  return text + " (" + std::to_string(search.steps.size()) + " steps)";
}

// A sweep's peak throughput and how latency moved across it, then the stages that did not pass.
std::string stages_answer(const Config& config, std::span<const StageFacts> stages) {
  std::string text;
  if (config.load.profile == ProfileKind::kSweep) {
    const StageFacts* peak = nullptr;
    const StageFacts* first = nullptr;
    const StageFacts* last = nullptr;
    for (const StageFacts& st : stages) {
      if (st.metrics.request_count == 0) continue;
      if (!peak || st.metrics.output_token_throughput > peak->metrics.output_token_throughput) {
        peak = &st;
      }
      if (!first || st.config.value < first->config.value) first = &st;
      if (!last || st.config.value > last->config.value) last = &st;
    }
    if (peak) {
      text = "peak " + number(peak->metrics.output_token_throughput) + " output tok/s at " +
             stage_level_text(peak->config) + "; TTFT p99 " +
             number(headline_pct(first->metrics, "time_to_first_token", 99)) + " ms at " +
             stage_level_text(first->config) + ", " +
             number(headline_pct(last->metrics, "time_to_first_token", 99)) + " ms at " +
             stage_level_text(last->config);
    }
  }
  std::string flagged;
  for (const StageFacts& st : stages) {
    const Verdict v = judge_stage(st);
    if (v.status == VerdictStatus::kPass) continue;
    flagged += (flagged.empty() ? "" : "; ") + st.config.name + " " + to_string(v.status) +
               (v.reasons.empty() ? "" : " (" + v.reasons.front() + ")");
  }
  if (!flagged.empty()) text += (text.empty() ? "" : "; ") + std::string("not clean: ") + flagged;
  return text;
}

}  // namespace

Headline make_headline(const Config& config, const std::string& url, const MetricsSnapshot& s,
                       const Verdict& verdict, const std::vector<Insight>& insights,
                       std::span<const StageFacts> stages, const SearchFacts* search) {
  Headline h;
  h.model = config.target.model;
  h.endpoint = std::string(proto::to_string(config.target.endpoint)) +
               (config.target.streaming ? ", streaming" : ", not streamed");
  h.target = redact_url(url);
  h.load = load_text(config);
  h.dataset = dataset_text(config, s);
  h.results = results_text(s);
  if (search) {
    h.answer = search_answer(*search, stages);
  } else if (!stages.empty()) {
    h.answer = stages_answer(config, stages);
  }
  // The cause of a failure sits at the top: the insights come errors first.
  if (verdict.status == VerdictStatus::kFail && !insights.empty() &&
      insights.front().severity != "info") {
    const Insight& top = insights.front();
    h.cause = top.title + ": " + top.problem;
    if (!top.fixes.empty()) h.fix = top.fixes.front();
  }
  return h;
}

std::string verdict_line(const Verdict& verdict) {
  std::string text = to_string(verdict.status);
  if (verdict.reasons.empty())
    return text + ": the run delivered the intended load with no finding";
  text += ": " + verdict.reasons.front();
  if (verdict.reasons.size() > 1) {
    text += " (and " + std::to_string(verdict.reasons.size() - 1) + " more below)";
  }
  return text;
}

std::string wrap_at_spaces(const std::string& prefix, const std::string& text, size_t width) {
  const std::string indent(prefix.size(), ' ');
  std::string out;
  std::string line = prefix;
  size_t at = 0;
  bool first_word = true;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (!first_word && line.size() + 1 + word.size() > width) {
      out += line + '\n';
      line = indent;
      first_word = true;
    }
    line += (first_word ? "" : " ") + word;
    first_word = false;
    at = end + 1;
  }
  return out + line + '\n';
}

namespace {

// "  label:  value" with the value wrapped at spaces to `width` columns, continuation lines
// indented under the value (a word longer than the line stays whole).
void headline_row(std::ostream& out, const char* label, const std::string& value, size_t width) {
  std::string prefix = std::string("  ") + label;
  prefix.resize(11, ' ');
  out << wrap_at_spaces(prefix, value, width);
}

}  // namespace

void print_headline(std::ostream& out, const std::string& name, const Headline& h,
                    const Verdict& verdict, size_t width) {
  out << "convoy | " << name << ": " << h.model << " at " << h.target << " (" << h.endpoint
      << ")\n";
  headline_row(out, "load:", h.load, width);
  headline_row(out, "dataset:", h.dataset, width);
  headline_row(out, "result:", h.results, width);
  if (!h.answer.empty()) headline_row(out, "answer:", h.answer, width);
  headline_row(out, "verdict:", verdict_line(verdict), width);
  if (!h.cause.empty()) headline_row(out, "cause:", h.cause, width);
  if (!h.fix.empty()) headline_row(out, "fix:", h.fix, width);
}

}  // namespace convoy::controller
