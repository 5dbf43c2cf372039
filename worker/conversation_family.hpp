// A family: one conversation to the controller, run here as a lead and its sub-agents. A
// sub-agent starts when its parent's turn `spawn_after_turn` ends, and the parent's next turn
// waits until every sub-agent spawned there has finished (with its own sub-agents). Fan-in
// (Conversation.fan_in) makes a turn, or a sub-agent's start, wait for other members to finish
// too. The family ends (one ConversationEnd) once every member has finished or will never run.
// This file holds the family's state, how it is built from a Conversation, the record fields its
// members stamp, how its end is told, and the pool that reuses families; ConversationRunner
// drives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/messages.hpp"
#include "worker/event_loop.hpp"
#include "worker/request_builder.hpp"
#include "worker/session_routing.hpp"
#include "worker/transport.hpp"

namespace convoy::worker {

// What a request is for: a turn of the conversation, final_marker's close request after the
// final turn, or the release of a session whose conversation ended early (a server that keeps
// sessions would otherwise hold it until its timeout). Only turns are measured.
enum class RequestKind : uint8_t { kTurn, kCloseRequest, kRelease };

inline constexpr size_t kNoParent = static_cast<size_t>(-1);  // FamilyMember::parent of the lead

// One conversation of a family: the lead (members[0]) or a sub-agent (members[i + 1] is
// Conversation.subagents[i]). Each has its own turns, history, correlation id and session.
struct FamilyMember {
  int32_t position = -1;  // Record.subagent: -1 = the lead
  size_t parent = kNoParent;
  const std::string* conversation_id = nullptr;  // into ConversationFamily::conv (never moves)
  const std::string* correlation_id = nullptr;
  const std::string* parent_correlation_id = nullptr;  // nullptr for the lead
  const std::string* system_prompt = nullptr;
  const std::vector<proto::Turn>* turns = nullptr;
  std::map<uint32_t, std::vector<size_t>> children;  // by spawn_after_turn (turns ended)
  // Fan-in (Conversation.fan_in): by turn, how many members that turn still waits for; and who
  // waits for this member to finish (member, turn). A turn starts once its count is 0.
  std::map<uint32_t, uint32_t> turn_waits;
  std::vector<std::pair<size_t, uint32_t>> waiters;
  bool fan_in_start = false;  // spawned by no turn: its turn-0 waits alone start it
  uint32_t start_edges = 0;   // fan-in edges on its turn 0 (met or not)

  uint32_t next_turn = 0;
  std::vector<ChatMessage> history;
  // responses with target.responses_state server: the id of this member's last response; the
  // next turn sends only its own input, chained to it. "": turn 1 (or the server gave none).
  std::string previous_response_id;
  EventLoop::TimerId timer = 0;
  std::optional<Transport::RequestId> request;
  RequestKind kind = RequestKind::kTurn;  // of the request in flight
  int64_t intended_ns = 0;                // of the request being scheduled or sent
  SessionOverlay overlay;                 // of the request in flight
  std::string request_id;
  SessionControl session_control;  // of the request in flight, as sent (for its record)

  // Its session at the server (when releases_sessions): a request that may open it reached the
  // server; a close or release for it was answered 2xx; the early release went out.
  bool session_open = false;
  bool session_closed = false;
  bool release_sent = false;

  size_t running_children = 0;  // spawned at the last turn that ended, not yet finished
  bool started = false;         // its first turn was scheduled or is waiting (spawned)
  // The next turn (next_turn) waits for running_children to reach 0 and its fan-in to be met.
  bool waiting = false;
  int64_t next_intended_ns = 0;  // that turn's end(k) + think time
  bool turns_done = false;       // its own requests are over (reason says how)
  bool finished = false;         // turns_done and every sub-agent it started finished
  proto::EndReason reason = proto::EndReason::kCompleted;
};

struct ConversationFamily {
  proto::Conversation conv;
  std::vector<FamilyMember> members;
  // Set when the lead ended early (abort, cancel): nothing new starts, requests in flight are
  // cancelled, and the family ends when the last of them returns.
  std::optional<proto::EndReason> cancelled;

  // The members of `conv`: the lead, then each sub-agent, linked to its parent, and the fan-in
  // edges. A sub-agent that names no earlier parent, or spawns after a turn its parent does not
  // have, is logged and never starts (it counts as finished); so is a fan-in edge out of range.
  void build_members();
  void link_subagent(size_t i);
  void add_fan_in(const proto::FanIn& edge);
  // Whether member m's turn `turn` has every fan-in edge met.
  bool fan_in_met(size_t m, uint32_t turn) const;
  // Whether every member finished (the family may end once no request is out).
  bool all_finished() const;
  // The record fields member m stamps on a request for turn `turn_index` (x_request_id and
  // the response's fields are the caller's).
  proto::Record record_of(size_t m, uint32_t turn_index, bool final_turn) const;
  // The family's end once every member finished: the lead's reason (or the cancellation's),
  // else the first sub-agent's that did not complete, and its sessions left open.
  proto::ConversationEnd end() const;
};

// Ended families kept for the next conversations: a Family and its member vector cost no
// allocation once a few have ended. What an ended one held is freed when it is given back.
class FamilyPool {
 public:
  std::unique_ptr<ConversationFamily> take();
  void give_back(std::unique_ptr<ConversationFamily> family);

 private:
  static constexpr size_t kSpareFamilies = 64;
  std::vector<std::unique_ptr<ConversationFamily>> spare_;  // reset, at most kSpareFamilies
};

}  // namespace convoy::worker
