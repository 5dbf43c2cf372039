// records.jsonl's key names, defined once: the writer (records_writer.cpp) writes them and
// `convoy compare` (compare/run_loader.cpp) reads them back for its per-turn TTFT and the
// samples behind its percentiles, so that a key renamed on one side cannot silently leave the
// other reading nothing (tests/controller/compare's write-then-load test checks both together).
// The line's key order is records_writer.hpp's.
#pragma once

namespace convoy::controller::record_key {

inline constexpr char kXRequestId[] = "x_request_id";
inline constexpr char kXCorrelationId[] = "x_correlation_id";
inline constexpr char kConversationId[] = "conversation_id";
inline constexpr char kConversationIndex[] = "conversation_index";
inline constexpr char kTurnIndex[] = "turn_index";
inline constexpr char kFinalTurn[] = "final_turn";
inline constexpr char kWorkerId[] = "worker_id";
inline constexpr char kHost[] = "host";
inline constexpr char kPhase[] = "phase";  // "warmup" | "measure"
inline constexpr char kPhaseMeasure[] = "measure";
inline constexpr char kPhaseWarmup[] = "warmup";
inline constexpr char kSettle[] = "settle";  // the stage whose settle window it was intended in
inline constexpr char kStage[] = "stage";
inline constexpr char kMetrics[] = "metrics";
inline constexpr char kHttpStatus[] = "http_status";
inline constexpr char kError[] = "error";  // null when the request succeeded
inline constexpr char kSessionControl[] = "session_control";
inline constexpr char kServerTiming[] = "server_timing";
inline constexpr char kSubagent[] = "subagent";
inline constexpr char kUrlIndex[] = "url_index";
inline constexpr char kModel[] = "model";
inline constexpr char kServedBy[] = "served_by";
inline constexpr char kDpRank[] = "dp_rank";
inline constexpr char kTenant[] = "tenant";
inline constexpr char kPriority[] = "priority";
inline constexpr char kCloseRequest[] = "close_request";  // in no metric
inline constexpr char kEarlyRelease[] = "early_release";  // in no metric

// ---- metrics {...}, in ms (null where not measured) -----------------------------------------
inline constexpr char kTtftMs[] = "ttft_ms";
inline constexpr char kTtstMs[] = "ttst_ms";
inline constexpr char kRequestLatencyMs[] = "request_latency_ms";
inline constexpr char kItlMs[] = "itl_ms";
inline constexpr char kScheduleLagMs[] = "schedule_lag_ms";
inline constexpr char kCorrectedRequestLatencyMs[] = "corrected_request_latency_ms";
inline constexpr char kIsl[] = "isl";
inline constexpr char kOsl[] = "osl";
inline constexpr char kReasoningTokens[] = "reasoning_tokens";
inline constexpr char kCachedTokens[] = "cached_tokens";

}  // namespace convoy::controller::record_key
