// summary.json's "server_metrics" object from the telemetry room's typed results
// (server_metrics.hpp): the keys and layout of docs/telemetry.md.
#pragma once

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <string>

#include "controller/report/server_metrics.hpp"

namespace convoy::controller {

// The object, as the value of the key the caller has just written (summary.json's writer).
void write_server_metrics(rapidjson::PrettyWriter<rapidjson::StringBuffer>& w,
                          const ServerMetrics& m);

// The object alone, compact (tests, the fuzz target and the telemetry benchmark read it).
std::string server_metrics_json(const ServerMetrics& m);

}  // namespace convoy::controller
