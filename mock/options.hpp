// convoy-mock's knobs: one struct shared by the CLI, the server and the tests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::mock {

// Which generation of Dynamo's session-routing contract the frontend speaks.
enum class Contract { kNone, kLegacy, kBind, kHeader };
enum class RouterMode { kKv, kRoundRobin, kRandom };
// Header contract: how a binding enters routing (Dynamo's --router-session-affinity-mode).
enum class AffinityMode { kHard, kSoft };
// How requests are spread over --frontends: `request` = each request to the next frontend (an
// ingress without session hashing), `session` = by a hash of the session id (ingress hashing on
// X-Dynamo-Session-ID, as Dynamo's docs prescribe for several frontends).
enum class IngressHash { kRequest, kSession };

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;              // 0 = ephemeral; Server::start() returns the bound port
  int threads = 1;                   // threads running the one io_context
  std::string model = "mock-model";  // the first --model: metrics and /health name it
  // --model given again: more model (or LoRA adapter) ids served beside `model`, in order.
  std::vector<std::string> more_models;
  // --model NAME:ITL_MS: that model's decode step per output token instead of itl_ms (real ms
  // before speedup), so a run over several models can tell them apart by speed.
  std::map<std::string, double, std::less<>> itl_ms_by_model;

  // Simulated engine.
  int workers = 4;
  int block_size = 64;  // tokens per KV block
  int64_t kv_blocks_per_worker = 16384;
  int max_num_seqs = 256;  // concurrent sequences per worker; the rest wait FIFO
  // Workers are reported (nvext.worker_id) as instance 1000 + w / dp, DP rank w % dp.
  int data_parallel_size = 1;
  double itl_ms = 5;            // decode step per output token
  double speedup = 1;           // divides prefill, decode and session TTLs
  int default_max_tokens = 16;  // when a request names no max_tokens
  // A reasoning model: the first N output tokens of a chat reply are reasoning, streamed as
  // delta.reasoning_content (message.reasoning_content when not streamed) before the content, and
  // counted in usage.completion_tokens_details.reasoning_tokens. 0 = off.
  int64_t reasoning_tokens = 0;
  RouterMode router_mode = RouterMode::kKv;

  // Session routing.
  Contract contract = Contract::kBind;
  bool engine_sessions = false;          // legacy `open` pins only when the engine has sessions
  std::optional<double> affinity_ttl_s;  // header contract: idle TTL of X-Dynamo-Session-ID pins
  AffinityMode affinity_mode = AffinityMode::kHard;
  // Dynamo's MAX_SESSION_AFFINITY_ENTRIES (65,536, fixed there); settable here so tests can fill
  // the table quickly.
  int64_t affinity_max_entries = 65'536;
  int frontends = 1;  // separate binding tables behind the one port
  IngressHash ingress_hash = IngressHash::kRequest;
  double default_session_timeout_s = 300;  // when session_control carries no timeout
  double reaper_period_ms = 1000;          // real time (not divided by speedup)
  int64_t stats_sessions = 65'536;         // sessions /mock/stats keeps by id (LRU beyond)

  // Faults, drawn per request from one generator seeded with `seed`.
  uint64_t seed = 0;
  double error_rate = 0;      // 500 before any work
  double reset_rate = 0;      // TCP reset mid-stream
  double malformed_rate = 0;  // one invalid JSON event mid-stream
  double stall_ms = 0;        // real-time pause mid-stream (0 = off)
  double stall_rate = 1;      // fraction of streams that stall when stall_ms > 0

  std::string log_requests_path;  // empty = off; one JSON line per request
  bool tokenize = true;           // serve POST /tokenize (false: 404, as Dynamo 1.6.1)
};

// The result of parsing argv: options, or a message and the exit code to leave with
// (0 for --help/--version, 2 for bad flags).
struct ParsedOptions {
  std::optional<Options> options;
  int exit_code = 0;
  std::string message;
};

ParsedOptions parse_options(int argc, const char* const* argv);
// Every model id served: `model`, then more_models.
std::vector<std::string> served_models(const Options& o);
bool serves_model(const Options& o, std::string_view name);
// The decode step of `name`'s requests: its own ITL_MS, else itl_ms.
double itl_ms_for(const Options& o, std::string_view name);
ParsedOptions parse_options(const std::vector<std::string>& args);  // args exclude argv[0]

const char* to_string(Contract contract);
const char* to_string(RouterMode mode);
const char* to_string(AffinityMode mode);
const char* to_string(IngressHash hash);

// The worker identity the mock reports for worker `w` (0-based, as /mock/stats numbers them):
// Dynamo's instance ids are non-zero u64 lease ids; the mock uses 1000 + w / dp.
inline constexpr uint64_t kInstanceIdBase = 1000;
inline uint64_t instance_id(const Options& o, int worker) {
  return kInstanceIdBase + static_cast<uint64_t>(worker / o.data_parallel_size);
}
inline int dp_rank(const Options& o, int worker) { return worker % o.data_parallel_size; }

}  // namespace convoy::mock
