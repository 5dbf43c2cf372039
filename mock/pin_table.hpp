// Session pins: session id -> worker, with a TTL. Pure: every call takes `now`.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace convoy::mock {

using Clock = std::chrono::steady_clock;

enum class PinKind {
  kEngine,  // legacy open with engine sessions: the worker holds state, so its loss is an error
  kRouter,  // bind: router-only affinity, re-routed when the worker goes away
  kHeader,  // X-Dynamo-Session-ID affinity, idle TTL
};

struct Pin {
  int worker = 0;
  PinKind kind = PinKind::kRouter;
  Clock::duration ttl{};
  Clock::time_point expires_at{};
};

struct PinView {
  std::string session_id;
  Pin pin;
};

const char* to_string(PinKind kind);

class PinTable {
 public:
  // The live pin of `session_id`; an expired one is dropped on the way.
  std::optional<Pin> find(const std::string& session_id, Clock::time_point now);
  // Creates or replaces the pin; the TTL starts now.
  void pin(const std::string& session_id, int worker, PinKind kind, Clock::duration ttl,
           Clock::time_point now);
  // Restarts the TTL of an existing pin; false when there is none.
  bool refresh(const std::string& session_id, Clock::time_point now);
  bool unpin(const std::string& session_id);
  // Drops expired pins; returns how many.
  size_t reap(Clock::time_point now);
  void clear() { pins_.clear(); }

  size_t size() const { return pins_.size(); }
  std::vector<PinView> snapshot() const;

 private:
  std::unordered_map<std::string, Pin> pins_;
};

}  // namespace convoy::mock
