#include "mock/options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "common/build_info.hpp"

namespace convoy::mock {

const char* to_string(Contract contract) {
  switch (contract) {
    case Contract::kNone:
      return "none";
    case Contract::kLegacy:
      return "legacy";
    case Contract::kBind:
      return "bind";
    case Contract::kHeader:
      return "header";
  }
  return "?";
}

const char* to_string(RouterMode mode) {
  switch (mode) {
    case RouterMode::kKv:
      return "kv";
    case RouterMode::kRoundRobin:
      return "round-robin";
    case RouterMode::kRandom:
      return "random";
  }
  return "?";
}

const char* to_string(AffinityMode mode) { return mode == AffinityMode::kSoft ? "soft" : "hard"; }

const char* to_string(IngressHash hash) {
  return hash == IngressHash::kSession ? "session" : "request";
}

namespace {

// Flags read as text and mapped after parsing (clearer messages than CLI11's transformers).
struct Names {
  int port = 8000;
  std::string contract = "bind";
  std::string router = "kv";
  std::string engine_sessions = "false";
  std::string affinity_mode = "hard";
  std::string ingress_hash = "request";
  bool no_tokenize = false;
  std::vector<std::string> models{"mock-model"};
};

// --model NAME[:ITL_MS]: the text after the last ':' is the model's decode step when it is a
// number >= 0 (so "llama3:8b" stays one name). Repeated: more models; a name given again keeps
// its first place and takes the later ITL_MS (mock.extra_args can set the speed of a model the
// launcher named).
std::optional<std::string> read_models(const std::vector<std::string>& specs, Options& opt) {
  std::vector<std::string> names;
  for (const auto& spec : specs) {
    std::string name = spec;
    const auto colon = spec.rfind(':');
    if (colon != std::string::npos && colon + 1 < spec.size()) {
      const std::string tail = spec.substr(colon + 1);
      char* end = nullptr;
      const double ms = std::strtod(tail.c_str(), &end);
      if (end == tail.c_str() + tail.size() && std::isfinite(ms) && ms >= 0) {
        name = spec.substr(0, colon);
        opt.itl_ms_by_model[name] = ms;
      }
    }
    if (name.empty()) return "--model: empty model name in '" + spec + "'";
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  opt.model = names.front();
  opt.more_models.assign(names.begin() + 1, names.end());
  return std::nullopt;
}

ParsedOptions parse(CLI::App& app, Options& opt, const Names& names,
                    const std::function<void()>& run_parse) {
  ParsedOptions result;
  try {
    run_parse();
  } catch (const CLI::CallForHelp&) {
    result.message = app.help();
    return result;
  } catch (const CLI::CallForVersion& e) {
    result.message = e.what();
    return result;
  } catch (const CLI::ParseError& e) {
    result.exit_code = 2;
    result.message = std::string("convoy-mock: ") + e.what() + "\nRun with --help for usage.";
    return result;
  }
  if (auto error = read_models(names.models, opt)) {
    result.exit_code = 2;
    result.message = "convoy-mock: " + *error + "\nRun with --help for usage.";
    return result;
  }
  opt.port = static_cast<uint16_t>(names.port);
  opt.engine_sessions = names.engine_sessions == "true";
  opt.tokenize = !names.no_tokenize;
  opt.contract = names.contract == "none"     ? Contract::kNone
                 : names.contract == "legacy" ? Contract::kLegacy
                 : names.contract == "header" ? Contract::kHeader
                                              : Contract::kBind;
  opt.router_mode = names.router == "round-robin" ? RouterMode::kRoundRobin
                    : names.router == "random"    ? RouterMode::kRandom
                                                  : RouterMode::kKv;
  opt.affinity_mode = names.affinity_mode == "soft" ? AffinityMode::kSoft : AffinityMode::kHard;
  opt.ingress_hash =
      names.ingress_hash == "session" ? IngressHash::kSession : IngressHash::kRequest;
  if (opt.stall_ms > 0 && opt.stall_rate <= 0) opt.stall_ms = 0;
  result.options = opt;
  return result;
}

// The flags in three groups: the server and its simulated engine, routing and the session
// contracts, and the faults it can inject.
void define_engine(CLI::App& app, Options& opt, Names& names) {
  app.add_option("--host", opt.host, "Address to listen on")->capture_default_str();
  app.add_option("--port", names.port, "Port to listen on (0 = ephemeral)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--threads", opt.threads, "Threads running the event loop")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--model", names.models,
                 "Model served at /v1/models, as NAME or NAME:ITL_MS (its own decode step); "
                 "repeat to serve several (default: mock-model)");
  app.add_flag("--no-tokenize", names.no_tokenize,
               "No POST /tokenize route (404), as Dynamo 1.6.1's frontend");
  app.add_option("--workers", opt.workers, "Simulated engine workers")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--block-size", opt.block_size, "Tokens per KV block")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--kv-blocks-per-worker", opt.kv_blocks_per_worker, "KV cache capacity in blocks")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--max-num-seqs", opt.max_num_seqs, "Concurrent sequences per worker")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--itl-ms", opt.itl_ms, "Decode step per output token (ms)")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--speedup", opt.speedup, "Divides all simulated times")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--default-max-tokens", opt.default_max_tokens, "Output tokens when unspecified")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--reasoning-tokens", opt.reasoning_tokens,
                 "Chat: the first N output tokens are reasoning_content (a reasoning model)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24))
      ->capture_default_str();
}

