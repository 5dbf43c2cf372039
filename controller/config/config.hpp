// The run configuration: DESIGN.md §2. Keys are the contract; defaults live here and only here,
// except those of the sections workers receive as they are (target.*, session_routing.*: their
// structs are the wire types in proto/messages.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/messages.hpp"

namespace convoy {

// A distribution for per-conversation or per-turn draws (normal, clamped to [min, max]).
struct Distribution {
  double mean = 0;
  double stddev = 0;
  std::optional<double> min;  // clamp; defaults depend on the key (>= 0 always)
  std::optional<double> max;
};

// The enums and sections a worker also needs are the wire types (proto/messages.hpp): defined
// once, their defaults written once.
using proto::Endpoint;
using proto::HistoryMode;
using proto::SessionRoutingMode;
enum class DatasetType { kSynthetic, kJsonl, kMooncake };
enum class LoadMode { kConcurrency, kRate, kTrace };
enum class Arrival { kConstant, kPoisson, kGamma };

// target.*: every key is a worker setting, so the section is proto::TargetSettings itself.
using TargetConfig = proto::TargetSettings;

// Passed to convoy-mock as flags; see mock/ for their meaning.
struct MockConfig {
  int workers = 4;
  std::string contract = "bind";  // none | legacy | bind | header
  std::string router_mode = "kv";
  double itl_ms = 5;
  double speedup = 1;
  bool engine_sessions = false;
  std::vector<std::string> extra_args;  // passed verbatim to convoy-mock
};

struct DatasetConfig {
  DatasetType type = DatasetType::kSynthetic;
  std::optional<std::string> path;  // jsonl / mooncake
  int64_t conversations = 100;      // synthetic: how many; jsonl/mooncake: the first N when set
  bool conversations_set = false;   // given in the file or by --set (file datasets then cut)
  Distribution turns{4, 1, 1, 32};
  Distribution input_tokens{256, 32, 1, std::nullopt};
  Distribution output_tokens{64, 8, 1, std::nullopt};
  int64_t shared_prefix_tokens = 0;
  Distribution think_time_ms{0, 0, 0, std::nullopt};
  HistoryMode history = HistoryMode::kLive;
};

struct CancelConfig {
  double fraction = 0.0;  // [0, 1]
  double after_ms = 0;
};

struct LoadConfig {
  LoadMode mode = LoadMode::kConcurrency;
  int64_t concurrency = 16;  // max conversations in flight (mode concurrency; cap in mode rate)
  double rate = 10;          // new conversations per second (mode rate)
  Arrival arrival = Arrival::kPoisson;
  double burstiness = 1.0;  // gamma shape
  std::optional<int64_t> sessions;
  std::optional<int64_t> requests;
  std::optional<double> duration_s;
  double grace_s = 30;
  int64_t warmup_sessions = 0;
  CancelConfig cancel;
};

// session_routing.*
using SessionRoutingConfig = proto::SessionRoutingSettings;

// workers.local's upper bound. One worker process drives thousands of concurrent streams
// (docs/benchmarks.md), so more processes than a large host has cores only costs memory,
// descriptors and registration time; a typo like 20000 would fork-bomb the host.
inline constexpr int kMaxLocalWorkers = 256;

struct WorkersConfig {
  int local = 2;
  std::string listen = "tcp://127.0.0.1:0";
  // Where workers push results; default: listen's host on a free port (ipc: listen + ".results").
  // A fixed port is what a firewall or a Kubernetes Service needs.
  std::optional<std::string> results_listen;
  std::optional<int> expect;  // default: local
  std::optional<std::string> curve_keys;
  double ready_timeout_s = 30;
};

struct OutputConfig {
  std::string dir = "artifacts/{name}-{timestamp}";
  bool records = true;
  bool html = true;
};

struct FailOnConfig {
  std::optional<double> error_rate;  // fraction in [0, 1]
};

struct Config {
  std::string name = "convoy";
  uint64_t seed = 42;
  TargetConfig target;
  MockConfig mock;
  DatasetConfig dataset;
  LoadConfig load;
  SessionRoutingConfig session_routing;
  WorkersConfig workers;
  OutputConfig output;
  std::map<std::string, double> slo;  // metric tag -> threshold in ms
  FailOnConfig fail_on;

  std::string source_path;  // the file it came from ("" for defaults)

  int expected_workers() const { return workers.expect.value_or(workers.local); }
};

// Bad input: the message names the file, line and key. Callers exit with code 2.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads and validates a YAML file; `overrides` are "key.path=value" strings (--set), applied
// before validation. Throws ConfigError.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// Same, from text (tests); `path` is used in messages only.
Config parse_config(const std::string& yaml_text, const std::string& path,
                    const std::vector<std::string>& overrides = {});

// The resolved configuration as YAML (every key, defaults filled in). The API key never appears.
std::string to_yaml(const Config& config);

// Endpoint, HistoryMode and SessionRoutingMode: proto::to_string / proto::parse_*.
using proto::to_string;
const char* to_string(DatasetType v);
const char* to_string(LoadMode v);
const char* to_string(Arrival v);

}  // namespace convoy
