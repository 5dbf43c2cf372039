// report.html's header, answer first: the run's name and facts, then a box with what was tested
// (model, endpoint, load, dataset) and what came out (the results in one line, a profile's
// answer, the verdict's reason and, for a failed run, its cause from the top insight with the
// fix), then the verdict with every reason, then the page's navigation.
#pragma once

#include <rapidjson/document.h>

#include <sstream>

#include "controller/report/metrics.hpp"
#include "controller/report/summary_writer.hpp"

namespace convoy::controller {

// Which sections the page holds below the header (the navigation links only to those).
struct PageSections {
  bool charts = true;  // distributions, over time, TTFT by turn: false when nothing succeeded
  bool stages = false;
  bool curve = false;
  bool server = false;
};

void header_html(std::ostringstream& out, const rapidjson::Value& run,
                 const rapidjson::Value& verdict, const rapidjson::Value& insights,
                 const MetricsSnapshot& s, const SummaryExtras& extras,
                 const PageSections& sections);

}  // namespace convoy::controller
