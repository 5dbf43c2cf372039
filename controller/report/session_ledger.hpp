// summary.json run.session_routing: the mode configured and the mode run (with how `auto` learned
// it, controller/run/session_detect.hpp), and the sessions the server may still hold at the end
// (sessions of conversations that ended early are released): opened, released early, left open. Fed
// by the workers' ConversationEnds (each family's ledger) and the early-release records; a plain
// value the report writes.
#pragma once

#include <cstdint>
#include <string>

#include "proto/messages.hpp"

namespace convoy::controller {

struct SessionLedger {
  proto::SessionRoutingMode configured = proto::SessionRoutingMode::kOff;  // as the config said
  proto::SessionRoutingMode mode = proto::SessionRoutingMode::kOff;        // as the run ran
  // mode auto: how the contract was learned ("probe"), the URL probed, the HTTP status (0: no
  // answer) and the server's answer as received (trimmed to kMaxAnswerBytes). Empty otherwise.
  std::string detected_by;
  std::string probe_url;
  int64_t probe_http_status = 0;
  std::string probe_answer;
  std::string detection_reason;  // one sentence: what the answer meant
  // The mode has a release the server acts on (bind, legacy, header with close_request): the
  // counts below are kept; otherwise they stay 0 and summary.json says tracked: false.
  bool tracked = false;
  int64_t sessions_opened = 0;         // a bind/open (or header request) reached the server
  int64_t sessions_left_open = 0;      // of those, no close or release answered 2xx
  int64_t releases_sent = 0;           // early releases (records with early_release)
  int64_t releases_failed = 0;         // of those, not answered 2xx
  int64_t conversations_reported = 0;  // ConversationEnds counted (lost ones never report)

  static constexpr size_t kMaxAnswerBytes = 2048;

  void add_end(const proto::ConversationEnd& end);
  void add_record(const proto::Record& r);
  // The run.session_routing object as JSON text.
  std::string json() const;
  // One console line: "sessions: 115 opened, 102 released early (0 failed), 0 left open at the
  // server"; "" when not tracked.
  std::string console_line() const;
};

}  // namespace convoy::controller
