// `convoy profile --url URL [--model NAME|auto] ...`: a run from one command line, as AIPerf,
// GuideLLM and `vllm bench serve` start. The flags become "key.path=value" overrides of an empty
// config and go through the same loader as a YAML file, so every check applies; an error names
// the flag, not the key. `--print-config` prints the same settings as a YAML file that
// `convoy run FILE` runs. Where AIPerf has a flag for the same thing its spelling is an alias
// (docs/migration.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/config/config.hpp"

namespace CLI {
class App;
}

namespace convoy::controller {

// The flags as typed; values stay text so the config loader checks them (and says which flag).
struct ProfileFlags {
  std::string url;       // "localhost:8000" gets http://; "mock" starts the bundled mock
  std::string model;     // "" or "auto": the first id of GET {url}/v1/models
  std::string endpoint;  // chat | completions | embeddings
  std::string concurrency;
  std::string rate;          // conversations per second (load.rate)
  std::string request_rate;  // requests per second (AIPerf's --request-rate): divided by turns
  std::string requests;
  std::string duration_s;
  std::string conversations;
  std::string isl;
  std::string osl;
  std::string turns;
  std::optional<bool> streaming;  // --streaming / --no-streaming; unset: the config's default
  std::string session_routing;
  std::string arrival;
  std::string seed;
  std::string api_key_env;
  std::string api_key_typed;      // AIPerf's --api-key KEY: refused, with the way convoy takes keys
  std::vector<std::string> sets;  // --set key.path=value, after the flags
  std::string output_dir;         // -o
  bool print_config = false;
  bool conv_aware = false;
  bool legacy = false;
  std::string timeout_text;
  bool quiet = false;
  bool verbose = false;
};

// Registers `convoy profile`'s flags (and their AIPerf spellings) on `cmd`.
void add_profile_flags(CLI::App* cmd, ProfileFlags& flags);
// The `profile` subcommand of `app`, its flags bound to `flags`.
CLI::App* add_profile_command(CLI::App& app, ProfileFlags& flags);

struct ProfilePlan {
  // "key.path=value" overrides, in order; `flag_of[i]` is how overrides[i] was asked for
  // ("--concurrency 8"), so an error names it.
  std::vector<std::string> overrides;
  std::vector<std::string> flag_of;
  std::vector<std::string> notes;  // lines to log (e.g. the --request-rate conversion)
};

// "localhost:8000" -> "http://localhost:8000"; "mock" and URLs with a scheme unchanged.
std::string with_scheme(const std::string& url);

// The overrides for `flags`, with target.model as given (`resolved_model` replaces "auto").
// Throws ConfigError naming the flag for conflicts the loader cannot see.
ProfilePlan plan_profile(const ProfileFlags& flags, const std::string& resolved_model);

// The Config of a plan: the loader over an empty file named "convoy profile"; an error that
// names an override is rewritten to name its flag. Throws ConfigError.
Config load_profile(const ProfilePlan& plan);

// The plan as a YAML file for `convoy run` (only the keys the flags set; the rest default).
std::string profile_yaml(const ProfilePlan& plan, const ProfileFlags& flags);

// `convoy profile`: the exit code (docs/architecture.md "Exit codes").
int profile_main(const ProfileFlags& flags);

// The text after the options in `convoy profile --help`.
extern const char* const kProfileHelpFooter;

}  // namespace convoy::controller
