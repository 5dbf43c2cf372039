// The wire messages between controller and workers: msgpack maps inside one envelope.
// Nothing else lives here. Times are nanoseconds on the sender's steady clock unless named
// otherwise; the controller maps worker clocks onto its own with the estimated offset.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "proto/msgpack_checked_enum.hpp"
#include "proto/timings.hpp"

namespace convoy::proto {

// 2: per-worker results token (Welcome, Results, Bye), Assign batch numbers, failed
// conversation ends and undecodable-assign notices.
// 3: WorkerSettings typed: endpoint, session routing mode and history are enums (integers on
// the wire, out-of-range values refused); target.* travels as one TargetSettings map and
// session_routing.* as one SessionRoutingSettings map.
// 4: sub-agent families (Conversation.subagents, Record.subagent), one URL per family
// (TargetSettings.urls, Conversation.url_index), header-era session settings (final_marker,
// verify) and the serving worker in each Record (served_by, dp_rank, close_request).
// 6: a session released early (Record.early_release, in no metric) and each family's session
// ledger in its ConversationEnd (sessions_opened, sessions_left_open). A version-5 controller
// would count early releases as measured requests, so the two do not mix.
// 7: several models (TargetSettings.models, Conversation.model) and other routers' session keys
// (SessionRoutingSettings.writes). A version-6 worker would ignore both and send every request
// to target.model without the keys.
// 8: a record's session control is a structured value (SessionControl), not the JSON text as
// sent, and a family's fan-in waits (Conversation.fan_in, JSONL wait_for). A version-7
// controller would fail to read the first; a version-7 worker would start a join before its
// parents had finished. WorkerSettings also gains load.mode users' gap (user_gap_ns) and the
// worker's share of load.prefill_concurrency, which a version-7 worker would ignore.
inline constexpr uint32_t kProtocolVersion = 8;
// Decoding refuses anything larger (also set as ZMQ_MAXMSGSIZE on every socket).
inline constexpr size_t kMaxMessageBytes = 64u << 20;
// Decoding refuses any one string (or bin) longer than this (the datasets validate against it).
inline constexpr size_t kMaxStringBytes = 16u << 20;

enum class MsgType : uint8_t {
  kHello = 1,  // worker -> controller: who I am
  kWelcome,    // controller -> worker: run settings, where to push results
  kReject,     // controller -> worker: refused (version mismatch, no slot: retry_s, ...)
  kPing,       // controller -> worker: clock offset probe
  kPong,       // worker -> controller
  kHeartbeat,  // both ways, every second
  kAssign,     // controller -> worker: conversations to run
  kStop,       // controller -> worker: stop starting; cancel in-flight when `cancel`
  kResults,    // worker -> controller (PUSH): records and conversation ends
  kBye,        // worker -> controller: leaving; everything it had is flushed
};

enum class Phase : uint8_t { kWarmup = 0, kMeasure = 1 };

// --- the run's settings, one type per concept ----------------------------------------------
// The YAML spellings are the names below (docs/config.md); the config maps its strings through the
// parse_* functions, the worker only ever sees the enums. Each parse_* is exact (case matters)
// and returns nullopt for anything else.

// target.endpoint
// responses: OpenAI's Responses API; messages: Anthropic's Messages API.
enum class Endpoint : uint8_t { kChat, kCompletions, kEmbeddings, kResponses, kMessages };
inline constexpr std::array<std::string_view, 5> kEndpointNames = {
    "chat", "completions", "embeddings", "responses", "messages"};
// target.responses_state (responses only): client = every turn resends the history; server =
// turn 2+ sends only its new input and previous_response_id (the server keeps the history).
enum class ResponsesState : uint8_t { kClient, kServer };
inline constexpr std::array<std::string_view, 2> kResponsesStateNames = {"client", "server"};
// session_routing.mode. kAuto is the config's only: the controller learns bind, legacy or
// header from the target before any traffic (controller/run/session_detect.hpp), so no worker
// ever receives it (its wire check stops at kHeader).
enum class SessionRoutingMode : uint8_t { kOff, kBind, kLegacy, kHeader, kAuto };
inline constexpr std::array<std::string_view, 5> kSessionRoutingModeNames = {
    "off", "bind", "legacy", "header", "auto"};
// dataset.history: live = the next turn carries the server's replies; recorded = the dataset's.
enum class HistoryMode : uint8_t { kLive, kRecorded };
inline constexpr std::array<std::string_view, 2> kHistoryModeNames = {"live", "recorded"};
// nvext.session_control.action. kBare is legacy's {"session_id": ID} without an action; its
// name is "".
enum class SessionAction : uint8_t { kBare, kBind, kOpen, kClose };
inline constexpr std::array<std::string_view, 4> kSessionActionNames = {"", "bind", "open",
                                                                        "close"};

// session_routing.final_marker (header mode): off; last_turn = X-Dynamo-Session-Final: true on
// the final turn; close_request = one extra one-token request carrying it after the final turn.
enum class FinalMarker : uint8_t { kOff, kLastTurn, kCloseRequest };
inline constexpr std::array<std::string_view, 3> kFinalMarkerNames = {"off", "last_turn",
                                                                      "close_request"};

// session_routing.mode's routers besides Dynamo's (several may be listed): each writes the
// session's key where that router reads it (controller/config/session_routing_writes.cpp).
enum class RouterPreset : uint8_t { kSglangGateway, kSglangSession, kVllmDpRank, kCustom };
inline constexpr std::array<std::string_view, 4> kRouterPresetNames = {
    "sglang_gateway", "sglang_session", "vllm_dp_rank", "custom"};
// session_routing.custom's SOURCE: the request's own session id, its parent's ("" for a lead:
// nothing is written), the family's root, the family's frontend (index into target.urls), or
// (vllm_dp_rank only) the family's data-parallel rank.
enum class RoutingSource : uint8_t { kSession, kParent, kRoot, kUrlIndex, kDpRank };
inline constexpr std::array<std::string_view, 5> kRoutingSourceNames = {"session", "parent", "root",
                                                                        "url_index", "dp_rank"};

// One place a request carries a routing key: an HTTP header, or a body path (dot-separated
// object keys, e.g. "session_id" or "metadata.session").
struct RoutingWrite {
  bool header = true;
  std::string name;  // header name, or body path
  RoutingSource source = RoutingSource::kSession;
  MSGPACK_DEFINE_MAP(header, name, source)
};

std::string_view to_string(Endpoint v);
std::string_view to_string(ResponsesState v);
std::optional<ResponsesState> parse_responses_state(std::string_view text);
std::string_view to_string(FinalMarker v);
std::optional<FinalMarker> parse_final_marker(std::string_view text);
std::string_view to_string(SessionRoutingMode v);
std::string_view to_string(HistoryMode v);
std::string_view to_string(SessionAction v);
std::optional<Endpoint> parse_endpoint(std::string_view text);
std::optional<SessionRoutingMode> parse_session_routing_mode(std::string_view text);
std::optional<HistoryMode> parse_history_mode(std::string_view text);
std::optional<SessionAction> parse_session_action(std::string_view text);

// One entry of target.models: a model (or LoRA adapter) id the server serves, and its share of
// the conversations.
struct ModelWeight {
  std::string name;   // the request body's "model"; unique in the list
  double weight = 1;  // > 0; relative to the list's sum
  MSGPACK_DEFINE_MAP(name, weight)
};

// target.*: the config's TargetConfig IS this struct (controller/config/config.hpp), so each
// default is written here and only here, and a new target.* key is a field here, its entry in
// the config's key table and its read; the worker receives it with no parsing of its own.
struct TargetSettings {
  // "mock" = start convoy-mock on a free loopback port; the controller sends workers the
  // resolved base url (e.g. http://127.0.0.1:8000).
  std::string url = "mock";
  Endpoint endpoint = Endpoint::kChat;
  std::string model = "mock-model";
  bool streaming = true;
  std::string api_key_env = "OPENAI_API_KEY";  // NAME only; each worker reads its environment
  std::map<std::string, std::string> headers;  // extra HTTP headers
  std::string extra_body_json = "{}";          // a JSON object, merged into every request body
  double request_timeout_s = 600;
  double connect_timeout_s = 10;
  bool use_server_token_counts = true;  // adds stream_options.include_usage
  bool max_completion_tokens = false;   // send max_completion_tokens instead of max_tokens
  bool http2 = false;
  bool insecure = false;  // TLS verification off (warns)
  // A reply body (or one SSE event, or a stream's reply text) larger than this fails the
  // request as response_too_large instead of growing the worker.
  int64_t max_response_bytes = 64 << 20;
  // target.urls: several frontends (exclusive with an explicit target.url). Empty: `url` only.
  // On the wire: every base url; each conversation family names its own by Conversation.url_index
  // (the controller picks it by rendezvous hash of the root's correlation id).
  std::vector<std::string> urls;
  // target.server_timing: ask for nvext.extra_fields ["timing"] and record the server's own
  // per-request timing (Record.server_timing). session_routing.verify asks for it too.
  bool server_timing = false;
  // target.path: the route under each base url ("/v1/responses" ...); empty = the endpoint's
  // default route. Starts with "/" when set.
  std::string path;
  ResponsesState responses_state = ResponsesState::kClient;  // meaningful for responses only
  // target.models: several models or adapters (exclusive with an explicit target.model, which
  // then holds models[0].name). Empty: `model` only. Each conversation draws one by weight
  // (controller/config/target_models.hpp) and names it in Conversation.model.
  std::vector<ModelWeight> models;
  MSGPACK_DEFINE_MAP(url, endpoint, model, streaming, api_key_env, headers, extra_body_json,
                     request_timeout_s, connect_timeout_s, use_server_token_counts,
                     max_completion_tokens, http2, insecure, max_response_bytes, urls,
                     server_timing, path, responses_state, models)
};

// session_routing.*: the config's SessionRoutingConfig and the worker's view are this struct.
struct SessionRoutingSettings {
  SessionRoutingMode mode = SessionRoutingMode::kOff;
  int64_t timeout_s = 300;  // nvext.session_control.timeout (whole seconds, > 0)
  std::string header_name = "X-Dynamo-Session-ID";  // header mode
  FinalMarker final_marker = FinalMarker::kOff;     // header mode
  // Ask for nvext.extra_fields ["worker_id"] and record the serving worker (Record.served_by).
  bool verify = false;
  // Other routers' modes listed in session_routing.mode, in order (beside `mode`, Dynamo's).
  std::vector<RouterPreset> presets;
  // session_routing.custom: header name -> source, body path -> source.
  std::map<std::string, RoutingSource> custom_headers;
  std::map<std::string, RoutingSource> custom_body;
  // vllm_dp_rank: the server's data-parallel ranks; a family's rank is a hash of its root id
  // modulo this (>= 1 with vllm_dp_rank, else 0).
  int64_t dp_ranks = 0;
  // What every request writes for `presets` and the custom maps, checked disjoint by the config
  // (the worker applies these only).
  std::vector<RoutingWrite> writes;
  MSGPACK_DEFINE_MAP(mode, timeout_s, header_name, final_marker, verify, presets, custom_headers,
                     custom_body, dp_ranks, writes)
};

// Worker-side settings sent in Welcome: target.* as is (inherited, so `settings.url` reads as
// before), session_routing.* as is, and the few other keys a worker needs. The controller fills
// every field from the Config (controller/run/run.cpp); the defaults below only serve tests.
struct WorkerSettings : TargetSettings {
  SessionRoutingSettings session_routing;
  double cancel_fraction = 0;                // load.cancel.fraction
  double cancel_after_ms = 0;                // load.cancel.after_ms
  HistoryMode history = HistoryMode::kLive;  // dataset.history
  uint64_t seed = 0;                         // seed
  // dataset.tokenizer when it is a path: the worker counts output tokens from the streamed text
  // with it when the server sends no usage ("" or "server": one per content event). The path
  // must exist on the worker's host.
  std::string tokenizer;
  // load.mode users: a measured window conversation this worker starts in the slot an end
  // freed starts this long after that end (the user's gap, ns); 0: at once.
  int64_t user_gap_ns = 0;
  // load.prefill_concurrency: this worker's share; at most this many of its requests between
  // their send and their first token (or their end) at once. 0: no cap.
  int64_t prefill_concurrency = 0;
  MSGPACK_DEFINE_MAP(MSGPACK_BASE_MAP(TargetSettings), session_routing, cancel_fraction,
                     cancel_after_ms, history, seed, tokenizer, user_gap_ns, prefill_concurrency)
};

struct Hello {
  uint32_t protocol_version = kProtocolVersion;
  std::string worker_id;
  std::string host;
  int64_t pid = 0;
  MSGPACK_DEFINE_MAP(protocol_version, worker_id, host, pid)
};

struct Welcome {
  std::string run_id;
  std::string results_endpoint;  // the worker connects a PUSH socket here
  WorkerSettings settings;
  // A random secret for this worker's registration, sent only on its control connection. The
  // results socket is a PULL anyone who reaches it can push to: the controller accepts Results
  // and Bye only when they carry the token of the worker they name.
  std::string token;
  MSGPACK_DEFINE_MAP(run_id, results_endpoint, settings, token)
};

struct Reject {
  std::string reason;
  // > 0: no slot is free now (workers.expect); the worker says hello again for this many
  // seconds (workers.ready_timeout_s) before it gives up. 0: refused for good, it exits.
  double retry_s = 0;
  MSGPACK_DEFINE_MAP(reason, retry_s)
};

struct Ping {
  uint64_t seq = 0;
  int64_t controller_send_ns = 0;
  MSGPACK_DEFINE_MAP(seq, controller_send_ns)
};

struct Pong {
  uint64_t seq = 0;
  int64_t controller_send_ns = 0;  // echoed
  int64_t worker_recv_ns = 0;
  int64_t worker_send_ns = 0;
  MSGPACK_DEFINE_MAP(seq, controller_send_ns, worker_recv_ns, worker_send_ns)
};

struct Heartbeat {
  int64_t sent_ns = 0;
  int64_t in_flight_requests = 0;
  int64_t active_conversations = 0;
  int64_t legacy_open_sessions = 0;  // size of the legacy open-tracking set
  double cpu_percent = 0;            // this process, since the previous heartbeat
  int64_t rss_bytes = 0;
  MSGPACK_DEFINE_MAP(sent_ns, in_flight_requests, active_conversations, legacy_open_sessions,
                     cpu_percent, rss_bytes)
};

// One turn of a conversation as the dataset defines it. The worker formats the request body.
struct Turn {
  std::string user_text;         // the new user message (chat) or prompt text (completions)
  std::string messages_json;     // optional: a JSON array of messages replacing user_text
  int64_t max_tokens = 0;        // 0 = do not send
  int64_t input_tokens_est = 0;  // the dataset's estimate of user_text's tokens
  double delay_ms = 0;           // think time before this turn (after the previous ends)
  std::string extra_json;        // optional JSON object merged into this turn's body
  std::string recorded_reply;    // history: recorded
  MSGPACK_DEFINE_MAP(user_text, messages_json, max_tokens, input_tokens_est, delay_ms, extra_json,
                     recorded_reply)
};

// A sub-agent conversation of a family (dataset.subagents): it starts when its parent's turn
// `spawn_after_turn` (1-based: after that many of the parent's turns ended) ends, and the
// parent's next turn waits until every child spawned there has finished. Families run on one
// worker; each sub-agent has its own correlation id and session lifecycle.
struct SubAgent {
  std::string conversation_id;    // dataset id
  std::string correlation_id;     // its own X-Correlation-ID / session id, never the parent's
  int32_t parent = -1;            // position of the parent in Conversation.subagents; -1 = lead
  uint32_t spawn_after_turn = 1;  // 1 .. the parent's turn count; 0: started by fan_in alone
  std::string system_prompt;
  std::vector<Turn> turns;
  MSGPACK_DEFINE_MAP(conversation_id, correlation_id, parent, spawn_after_turn, system_prompt,
                     turns)
};

// A fan-in edge of a family (a JSONL row's or turn's wait_for): member `member`'s turn `turn`
// (0-based; 0 = the member's start) starts only after member `after` has finished (its turns and
// every sub-agent it spawned), however it ended. Members: -1 = the lead, i = subagents[i].
struct FanIn {
  int32_t member = -1;
  uint32_t turn = 0;
  int32_t after = -1;
  MSGPACK_DEFINE_MAP(member, turn, after)
};

// Conversation.priority / Record.priority when dataset.agent_hints gives none.
inline constexpr int64_t kNoPriority = INT64_MIN;

struct Conversation {
  uint64_t index = 0;           // position in the dataset (seeded draws derive from it)
  std::string conversation_id;  // dataset id
  std::string correlation_id;   // X-Correlation-ID; Dynamo's session id
  Phase phase = Phase::kMeasure;
  int64_t start_ns = 0;     // intended start of turn 0, on the RECEIVING worker's steady
                            // clock (the controller applies the clock offset)
  uint32_t first_turn = 0;  // start mid-conversation (trace replay)
  std::string system_prompt;
  std::vector<Turn> turns;
  // The lead's sub-agents, every generation flat: a parent comes before its children. The
  // family is one conversation to the controller (one slot, one ConversationEnd, sent when the
  // lead and every sub-agent have ended).
  std::vector<SubAgent> subagents;
  uint32_t url_index = 0;  // into WorkerSettings.urls (when not empty)
  // dataset.tenants / dataset.agent_hints: the family's tenant ("" = none) and agent_hints
  // priority (kNoPriority = none), copied into each of its records for per-class reporting
  // (the request bodies already carry them in each turn's extra_json).
  std::string tenant;
  int64_t priority = kNoPriority;
  // The model every request of the family names (its sub-agents' too); "" = target.model.
  std::string model;
  // The family's fan-in edges (empty without wait_for). A sub-agent with spawn_after_turn 0 is
  // spawned by no turn: it starts when its turn-0 edges are met, and `parent` only names the
  // session its X-Dynamo-Parent-Session-ID carries (the first conversation it waits for).
  std::vector<FanIn> fan_in;
  MSGPACK_DEFINE_MAP(index, conversation_id, correlation_id, phase, start_ns, first_turn,
                     system_prompt, turns, subagents, url_index, tenant, priority, model, fan_in)
};

// A window conversation to start now, at `start_ns` (the receiving worker's steady clock: when
// the controller's slot freed).
struct WindowStart {
  uint64_t conversation_index = 0;
  int64_t start_ns = 0;
  MSGPACK_DEFINE_MAP(conversation_index, start_ns)
};

struct Assign {
  // Numbers this worker's batches from 1. Packed first, so a worker that cannot decode the
  // conversations can still say which batch it lost (see UndecodableAssign).
  uint64_t batch = 0;
  std::vector<Conversation> conversations;
  // Concurrency-mode refill (so a freed slot starts the next conversation without a round trip
  // to the controller): `window` conversations are held by the worker, not
  // started; each starts in a concurrency slot this worker frees (ConversationEnd::refilled_by)
  // or when named in a later Assign's `start` (a slot the controller got back).
  bool window = false;
  std::vector<WindowStart> start;
  MSGPACK_DEFINE_MAP(batch, conversations, window, start)
};

struct Stop {
  bool cancel = false;  // cancel in-flight transfers now (else: finish them, start nothing new)
  MSGPACK_DEFINE_MAP(cancel)
};

struct Bye {
  std::string worker_id;
  std::string token;  // from Welcome
  std::string reason;
  int64_t legacy_open_sessions = 0;  // the legacy open-tracking set's size at exit (0 expected)
  MSGPACK_DEFINE_MAP(worker_id, token, reason, legacy_open_sessions)
};

// Error kinds, each counted; none crashes the worker.
enum class ErrorKind : uint8_t {
  kNone = 0,
  kDns,
  kConnect,
  kTls,
  kSend,
  kHttpStatus,
  kTimeoutBeforeFirstByte,
  kTimeoutMidStream,
  kStreamDisconnected,
  kMalformedEvent,
  kServerErrorEvent,
  kCancelled,
  kOther,
  kResponseTooLarge,  // a reply over target.max_response_bytes, or a header over libcurl's limit
};
std::string_view to_string(ErrorKind kind);

struct RecordError {
  ErrorKind kind = ErrorKind::kNone;
  int64_t code = 0;     // HTTP status or server error code
  std::string type;     // server error type, when given
  std::string message;  // server message or curl's
  MSGPACK_DEFINE_MAP(kind, code, type, message)
};

// The server's own timing of one request, as Dynamo's frontend reports it in nvext.timing when
// the request asks for nvext.extra_fields ["timing"] (target.server_timing, or
// session_routing.verify). Milliseconds from the frontend receiving the request; < 0: not
// reported. Measured on Dynamo 1.6.1: {request_received_ms, prefill_wait_time_ms,
// prefill_time_ms, ttft_ms, total_time_ms, kv_hit_rate, router_queue_depth}; newer frontends
// add avg_itl_ms (ai-dynamo/dynamo lib/llm/src/protocols/common/timing.rs, RequestTracker).
struct ServerTiming {
  double queue_ms = -1;    // prefill_wait_time_ms: received -> prefill started
  double prefill_ms = -1;  // prefill_time_ms: prefill started -> first token
  double ttft_ms = -1;     // ttft_ms: received -> first token
  double total_ms = -1;    // total_time_ms: received -> the last token
  double avg_itl_ms = -1;  // avg_itl_ms, when the server reports it
  bool present() const { return ttft_ms >= 0 || total_ms >= 0; }
  MSGPACK_DEFINE_MAP(queue_ms, prefill_ms, ttft_ms, total_ms, avg_itl_ms)
};

// One nvext.session_control object as a request carried it (session routing bind or legacy):
// what the worker sends, and what its Record reports. A worker builds it; records.jsonl writes it
// back as the object, keys in this order.
struct SessionControl {
  std::string session_id;                       // "" = the request carried no session_control
  SessionAction action = SessionAction::kBare;  // kBare: legacy's {"session_id": ID}, no action
  int64_t timeout_s = 0;  // "timeout" in whole seconds (bind and open only); 0 = not sent
  // Keys convoy does not own that the body already had under nvext.session_control
  // (target.extra_body), as sent: (key, its value's JSON text). Empty in the usual case.
  std::vector<std::pair<std::string, std::string>> other_keys;
  bool present() const { return !session_id.empty(); }
  MSGPACK_DEFINE_MAP(session_id, action, timeout_s, other_keys)
};

// One request. Times (intended_ns and the Timings) are the worker's steady clock in ns; 0 = did
// not happen.
struct Record : Timings {
  std::string x_request_id;
  std::string x_correlation_id;
  std::string conversation_id;
  uint64_t conversation_index = 0;
  uint32_t turn_index = 0;
  bool final_turn = false;
  Phase phase = Phase::kMeasure;
  int64_t intended_ns = 0;  // when the schedule meant it to be sent
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_tokens = -1;  // -1: the server did not report it
  bool usage_from_server = false;
  int64_t http_status = 0;
  RecordError error;
  SessionControl session_control;  // as sent (present() false when the request had none)
  int32_t subagent = -1;   // position in Conversation.subagents; -1 = the lead (or no family)
  uint32_t url_index = 0;  // which of target.urls served it
  // session_routing.verify: the serving worker and DP rank the server reported ("" / -1: none).
  std::string served_by;
  int64_t dp_rank = -1;
  // final_marker close_request's extra request: counted apart, in no metric.
  bool close_request = false;
  // The release of a session whose conversation ended early (cancelled, failed, cut by the
  // run's end): bind/legacy close, or header mode's close request. Counted apart, in no metric.
  bool early_release = false;
  // Reasoning models (delta.reasoning_content / delta.reasoning): reasoning tokens in the reply
  // (usage.completion_tokens_details.reasoning_tokens when the server reports it, else one per
  // reasoning chunk); Timings.first_output_token_ns is the first chunk with non-reasoning
  // content, and first_token_ns stays the first token of any kind.
  int64_t reasoning_tokens = 0;
  ServerTiming server_timing;      // the server's nvext.timing (target.server_timing)
  std::string tenant;              // the conversation's (dataset.tenants); "" = none
  int64_t priority = kNoPriority;  // its agent_hints priority (dataset.agent_hints)
  MSGPACK_DEFINE_MAP(x_request_id, x_correlation_id, conversation_id, conversation_index,
                     turn_index, final_turn, phase, intended_ns, sent_ns, first_byte_ns,
                     first_token_ns, second_token_ns, last_token_ns, end_ns, chunk_gaps_ns,
                     input_tokens, output_tokens, cached_tokens, usage_from_server, http_status,
                     error, session_control, subagent, url_index, served_by, dp_rank, close_request,
                     reasoning_tokens, first_output_token_ns, early_release, server_timing, tenant,
                     priority)
};

// A record's timestamps: when it was intended, then its Timings, in records.jsonl's order.
inline constexpr auto kRecordTimestamps = [] {
  std::array<TimestampField<Record>, kTimingsTimestamps<Record>.size() + 1> all{};
  all[0] = {"intended_ns", &Record::intended_ns};
  for (size_t i = 0; i < kTimingsTimestamps<Record>.size(); ++i) {
    all[i + 1] = kTimingsTimestamps<Record>[i];
  }
  return all;
}();

// A request that only ends a session (a close request or an early release): in no metric.
inline bool session_release_only(const Record& r) { return r.close_request || r.early_release; }

enum class EndReason : uint8_t { kCompleted = 0, kAborted, kCancelled };

// A conversation left the worker: the controller's concurrency accounting uses this.
struct ConversationEnd {
  uint64_t conversation_index = 0;
  EndReason reason = EndReason::kCompleted;
  // The window conversation the worker started in the slot this end freed (-1: none; the slot
  // goes back to the controller).
  int64_t refilled_by = -1;
  // The family's server-side sessions (bind, legacy, header with final_marker close_request; 0
  // otherwise): how many may have been opened at the server (a bind or open that reached it),
  // and how many of those no close or release was answered 2xx for (left until the timeout).
  uint32_t sessions_opened = 0;
  uint32_t sessions_left_open = 0;
  MSGPACK_DEFINE_MAP(conversation_index, reason, refilled_by, sessions_opened, sessions_left_open)
};

// A conversation the worker could not run at all: its part of an Assign did not decode. It
// ends here, never sent; the controller counts it in run.failed_conversations.
struct FailedConversation {
  uint64_t conversation_index = 0;
  std::string error;
  MSGPACK_DEFINE_MAP(conversation_index, error)
};

// Parts of an Assign the worker could not read even the conversation index of: the controller
// fails the conversations it sent at these positions of that batch.
struct UndecodableAssign {
  uint64_t batch = 0;
  std::vector<uint32_t> positions;  // 0-based positions in Assign::conversations
  int64_t unreadable_from = -1;     // and every position from here on (-1: none; 0: all)
  std::string error;
  MSGPACK_DEFINE_MAP(batch, positions, unreadable_from, error)
};

struct Results {
  std::string worker_id;
  std::string token;  // from Welcome
  std::vector<Record> records;
  std::vector<ConversationEnd> ended;
  std::vector<FailedConversation> failed;
  std::vector<UndecodableAssign> undecodable;
  // Window conversations given back unstarted (the worker stopped starting): not run here.
  std::vector<uint64_t> returned;
  MSGPACK_DEFINE_MAP(worker_id, token, records, ended, failed, undecodable, returned)
};

}  // namespace convoy::proto

