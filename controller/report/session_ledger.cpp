#include "controller/report/session_ledger.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace convoy::controller {

void SessionLedger::add_end(const proto::ConversationEnd& end) {
  ++conversations_reported;
  sessions_opened += end.sessions_opened;
  sessions_left_open += end.sessions_left_open;
}

void SessionLedger::add_record(const proto::Record& r) {
  if (!r.early_release) return;
  ++releases_sent;
  if (r.http_status < 200 || r.http_status >= 300) ++releases_failed;
}

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put(Writer& w, const char* key, std::string_view value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

}  // namespace

std::string SessionLedger::json() const {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  put(w, "configured", proto::to_string(configured));
  put(w, "mode", proto::to_string(mode));
  w.Key("detected_by");
  if (detected_by.empty()) {
    w.Null();
  } else {
    w.String(detected_by.c_str());
  }
  if (!detected_by.empty()) {
    w.Key("probe");
    w.StartObject();
    put(w, "url", probe_url);
    w.Key("http_status");
    w.Int64(probe_http_status);
    put(w, "answer", probe_answer);
    put(w, "meaning", detection_reason);
    w.EndObject();
  }
  w.Key("sessions");
  w.StartObject();
  w.Key("tracked");
  w.Bool(tracked);
  w.Key("opened");
  w.Int64(sessions_opened);
  w.Key("closed");
  w.Int64(sessions_opened - sessions_left_open);
  w.Key("releases_sent");
  w.Int64(releases_sent);
  w.Key("releases_failed");
  w.Int64(releases_failed);
  w.Key("left_open");
  w.Int64(sessions_left_open);
  w.Key("conversations_reported");
  w.Int64(conversations_reported);
  w.EndObject();
  w.EndObject();
  return sb.GetString();
}

std::string SessionLedger::console_line() const {
  if (!tracked) return "";
  return "sessions (" + std::string(proto::to_string(mode)) +
         "): " + std::to_string(sessions_opened) + " opened, " + std::to_string(releases_sent) +
         " released early (" + std::to_string(releases_failed) + " failed), " +
         std::to_string(sessions_left_open) + " left open at the server";
}

}  // namespace convoy::controller
