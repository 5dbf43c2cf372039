#include "mock/pin_table.hpp"

#include <algorithm>

namespace convoy::mock {

const char* to_string(PinKind kind) {
  switch (kind) {
    case PinKind::kEngine:
      return "engine";
    case PinKind::kRouter:
      return "router";
    case PinKind::kHeader:
      return "header";
  }
  return "?";
}

std::optional<Pin> PinTable::find(const std::string& session_id, Clock::time_point now) {
  const auto it = pins_.find(session_id);
  if (it == pins_.end()) return std::nullopt;
  if (it->second.expires_at <= now) {
    pins_.erase(it);
    return std::nullopt;
  }
  return it->second;
}

void PinTable::pin(const std::string& session_id, int worker, PinKind kind, Clock::duration ttl,
                   Clock::time_point now) {
  pins_[session_id] = Pin{worker, kind, ttl, now + ttl};
}

bool PinTable::refresh(const std::string& session_id, Clock::time_point now) {
  const auto it = pins_.find(session_id);
  if (it == pins_.end()) return false;
  it->second.expires_at = now + it->second.ttl;
  return true;
}

bool PinTable::unpin(const std::string& session_id) { return pins_.erase(session_id) > 0; }

size_t PinTable::reap(Clock::time_point now) {
  return std::erase_if(pins_, [now](const auto& entry) { return entry.second.expires_at <= now; });
}

std::vector<PinView> PinTable::snapshot() const {
  std::vector<PinView> out;
  out.reserve(pins_.size());
  for (const auto& [id, pin] : pins_) out.push_back({id, pin});
  std::sort(out.begin(), out.end(),
            [](const PinView& a, const PinView& b) { return a.session_id < b.session_id; });
  return out;
}

}  // namespace convoy::mock