MSGPACK_ADD_ENUM(convoy::proto::MsgType);
MSGPACK_ADD_ENUM(convoy::proto::Phase);
MSGPACK_ADD_ENUM(convoy::proto::ErrorKind);
MSGPACK_ADD_ENUM(convoy::proto::EndReason);

// The settings enums are range-checked on decode (proto/msgpack_checked_enum.hpp).

CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::Endpoint, convoy::proto::Endpoint::kMessages)
CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::ResponsesState, convoy::proto::ResponsesState::kServer)
CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::SessionRoutingMode,
                            convoy::proto::SessionRoutingMode::kHeader)
CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::HistoryMode, convoy::proto::HistoryMode::kRecorded)
CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::SessionAction, convoy::proto::SessionAction::kClose)
CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::FinalMarker, convoy::proto::FinalMarker::kCloseRequest)
CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::RouterPreset, convoy::proto::RouterPreset::kCustom)
CONVOY_MSGPACK_CHECKED_ENUM(convoy::proto::RoutingSource, convoy::proto::RoutingSource::kDpRank)

// Records with their RecordError, SessionControl and ConversationEnds (the controller's ingest),
// and Conversations with their Turns and SubAgents and WindowStarts (every assignment) are decoded
// with one pass over their map (proto/map_codecs.cpp) instead of msgpack's generic map conversion,
// which builds a std::map of every key per object. The wire format is unchanged: still the map
// MSGPACK_DEFINE_MAP writes; unknown keys are skipped and missing keys keep their defaults, as with
// the generic path.
namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {
  template <>
  struct convert<convoy::proto::Record> {
    msgpack::object const& operator()(msgpack::object const& o, convoy::proto::Record& v) const;
  };
  template <>
  struct convert<convoy::proto::SessionControl> {
    msgpack::object const& operator()(msgpack::object const& o,
                                      convoy::proto::SessionControl& v) const;
  };
  template <>
  struct convert<convoy::proto::RecordError> {
    msgpack::object const& operator()(msgpack::object const& o,
                                      convoy::proto::RecordError& v) const;
  };
  template <>
  struct convert<convoy::proto::ConversationEnd> {
    msgpack::object const& operator()(msgpack::object const& o,
                                      convoy::proto::ConversationEnd& v) const;
  };
  template <>
  struct convert<convoy::proto::WindowStart> {
    msgpack::object const& operator()(msgpack::object const& o,
                                      convoy::proto::WindowStart& v) const;
  };
  template <>
  struct convert<convoy::proto::Turn> {
    msgpack::object const& operator()(msgpack::object const& o, convoy::proto::Turn& v) const;
  };
  template <>
  struct convert<convoy::proto::Conversation> {
    msgpack::object const& operator()(msgpack::object const& o,
                                      convoy::proto::Conversation& v) const;
  };
  template <>
  struct convert<convoy::proto::SubAgent> {
    msgpack::object const& operator()(msgpack::object const& o, convoy::proto::SubAgent& v) const;
  };
  }  // namespace adaptor
}  // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
}  // namespace msgpack
