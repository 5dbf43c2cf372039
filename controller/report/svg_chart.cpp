#include "controller/report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace convoy::controller::chart {

// ---- text -----------------------------------------------------------------------------------

// Every piece of data (names, messages, ids, URLs) passes through here: a server's error
// message is untrusted text and must never become markup.
std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A value for a table cell or axis label: enough digits to read, never scientific for the
// ranges latencies and throughputs take.
std::string number(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  const double a = std::fabs(v);
  if (a == 0) {
    return "0";
  } else if ((a < 1e15 && v == std::round(v)) || a >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 100) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else if (a >= 1) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  std::string text = buf;
  // "125.0" reads as more precise than it is; "125" is what a person writes.
  if (text.find('.') != std::string::npos && text.find('e') == std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

// "12345" -> "12,345": digits grouped by thousands (the integer part only).
std::string grouped_digits(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(v));
  std::string digits = buf;
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string tick_text(double v) {
  const double a = std::fabs(v);
  if (a < 1e-9) return "0";
  char buf[48];
  if (a >= 1e6) {  // "2.5M": a wide number would crowd the axis
    std::snprintf(buf, sizeof buf, "%.4g", v / 1e6);
    return std::string(buf) + "M";
  }
  if (a >= 1000) return grouped_digits(v);
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

double text_width_px(std::string_view text, double font_px) {
  return 0.65 * font_px * static_cast<double>(text.size());
}

namespace {

// Fixed precision for SVG coordinates.
std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// ---- SVG charts -----------------------------------------------------------------------------

constexpr double kChartWidth = 600;
constexpr double kChartHeight = 272;
constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 28;
constexpr double kBottom = 44;
constexpr double kPlotWidth = kChartWidth - kLeft - kRight;
constexpr double kPlotHeight = kChartHeight - kTop - kBottom;
constexpr int kYTicks = 4;

// A round step so that kYTicks steps cover `max`.
double nice_step(double max) {
  if (!(max > 0) || !std::isfinite(max)) return 1;
  const double raw = max / kYTicks;
  const double pow10 = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * pow10 >= raw) return m * pow10;
  }
  return 10 * pow10;
}

struct Axes {
  double y_max = 1;  // top of the y axis
};

std::string svg_open(const std::string& label) {
  return "<svg class=\"chart\" viewBox=\"0 0 " + coord(kChartWidth) + " " + coord(kChartHeight) +
         "\" width=\"" + coord(kChartWidth) + "\" height=\"" + coord(kChartHeight) +
         "\" role=\"img\" aria-label=\"" + escape(label) + "\">";
}

// Horizontal grid lines and y labels; returns the axis top.
Axes y_axis(std::ostringstream& out, double data_max, const std::string& y_label) {
  const double step = nice_step(data_max);
  Axes axes;
  axes.y_max = step * std::max(1.0, std::ceil(data_max / step));
  const int ticks = static_cast<int>(std::lround(axes.y_max / step));
  for (int i = 0; i <= ticks; ++i) {
    const double v = step * i;
    const double y = kTop + kPlotHeight - v / axes.y_max * kPlotHeight;
    out << "<line class=\"grid\" x1=\"" << coord(kLeft) << "\" y1=\"" << coord(y) << "\" x2=\""
        << coord(kLeft + kPlotWidth) << "\" y2=\"" << coord(y) << "\"/>";
    out << "<text class=\"tick\" x=\"" << coord(kLeft - 6) << "\" y=\"" << coord(y + 4)
        << "\" text-anchor=\"end\">" << escape(tick_text(v)) << "</text>";
  }
  out << "<text class=\"axis-label\" transform=\"translate(14 " << coord(kTop + kPlotHeight / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape(y_label) << "</text>";
  out << "<line class=\"axis\" x1=\"" << coord(kLeft) << "\" y1=\"" << coord(kTop + kPlotHeight)
      << "\" x2=\"" << coord(kLeft + kPlotWidth) << "\" y2=\"" << coord(kTop + kPlotHeight)
      << "\"/>";
  return axes;
}

void x_label(std::ostringstream& out, const std::string& label) {
  out << "<text class=\"axis-label\" x=\"" << coord(kLeft + kPlotWidth / 2) << "\" y=\""
      << coord(kChartHeight - 6) << "\" text-anchor=\"middle\">" << escape(label) << "</text>";
}

void x_tick(std::ostringstream& out, double x, const std::string& text) {
  out << "<text class=\"tick\" x=\"" << coord(x) << "\" y=\"" << coord(kTop + kPlotHeight + 16)
      << "\" text-anchor=\"middle\">" << escape(text) << "</text>";
}

// A row of swatches in the top margin, so it never hides data.
void legend(std::ostringstream& out, const std::vector<Line>& lines) {
  double x = kLeft;
  for (const auto& l : lines) {
    out << "<rect class=\"swatch " << l.css_class << "\" x=\"" << coord(x) << "\" y=\"8\" "
        << "width=\"12\" height=\"8\"/><text class=\"legend\" x=\"" << coord(x + 16)
        << "\" y=\"16\">" << escape(l.name) << "</text>";
    x += 28 + 7 * static_cast<double>(l.name.size());
  }
}

}  // namespace

// A histogram: one bar per bin, equal widths (bins may be log-spaced; the ticks say where).
std::string histogram_svg(const std::vector<Bin>& bins, const std::string& title,
                          const std::string& unit) {
  std::ostringstream out;
  out << svg_open(title + " distribution");
  int64_t max_count = 0;
  for (const auto& b : bins) max_count = std::max(max_count, b.count);
  const Axes axes = y_axis(out, static_cast<double>(max_count), "requests");
  const size_t n = bins.size();
  // Every request had the same value: one narrow bar in the middle, labelled with it.
  const double width = n == 1 ? kPlotWidth / 8 : kPlotWidth / static_cast<double>(n);
  const double x0 = n == 1 ? kLeft + (kPlotWidth - width) / 2 : kLeft;
  for (size_t i = 0; i < n; ++i) {
    const double h = static_cast<double>(bins[i].count) / axes.y_max * kPlotHeight;
    const double x = x0 + width * static_cast<double>(i);
    out << "<rect class=\"bar\" x=\"" << coord(x + 0.5) << "\" y=\""
        << coord(kTop + kPlotHeight - h) << "\" width=\"" << coord(std::max(width - 1, 0.5))
        << "\" height=\"" << coord(h) << "\"><title>" << escape(number(bins[i].low)) << " to "
        << escape(number(bins[i].high)) << " " << escape(unit) << ": " << bins[i].count
        << "</title></rect>";
  }
  if (n == 1) {
    x_tick(out, x0 + width / 2, tick_text(bins[0].low));
  } else {
    for (size_t k = 0; k <= 4; ++k) {  // bin edges: first, quarters, last
      const size_t edge = n * k / 4;
      const double value = edge < n ? bins[edge].low : bins[n - 1].high;
      x_tick(out, kLeft + width * static_cast<double>(edge), tick_text(value));
    }
  }
  const bool log_spaced = n > 2 && bins[0].low > 0 &&
                          (bins[n - 1].high - bins[n - 1].low) > 2 * (bins[0].high - bins[0].low);
  x_label(out, unit + (log_spaced ? " (log scale)" : ""));
  out << "</svg>";
  return out.str();
}

namespace {

// Stage marks: a dashed line each, its label in the first of kMarkRows rows where it clears the
// label before it (so neighbouring stages never run together into one string); a label that
// fits in no row is left out, the line's tooltip still names it.
constexpr int kMarkRows = 3;
constexpr double kMarkFontPx = 10;

template <typename Px>
void marker_lines(std::ostringstream& out, const std::vector<Marker>& markers, Px px) {
  std::vector<const Marker*> order;
  for (const auto& m : markers) {
    if (std::isfinite(m.x) && m.x >= 0) order.push_back(&m);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Marker* a, const Marker* b) { return a->x < b->x; });
  double row_end[kMarkRows];
  std::fill(std::begin(row_end), std::end(row_end), -1e9);
  for (const Marker* m : order) {
    const double x = px(m->x);
    out << "<g class=\"stage-mark\"><title>" << escape(m->label) << "</title><line x1=\""
        << coord(x) << "\" y1=\"" << coord(kTop) << "\" x2=\"" << coord(x) << "\" y2=\""
        << coord(kTop + kPlotHeight) << "\"/>";
    const double w = text_width_px(m->label, kMarkFontPx);
    // Right of the line; left of it when it would run off the chart.
    const bool flip = x + 3 + w > kChartWidth - 2;
    const double left = flip ? x - 3 - w : x + 3;
    for (int r = 0; r < kMarkRows; ++r) {
      if (row_end[r] + 4 > left) continue;
      row_end[r] = left + w;
      out << "<text x=\"" << coord(flip ? x - 3 : x + 3) << "\" y=\"" << coord(kTop + 10 + 13 * r)
          << "\"" << (flip ? " text-anchor=\"end\"" : "") << ">" << escape(m->label) << "</text>";
      break;
    }
    out << "</g>";
  }
}

struct LabelBox {
  double left, right, top, bottom;  // px in the chart's frame
};

// A horizontal reference line (an SLO) across the plot, its label above its left end; the
// label's box goes in `placed` so that no point label is drawn over it.
void threshold_line(std::ostringstream& out, std::vector<LabelBox>& placed, double y,
                    const std::string& label) {
  out << "<g class=\"slo-line\"><line x1=\"" << coord(kLeft) << "\" y1=\"" << coord(y) << "\" x2=\""
      << coord(kLeft + kPlotWidth) << "\" y2=\"" << coord(y) << "\"/><text x=\"" << coord(kLeft + 4)
      << "\" y=\"" << coord(y - 4) << "\">" << escape(label) << "</text></g>";
  placed.push_back(
      {kLeft + 4, kLeft + 4 + text_width_px(label, kMarkFontPx), y - 4 - kMarkFontPx, y - 2});
}

// A point's label: above right of its dot, or left of it near the right edge; below the dot
// when that spot is taken by a label before it; left out when both are.
void point_label(std::ostringstream& out, std::vector<LabelBox>& placed, double x, double y,
                 const std::string& label) {
  const double w = text_width_px(label, kMarkFontPx);
  const bool flip = x + 5 + w > kChartWidth - 2;
  const double left = flip ? x - 5 - w : x + 5;
  for (const double baseline : {y - 6, y + 14}) {
    const LabelBox box{left, left + w, baseline - kMarkFontPx, baseline + 2};
    const bool taken = std::any_of(placed.begin(), placed.end(), [&](const LabelBox& b) {
      return box.left < b.right && b.left < box.right && box.top < b.bottom && b.top < box.bottom;
    });
    if (taken) continue;
    placed.push_back(box);
    out << "<text class=\"point-label\" x=\"" << coord(flip ? x - 5 : x + 5) << "\" y=\""
        << coord(baseline) << "\"" << (flip ? " text-anchor=\"end\"" : "") << ">" << escape(label)
        << "</text>";
    return;
  }
}

template <typename Px, typename Py>
void line_points(std::ostringstream& out, std::vector<LabelBox>& placed, const Line& l, bool dots,
                 Px px, Py py) {
  if (!l.dots_only) {
    out << "<polyline class=\"line " << l.css_class << "\" points=\"";
    for (const auto& [x, y] : l.points) out << coord(px(x)) << "," << coord(py(y)) << " ";
    out << "\"><title>" << escape(l.name) << "</title></polyline>";
  }
  if (l.points.size() != 1 && !dots && !l.dots_only) return;
  for (size_t i = 0; i < l.points.size(); ++i) {
    const auto [x, y] = l.points[i];
    const std::string label = i < l.point_labels.size() ? l.point_labels[i] : "";
    out << "<circle class=\"dot " << l.css_class << "\" cx=\"" << coord(px(x)) << "\" cy=\""
        << coord(py(y)) << "\" r=\"" << (l.dots_only ? "4" : "3") << "\"><title>" << escape(l.name)
        << (label.empty() ? "" : " " + escape(label)) << ": " << escape(number(x)) << ", "
        << escape(number(y)) << "</title></circle>";
    if (!label.empty()) point_label(out, placed, px(x), py(y), label);
  }
}

}  // namespace

std::string line_svg(const std::vector<Line>& lines, const std::string& title,
                     const std::string& y_label, const std::string& x_unit,
                     const LineOptions& options) {
  std::ostringstream out;
  out << svg_open(title);
  double x_max = 0, y_max = 0;
  for (const auto& l : lines) {
    for (const auto& [x, y] : l.points) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  }
  for (const auto& m : options.markers) x_max = std::max(x_max, m.x);
  if (std::isfinite(options.x_max)) x_max = std::max(x_max, options.x_max);
  if (!(x_max > 0)) x_max = 1;
  const bool has_threshold = std::isfinite(options.threshold) && options.threshold > 0;
  if (has_threshold) y_max = std::max(y_max, options.threshold * 1.1);
  const Axes axes = y_axis(out, y_max, y_label);
  auto px = [&](double x) { return kLeft + x / x_max * kPlotWidth; };
  auto py = [&](double y) { return kTop + kPlotHeight - y / axes.y_max * kPlotHeight; };
  const double x_step = nice_step(x_max);
  for (int k = 0; k <= 2 * kYTicks && x_step * k <= x_max * (1 + 1e-9); ++k) {
    x_tick(out, px(x_step * k), tick_text(x_step * k));
  }
  x_label(out, x_unit);
  marker_lines(out, options.markers, px);
  std::vector<LabelBox> placed;  // text already drawn: later labels keep clear of it
  if (has_threshold) threshold_line(out, placed, py(options.threshold), options.threshold_label);
  for (const auto& l : lines) {
    if (!l.points.empty()) line_points(out, placed, l, options.dots, px, py);
  }
  legend(out, lines);
  out << "</svg>";
  return out.str();
}

// Grouped bars: for each group label, one bar per series (series[s].points[g].second).
std::string grouped_bars_svg(const std::vector<std::string>& groups,
                             const std::vector<Line>& series, const std::string& title,
                             const std::string& y_label, const std::string& x_label_text) {
  std::ostringstream out;
  out << svg_open(title);
  double y_max = 0;
  for (const auto& s : series) {
    for (const auto& p : s.points) y_max = std::max(y_max, p.second);
  }
  const Axes axes = y_axis(out, y_max, y_label);
  const double group_width = kPlotWidth / static_cast<double>(std::max<size_t>(groups.size(), 1));
  const double bar_width =
      std::max(1.0, (group_width - 4) / static_cast<double>(std::max<size_t>(series.size(), 1)));
  const size_t label_every = groups.size() > 16 ? (groups.size() + 15) / 16 : 1;
  for (size_t g = 0; g < groups.size(); ++g) {
    const double gx = kLeft + group_width * static_cast<double>(g) + 2;
    for (size_t s = 0; s < series.size(); ++s) {
      if (g >= series[s].points.size()) continue;
      const double v = series[s].points[g].second;
      const double h = v / axes.y_max * kPlotHeight;
      out << "<rect class=\"bar " << series[s].css_class << "\" x=\""
          << coord(gx + bar_width * static_cast<double>(s)) << "\" y=\""
          << coord(kTop + kPlotHeight - h) << "\" width=\"" << coord(std::max(bar_width - 1, 0.5))
          << "\" height=\"" << coord(h) << "\"><title>turn " << escape(groups[g]) << " "
          << escape(series[s].name) << ": " << escape(number(v)) << "</title></rect>";
    }
    if (g % label_every == 0) x_tick(out, gx + group_width / 2 - 2, groups[g]);
  }
  x_label(out, x_label_text);
  legend(out, series);
  out << "</svg>";
  return out.str();
}

}  // namespace convoy::controller::chart