void define_routing(CLI::App& app, Options& opt, Names& names) {
  app.add_option("--router-mode", names.router, "kv | round-robin | random")
      ->check(CLI::IsMember({"kv", "round-robin", "random"}))
      ->capture_default_str();
  app.add_option("--contract", names.contract, "Session contract: none | legacy | bind | header")
      ->check(CLI::IsMember({"none", "legacy", "bind", "header"}))
      ->capture_default_str();
  app.add_option("--engine-sessions", names.engine_sessions,
                 "Engine keeps sessions (legacy open pins)")
      ->check(CLI::IsMember({"true", "false"}))
      ->capture_default_str();
  app.add_option("--affinity-ttl-s", opt.affinity_ttl_s, "Header contract: pin idle TTL (s)")
      ->check(CLI::PositiveNumber);
  app.add_option("--affinity-mode", names.affinity_mode,
                 "Header contract: hard (exact binding) | soft (a preference)")
      ->check(CLI::IsMember({"hard", "soft"}))
      ->capture_default_str();
  app.add_option("--affinity-max-entries", opt.affinity_max_entries,
                 "Header contract: binding table size (Dynamo: 65536, fixed)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 32))
      ->capture_default_str();
  app.add_option("--frontends", opt.frontends, "Frontends (binding tables) behind the one port")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--ingress-hash", names.ingress_hash,
                 "How requests pick a frontend: request (no session hashing) | session")
      ->check(CLI::IsMember({"request", "session"}))
      ->capture_default_str();
  app.add_option("--data-parallel-size", opt.data_parallel_size,
                 "DP ranks per reported worker instance (nvext.worker_id)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--default-session-timeout-s", opt.default_session_timeout_s,
                 "TTL when session_control has no timeout")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--reaper-period-ms", opt.reaper_period_ms, "Expired-pin sweep period (ms)")
      ->check(CLI::Range(1.0, 3.6e6))
      ->capture_default_str();
  app.add_option("--stats-sessions", opt.stats_sessions,
                 "Sessions /mock/stats keeps by id; the least recently seen beyond are dropped")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 32))
      ->capture_default_str();
}

void define_faults(CLI::App& app, Options& opt) {
  const auto rate = CLI::Range(0.0, 1.0);
  app.add_option("--seed", opt.seed, "Seed for routing ties and faults")->capture_default_str();
  app.add_option("--error-rate", opt.error_rate, "Fraction of requests failing with 500")
      ->check(rate);
  app.add_option("--reset-rate", opt.reset_rate, "Fraction of streams reset mid-way")->check(rate);
  app.add_option("--malformed-rate", opt.malformed_rate, "Fraction of streams with a bad event")
      ->check(rate);
  app.add_option("--stall-ms", opt.stall_ms, "Pause mid-stream for this long (real ms)")
      ->check(CLI::Range(0.0, 3.6e6));
  app.add_option("--stall-rate", opt.stall_rate, "Fraction of streams that stall")
      ->check(rate)
      ->capture_default_str();
  app.add_option("--log-requests", opt.log_requests_path, "Append one JSON line per request");
}

void define(CLI::App& app, Options& opt, Names& names) {
  define_engine(app, opt, names);
  define_routing(app, opt, names);
  define_faults(app, opt);
}

}  // namespace

std::vector<std::string> served_models(const Options& o) {
  std::vector<std::string> all{o.model};
  all.insert(all.end(), o.more_models.begin(), o.more_models.end());
  return all;
}

bool serves_model(const Options& o, std::string_view name) {
  return name == o.model ||
         std::find(o.more_models.begin(), o.more_models.end(), name) != o.more_models.end();
}

double itl_ms_for(const Options& o, std::string_view name) {
  const auto it = o.itl_ms_by_model.find(name);
  return it == o.itl_ms_by_model.end() ? o.itl_ms : it->second;
}

ParsedOptions parse_options(int argc, const char* const* argv) {
  CLI::App app{"convoy-mock: a Dynamo-like OpenAI-compatible mock server", "convoy-mock"};
  Options opt;
  Names names;
  define(app, opt, names);
  app.set_version_flag("--version", build_info::version_line("convoy-mock"));
  return parse(app, opt, names, [&] { app.parse(argc, argv); });
}

ParsedOptions parse_options(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"convoy-mock"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

}  // namespace convoy::mock
