// The SVG charts of report.html, drawn as text with no script: histograms, lines over time and
// grouped bars, on one fixed 600x272 frame with round y ticks. Every label goes through escape().
#pragma once

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

struct Line {
  std::string name;
  std::string css_class;                          // s1, s2, s3: the colour
  std::vector<std::pair<double, double>> points;  // (x, y), x increasing
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
};
// Lines over x from 0 to the largest x (of the points and the markers).
std::string line_svg(const std::vector<Line>& lines, const std::string& title,
                     const std::string& y_label, const std::string& x_unit,
                     const LineOptions& options = {});
// Grouped bars: for each group label, one bar per series (series[s].points[g].second).
std::string grouped_bars_svg(const std::vector<std::string>& groups,
                             const std::vector<Line>& series, const std::string& title,
                             const std::string& y_label, const std::string& x_label_text);

}  // namespace convoy::controller::chart
