// Affinity verified from the client: with session_routing.verify the server
// names the worker (and DP rank) that served each request (Record.served_by / dp_rank), so the
// report can count the conversations whose turns moved between workers, and keep the evidence
// the insight needs to name the likely cause (see insights.cpp, affinity_insights).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "proto/messages.hpp"

namespace convoy::controller {

// summary.json "affinity" (written when session_routing.verify is on). A session is one
// correlation id: a lead conversation or one of its sub-agents, each with its own binding. The
// serving identity is the worker *and* its DP rank: a move between DP ranks of one worker loses
// the KV cache just the same.
struct AffinitySummary {
  bool verified = false;                // some reply named its serving worker
  int64_t requests_with_worker = 0;     // requests whose reply named the worker
  int64_t requests_without_worker = 0;  // successful requests whose reply did not
  int64_t conversations = 0;            // sessions with at least one request that named a worker
  int64_t conversations_moved = 0;      // sessions served by more than one worker
  int64_t moves = 0;                    // consecutive turns of one session on different workers
  int64_t transitions = 0;              // consecutive turn pairs that both named a worker
  int64_t workers = 0;                  // distinct serving identities seen
  // Evidence for the causes (insights.cpp).
  int64_t conversations_moved_once = 0;
  int64_t moves_back = 0;              // a move onto a worker the session had already used
  int64_t moves_from_gone_worker = 0;  // moved-once sessions whose old worker served nothing after
  int64_t max_workers_per_conversation = 0;
  int64_t moves_after_timeout = 0;         // the idle gap before the move exceeded timeout_s
  int64_t min_gap_before_move_ns = -1;     // idle gap (previous end -> this send); -1: no move
  int64_t max_gap_before_stay_ns = -1;     // -1: no transition stayed
  std::vector<std::string> example_moved;  // correlation ids, at most kMaxExamples
  static constexpr size_t kMaxExamples = 3;

  double move_fraction() const {  // moves / transitions; 0 when none
    return transitions > 0 ? static_cast<double>(moves) / static_cast<double>(transitions) : 0;
  }
};

// Folds records in; memory is one small entry per session and per serving identity.
class AffinityTracker {
 public:
  explicit AffinityTracker(int64_t timeout_s = 0) : timeout_ns_(timeout_s * 1'000'000'000) {}
  void add(const proto::Record& r);
  AffinitySummary summary() const;
  size_t memory_bytes() const;

 private:
  static constexpr size_t kMaxWorkersKept = 8;  // per session, for moves_back
  struct Session {
    uint32_t last_worker = 0;
    uint32_t last_turn = 0;
    int64_t last_end_ns = 0;
    uint32_t moves = 0;
    uint32_t first_move_from = 0;
    int64_t first_move_sent_ns = 0;
    std::vector<uint32_t> workers;  // distinct, at most kMaxWorkersKept
    int64_t distinct_workers = 0;   // also past kMaxWorkersKept
  };
  uint32_t worker_index(const proto::Record& r);

  int64_t timeout_ns_;
  std::unordered_map<std::string, uint32_t> worker_ids_;
  std::vector<int64_t> worker_last_end_ns_;
  std::unordered_map<std::string, Session> sessions_;
  AffinitySummary counts_;  // the running counts (moves, transitions, gaps, examples)
};

}  // namespace convoy::controller
