// The SVG charts of report.html, drawn as text with no script: histograms, lines over time and
// grouped bars, on one fixed 600x272 frame with round y ticks. Every label goes through escape().
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/report/metrics.hpp"

namespace convoy::controller::chart {

// Every piece of data (names, messages, ids, URLs) passes through here: a server's error
// message is untrusted text and must never become markup.
std::string escape(std::string_view s);
// A value for a table cell or axis label: enough digits to read, never scientific for the
// ranges latencies and throughputs take.
std::string number(double v);
// An axis tick: "0", "0.25", "750", "10,000", "2.5M" (never "1e+04").
std::string tick_text(double v);
// The width in px the charts' text takes at `font_px` (an estimate: 0.65 em a character, wide
// enough for the sans-serif fonts browsers use).
double text_width_px(std::string_view text, double font_px);

struct Line {
  Line() = default;
  Line(std::string line_name, std::string css, std::vector<std::pair<double, double>> xy = {})
      : name(std::move(line_name)), css_class(std::move(css)), points(std::move(xy)) {}

  std::string name;
  std::string css_class;                          // s1, s2, s3: the colour
  std::vector<std::pair<double, double>> points;  // (x, y), x increasing
  // Optional, one per point (or empty): a short text drawn beside each dot, e.g. the load level
  // of a stage on a throughput-latency curve ("c=8"). Empty strings draw nothing.
  std::vector<std::string> point_labels;
  bool dots_only = false;  // draw the points as dots with no line joining them (markers)
};

// A histogram: one bar per bin, equal widths (bins may be log-spaced; the ticks say where).
std::string histogram_svg(const std::vector<Bin>& bins, const std::string& title,
                          const std::string& unit);
// A vertical mark at `x` across the plot (a stage boundary), labelled at its top.
struct Marker {
  double x = 0;
  std::string label;
};
struct LineOptions {
  std::vector<Marker> markers;  // drawn behind the lines, dashed (class "stage-mark")
  bool dots = false;            // a dot on every point (curves of few, measured points)
  double x_max = 0;  // > 0: the x axis reaches at least this (charts that share a time axis)
  // A horizontal reference line at this y (an SLO), labelled `threshold_label`; the y axis
  // reaches at least it. NaN: none.
  double threshold = std::numeric_limits<double>::quiet_NaN();
  std::string threshold_label = {};
};
// Lines over x from 0 to the largest x (of the points and the markers). Marker labels never
// overlap: each goes in the first of three rows where it clears the label before it, and one
// that fits in none is left out (its line keeps the name as a tooltip).
std::string line_svg(const std::vector<Line>& lines, const std::string& title,
                     const std::string& y_label, const std::string& x_unit,
                     const LineOptions& options = {});
// Grouped bars: for each group label, one bar per series (series[s].points[g].second).
std::string grouped_bars_svg(const std::vector<std::string>& groups,
                             const std::vector<Line>& series, const std::string& title,
                             const std::string& y_label, const std::string& x_label_text);

}  // namespace convoy::controller::chart
