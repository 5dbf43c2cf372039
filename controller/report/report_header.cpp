#include "controller/report/report_header.hpp"

#include <string>

#include "controller/report/headline.hpp"
#include "controller/report/report_json.hpp"
#include "controller/report/svg_chart.hpp"

namespace convoy::controller {

namespace {

using chart::escape;
using chart::number;
using report_json::num;
using report_json::str;
using report_json::strings;
using report_json::verdict_class;

void facts_list(std::ostringstream& out, const rapidjson::Value& run,
                const rapidjson::Value& verdict, const MetricsSnapshot& s,
                const SummaryExtras& extras) {
  out << "<dl class=\"facts\">";
  auto fact = [&](const char* label, const std::string& value) {
    if (value.empty()) return;
    out << "<dt>" << label << "</dt><dd>" << escape(value) << "</dd>";
  };
  if (!extras.headline) fact("Target", str(run, "target_url"));
  fact("Start", str(run, "start"));
  fact("End", str(run, "end"));
  fact("Measured duration", number(s.duration_s) + " s");
  fact("convoy version", str(run, "convoy_version"));
  fact("Output folder", str(run, "output_dir"));
  if (str(run, "interrupted") == "true") fact("Interrupted", "yes: results are partial");
  if (str(run, "incomplete") == "true") fact("Incomplete", str(run, "incomplete_reason"));
  fact("Aborted", str(verdict, "aborted_reason"));  // load.abort_on stopped the run
  if (!extras.stages.empty()) {
    fact("Load profile", std::string(to_string(extras.profile)) + ", " +
                             std::to_string(extras.stages.size()) + " stage(s)");
  }
  out << "</dl>";
}

// What was tested and what came out, before anything else on the page.
void answer_box(std::ostringstream& out, const Headline& h, const rapidjson::Value& verdict,
                const rapidjson::Value& insights) {
  out << "<div class=\"answer\" id=\"answer\"><dl>";
  auto row = [&](const char* label, const std::string& value, const char* id = nullptr) {
    if (value.empty()) return;
    out << "<dt>" << label << "</dt><dd" << (id ? std::string(" id=\"") + id + "\"" : "") << ">"
        << escape(value) << "</dd>";
  };
  row("Tested", h.model + " at " + h.target + " (" + h.endpoint + ")");
  row("Load", h.load);
  row("Dataset", h.dataset);
  row("Result", h.results);
  row("Answer", h.answer, "answer-text");
  const std::string status = str(verdict, "status");
  const auto reasons = strings(verdict, "reasons");
  std::string words =
      reasons.empty() ? "the run delivered the intended load with no finding" : reasons.front();
  if (reasons.size() > 1) words += " (and " + std::to_string(reasons.size() - 1) + " more below)";
  out << "<dt>Verdict</dt><dd id=\"verdict-line\"><span class=\"badge small "
      << verdict_class(status) << "\">" << escape(status.empty() ? "unknown" : status) << "</span> "
      << escape(words) << "</dd></dl>";
  // A failed run's cause, from the top insight (errors come first), with what to do about it.
  if (status == "fail" && insights.IsArray() && !insights.Empty()) {
    const rapidjson::Value& top = insights[0];
    if (str(top, "severity") != "info") {
      out << "<div class=\"cause\" id=\"cause\"><p><strong>" << escape(str(top, "title"))
          << "</strong></p><p>" << escape(str(top, "problem")) << "</p>";
      const auto fixes = strings(top, "fixes");
      if (!fixes.empty()) out << "<p><strong>Fix:</strong> " << escape(fixes.front()) << "</p>";
      out << "</div>";
    }
  }
  out << "</div>";
}

void verdict_box(std::ostringstream& out, const rapidjson::Value& verdict) {
  std::string status = str(verdict, "status");
  if (status.empty()) status = "unknown";
  const std::string cls = verdict_class(status);
  out << "<div class=\"verdict " << cls << "\" id=\"verdict\"><strong>Verdict</strong> "
      << "<span class=\"badge " << cls << "\">" << escape(status) << "</span>";
  const double intended = num(verdict, "intended_rate_per_s", 0);
  const double achieved = num(verdict, "achieved_rate_per_s", 0);
  const double ks = num(verdict, "ks_statistic", -1);
  const double p = num(verdict, "ks_p_value", -1);
  if (intended > 0) {
    out << " <span class=\"muted\">intended " << escape(number(intended))
        << " conversations/s, achieved " << escape(number(achieved)) << "/s";
    if (ks >= 0) {
      out << "; inter-arrival KS D=" << escape(number(ks)) << ", p=" << escape(number(p));
    }
    out << "</span>";
  }
  const auto reasons = strings(verdict, "reasons");
  if (reasons.empty()) {
    out << "<p class=\"muted\">The run delivered the intended load with no finding.</p>";
  } else {
    out << "<ul>";
    for (const auto& r : reasons) out << "<li>" << escape(r) << "</li>";
    out << "</ul>";
  }
  if (const double settle = num(verdict, "settle_requests", 0); settle > 0) {
    out << "<p class=\"muted\" id=\"settle-note\">" << escape(number(settle))
        << " request(s) intended in settle windows are in no metric.</p>";
  }
  out << "</div>";
}

void nav_links(std::ostringstream& out, const PageSections& sections) {
  out << "<nav>";
  // Without a successful request the errors and insights come first (they hold the cause).
  if (!sections.charts) out << "<a href=\"#insights\">Insights</a><a href=\"#errors\">Errors</a>";
  if (sections.stages) out << "<a href=\"#stages\">Stages</a>";
  if (sections.curve) out << "<a href=\"#curve\">Throughput-latency</a>";
  out << "<a href=\"#summary\">Summary</a>";
  if (sections.charts) out << "<a href=\"#distributions\">Distributions</a>";
  if (sections.charts) out << "<a href=\"#over-time\">Over time</a>";
  if (sections.server) out << "<a href=\"#server\">Server</a>";
  if (sections.charts) {
    out << "<a href=\"#ttft-by-turn\">TTFT by turn</a><a href=\"#errors\">Errors</a>"
           "<a href=\"#insights\">Insights</a>";
  }
  out << "<a href=\"#workers\">Workers</a></nav>";
}

}  // namespace

void header_html(std::ostringstream& out, const rapidjson::Value& run,
                 const rapidjson::Value& verdict, const rapidjson::Value& insights,
                 const MetricsSnapshot& s, const SummaryExtras& extras,
                 const PageSections& sections) {
  const std::string name = str(run, "name");
  out << "<header class=\"top\"><h1>convoy report" << (name.empty() ? "" : ": ") << escape(name)
      << "</h1>";
  if (extras.headline) answer_box(out, *extras.headline, verdict, insights);
  facts_list(out, run, verdict, s, extras);
  verdict_box(out, verdict);
  nav_links(out, sections);
  out << "</header>";
}

}  // namespace convoy::controller
