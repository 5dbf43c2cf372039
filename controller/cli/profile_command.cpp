#include "controller/cli/profile_command.hpp"

#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <iostream>

#include "common/log.hpp"
#include "common/redact.hpp"
#include "controller/cli/cli_aliases.hpp"
#include "controller/config/yaml_util.hpp"
#include "controller/run/preflight.hpp"
#include "controller/run/run.hpp"

namespace convoy::controller {

namespace {

constexpr const char kProfileSource[] = "convoy profile";

// A user's text as one YAML scalar.
std::string yaml_quoted(const std::string& text) { return yaml_util::quote(text); }

class PlanBuilder {
 public:
  explicit PlanBuilder(ProfilePlan& plan) : plan_(plan) {}
  // `value` is YAML text (a number as typed, or a quoted string).
  void set(const std::string& key, const std::string& value, const std::string& flag) {
    plan_.overrides.push_back(key + "=" + value);
    plan_.flag_of.push_back(flag);
  }
  void set_if(const std::string& key, const std::string& typed, const std::string& flag_name) {
    if (!typed.empty()) set(key, typed, flag_name + " " + typed);
  }

 private:
  ProfilePlan& plan_;
};

// The turns a conversation has on average, for --request-rate: the --turns value, else the
// config's default distribution's mean.
double mean_turns(const ProfileFlags& f) {
  if (!f.turns.empty()) {
    if (auto v = yaml_util::parse_number(f.turns); v && *v >= 1) return *v;
    throw ConfigError("--turns " + f.turns + ": expected a whole number of turns >= 1");
  }
  return DatasetConfig{}.turns.mean;
}

void plan_load(const ProfileFlags& f, PlanBuilder& b, ProfilePlan& plan) {
  if (!f.rate.empty() && !f.request_rate.empty()) {
    throw ConfigError(
        "--rate and --request-rate: give one (--rate counts conversations per second, "
        "--request-rate requests per second)");
  }
  if (!f.request_rate.empty()) {
    const auto requests_per_s = yaml_util::parse_number(f.request_rate);
    if (!requests_per_s || *requests_per_s <= 0) {
      throw ConfigError("--request-rate " + f.request_rate +
                        ": expected a number of requests per second > 0");
    }
    // load.rate starts conversations; each sends `turns` requests one after another, so the
    // request rate the run settles at is rate x turns.
    const double turns = mean_turns(f);
    const double conversations_per_s = *requests_per_s / turns;
    b.set("load.mode", "rate", "--request-rate " + f.request_rate);
    b.set("load.rate", yaml_util::format_number(conversations_per_s),
          "--request-rate " + f.request_rate);
    if (turns != 1) {
      plan.notes.push_back("--request-rate " + f.request_rate + " requests/s with " +
                           yaml_util::format_number(turns) + " turns per conversation: load.rate " +
                           yaml_util::format_number(conversations_per_s) +
                           " conversations/s (convoy's rate counts conversations)");
    }
  } else if (!f.rate.empty()) {
    b.set("load.mode", "rate", "--rate " + f.rate);
    b.set_if("load.rate", f.rate, "--rate");
  } else if (!f.concurrency.empty()) {
    b.set("load.mode", "concurrency", "--concurrency " + f.concurrency);
  }
  // With a rate, --concurrency caps the conversations in flight (AIPerf's combination).
  b.set_if("load.concurrency", f.concurrency, "--concurrency");
  b.set_if("load.arrival", f.arrival, "--arrival");
  b.set_if("load.requests", f.requests, "--requests");
  b.set_if("load.duration_s", f.duration_s, "--duration");
}

void plan_target(const ProfileFlags& f, const std::string& model, PlanBuilder& b) {
  if (!f.url.empty()) b.set("target.url", yaml_quoted(with_scheme(f.url)), "--url " + f.url);
  if (!f.endpoint.empty() && f.endpoint.front() == '/') {
    throw ConfigError("--endpoint " + f.endpoint +
                      ": convoy's --endpoint names the API (chat, completions, embeddings), not "
                      "a path; AIPerf's --endpoint /PATH has no convoy flag: give --url the "
                      "server's base url");
  }
  b.set_if("target.endpoint", f.endpoint, "--endpoint");
  if (model.find(',') != std::string::npos) {
    // --model a,b: target.models, each model at weight 1 (a conversation draws one).
    std::string list;
    for (size_t from = 0; from <= model.size();) {
      const size_t comma = std::min(model.find(',', from), model.size());
      list += (list.empty() ? "[" : ", ") +
              ("{name: " + yaml_quoted(model.substr(from, comma - from)) + "}");
      from = comma + 1;
    }
    b.set("target.models", list + "]", "--model " + f.model);
  } else if (!model.empty()) {
    b.set("target.model", yaml_quoted(model), "--model " + f.model);
  }
  if (f.streaming) {
    b.set("target.streaming", *f.streaming ? "true" : "false",
          *f.streaming ? "--streaming" : "--no-streaming");
  }
  if (!f.api_key_env.empty()) {
    b.set("target.api_key_env", yaml_quoted(f.api_key_env), "--api-key-env " + f.api_key_env);
  }
}

// Replaces "--set KEY=VALUE" in a loader message by the flag that asked for it.
std::string named_by_flag(std::string message, const ProfilePlan& plan) {
  for (size_t i = 0; i < plan.overrides.size(); ++i) {
    const std::string set = "--set " + plan.overrides[i];
    if (message.rfind(set + ":", 0) == 0) return plan.flag_of[i] + message.substr(set.size());
  }
  return message;
}

// target.model for the plan: as given, or for "auto" (or none) the first id the server lists.
std::string resolve_model(const ProfileFlags& f) {
  if (!f.model.empty() && f.model != "auto") return f.model;
  const std::string url = with_scheme(f.url);
  if (url.empty() || url == "mock") return "";  // the bundled mock's own model (the default)
  proto::TargetSettings target;
  if (!f.api_key_env.empty()) target.api_key_env = f.api_key_env;
  const ModelsReply reply = get_models(target, url, kModelsTimeoutS);
  const std::string shown = redact_url(models_url(url));
  const auto ids = reply.http_status / 100 == 2 ? served_model_ids(reply.body) : std::nullopt;
  if (ids && !ids->empty()) {
    log_info("--model auto: ", ids->front(), " (the first of ", ids->size(), " served by ", shown,
             ")");
    return ids->front();
  }
  const std::string answer = reply.http_status == 0
                                 ? "no answer: " + reply.transport_error
                                 : "HTTP " + std::to_string(reply.http_status) +
                                       (ids ? ", an empty model list" : ", not a model list");
  throw ConfigError("--model " + std::string(f.model.empty() ? "(none)" : f.model) +
                    ": the model is taken from GET " + shown + ", which gave " + answer +
                    ": name the model with --model NAME. Nothing was sent.");
}

void install_signals() {
  std::signal(SIGINT, [](int) { request_stop_from_signal(); });
  std::signal(SIGTERM, [](int) { request_stop_from_signal(); });
  std::signal(SIGPIPE, SIG_IGN);
}

}  // namespace

std::string with_scheme(const std::string& url) {
  if (url.empty() || url == "mock" || url.find("://") != std::string::npos) return url;
  return "http://" + url;
}

ProfilePlan plan_profile(const ProfileFlags& f, const std::string& resolved_model) {
  ProfilePlan plan;
  PlanBuilder b(plan);
  b.set("name", "profile", kProfileSource);
  plan_target(f, resolved_model, b);
  b.set_if("dataset.conversations", f.conversations, "--conversations");
  b.set_if("dataset.turns", f.turns, "--turns");
  b.set_if("dataset.input_tokens", f.isl, "--isl");
  b.set_if("dataset.output_tokens", f.osl, "--osl");
  plan_load(f, b, plan);
  b.set_if("session_routing.mode", f.session_routing, "--session-routing");
  b.set_if("seed", f.seed, "--seed");
  std::optional<std::string> timeout;
  if (!f.timeout_text.empty()) timeout = f.timeout_text;
  AliasResult aliases = translate_aliases(f.conv_aware, f.legacy, timeout);
  if (aliases.error) throw ConfigError(*aliases.error);
  for (const auto& o : aliases.overrides) {
    plan.overrides.push_back(o);
    plan.flag_of.push_back("--set " + o);
  }
  for (const auto& s : f.sets) {
    plan.overrides.push_back(s);
    plan.flag_of.push_back("--set " + s);
  }
  return plan;
}

Config load_profile(const ProfilePlan& plan) {
  try {
    return parse_config("", kProfileSource, plan.overrides);
  } catch (const ConfigError& e) {
    throw ConfigError(named_by_flag(e.what(), plan));
  }
}

std::string profile_yaml(const ProfilePlan& plan, const ProfileFlags& flags) {
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& o : plan.overrides) {
    const size_t eq = o.find('=');
    std::vector<std::string> parts;
    for (size_t at = 0; at <= eq;) {
      const size_t dot = std::min(o.find('.', at), eq);
      parts.push_back(o.substr(at, dot - at));
      at = dot + 1;
    }
    YAML::Node node = root;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (!node[parts[i]].IsMap()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      YAML::Node child = node[parts[i]];
      node.reset(child);
    }
    node[parts.back()] = YAML::Load(o.substr(eq + 1));
  }
  YAML::Emitter out;
  out << root;
  std::string text =
      "# convoy profile's settings as a config file; every key not here has its\n"
      "# default (docs/config.md). Run it: convoy run FILE";
  if (!flags.output_dir.empty()) text += " -o " + flags.output_dir;
  text += "\n";
  for (const auto& note : plan.notes) text += "# " + note + "\n";
  return text + out.c_str() + "\n";
}

void add_profile_flags(CLI::App* cmd, ProfileFlags& f) {
  cmd->add_option("-u,--url", f.url,
                  "The server's base url (localhost:8000 means http://localhost:8000), or mock");
  cmd->add_option("-m,--model,--model-names", f.model,
                  "Model name (a,b: several, each conversation draws one); auto (or none): the "
                  "first id of GET {url}/v1/models");
  cmd->add_option("--endpoint,--endpoint-type", f.endpoint, "chat | completions | embeddings");
  cmd->add_option("--concurrency", f.concurrency,
                  "Conversations in flight (with a rate: the cap on them)");
  cmd->add_option("--rate", f.rate, "New CONVERSATIONS per second (load.rate; mode rate)");
  cmd->add_option("--request-rate", f.request_rate,
                  "New REQUESTS per second (AIPerf's): load.rate = this / turns per conversation");
  cmd->add_option("--requests,--request-count,--num-requests", f.requests,
                  "Send exactly this many measured requests");
  cmd->add_option("--duration,--benchmark-duration", f.duration_s, "Stop after this many seconds");
  cmd->add_option("--conversations,--num-conversations,--num-sessions,--conversation-num",
                  f.conversations, "Synthetic conversations (the run ends when all have run)");
  cmd->add_option("--isl,--synthetic-input-tokens-mean,--prompt-input-tokens-mean", f.isl,
                  "New input tokens per turn");
  cmd->add_option("--osl,--output-tokens-mean,--prompt-output-tokens-mean", f.osl,
                  "Output tokens per turn (max_tokens)");
  cmd->add_option("--turns,--conversation-turn-mean,--session-turns-mean", f.turns,
                  "Turns per conversation (default: about 4, a distribution)");
  cmd->add_flag_callback(
      "--streaming", [&f] { f.streaming = true; }, "Stream the replies (the default)");
  cmd->add_flag_callback(
      "--no-streaming", [&f] { f.streaming = false; }, "One JSON reply per request");
  cmd->add_option("--session-routing", f.session_routing,
                  "off | auto | bind | legacy | header (session_routing.mode)");
  cmd->add_option("--arrival,--arrival-pattern,--request-rate-mode", f.arrival,
                  "constant | poisson | gamma (with a rate)");
  cmd->add_option("--seed,--random-seed", f.seed, "Seed of every random choice");
  cmd->add_option("--api-key-env", f.api_key_env,
                  "NAME of the environment variable that holds the API key (default "
                  "OPENAI_API_KEY)");
  cmd->add_option("--api-key", f.api_key_typed,
                  "Refused: a key on the command line ends up in shell history and process "
                  "lists; export it and name the variable with --api-key-env");
  cmd->add_option("--set", f.sets, "Override any key: --set dataset.history=recorded");
  cmd->add_option("-o,--output,--output-artifact-dir,--artifact-dir", f.output_dir,
                  "Output folder (default artifacts/profile-TIMESTAMP)");
  cmd->add_flag("--print-config", f.print_config,
                "Print the equivalent YAML (for convoy run FILE) and send nothing (but --model "
                "auto's GET /v1/models)");
  cmd->add_flag(kFlagConvAwareNames, f.conv_aware, kHelpConvAware);
  cmd->add_flag(kFlagLegacy, f.legacy, kHelpLegacy);
  cmd->add_option(kFlagTimeout, f.timeout_text, kHelpTimeout);
  cmd->add_flag("-q,--quiet", f.quiet, "No live progress line");
  cmd->add_flag("-v,--verbose", f.verbose, "Debug logging");
  cmd->footer(kProfileHelpFooter);
}

const char* const kProfileHelpFooter = R"(
Examples:
  convoy profile --url localhost:8000 --model Qwen/Qwen3-0.6B
  convoy profile --url localhost:8000 --concurrency 8 --requests 200 --isl 512 --osl 128
  convoy profile --url http://frontend:8000 --rate 2 --turns 4 --duration 60
  convoy profile --url localhost:8000 --request-count 100 --print-config > my.yaml
  convoy profile --url mock --requests 20                # the bundled mock, no server needed

Before any traffic convoy checks the target (GET {url}/v1/models with the key of
$OPENAI_API_KEY, or of --api-key-env NAME): a refused key, a model the server does not
serve or a url that already ends in /chat/completions exits 2 and sends nothing.

--rate counts CONVERSATIONS per second; AIPerf's --request-rate counts REQUESTS per second
and is divided by the turns per conversation.

Exit codes: 0 ok, 1 a fail_on criterion failed, 2 bad input (nothing sent), 3 the run could
not complete, 130 interrupted. Docs: docs/quickstart.md, docs/migration.md (AIPerf, vllm
bench serve, GuideLLM flags), docs/config.md (every key).
)";

CLI::App* add_profile_command(CLI::App& app, ProfileFlags& flags) {
  auto* profile = app.add_subcommand(
      "profile", "Run a benchmark from flags alone, no config file: convoy profile --url URL");
  add_profile_flags(profile, flags);
  return profile;
}

int profile_main(const ProfileFlags& flags) {
  if (flags.verbose) set_log_level(LogLevel::kDebug);
  if (!flags.api_key_typed.empty()) {
    throw ConfigError(
        "--api-key: convoy never takes the key itself (it would sit in shell history and "
        "process lists): export it, e.g. export OPENAI_API_KEY=..., and name the variable with "
        "--api-key-env OPENAI_API_KEY (the default)");
  }
  if (flags.url.empty()) {
    throw ConfigError(
        "--url: required (the server's base url, e.g. --url localhost:8000, or --url mock for "
        "the bundled mock)");
  }
  const ProfilePlan plan = plan_profile(flags, resolve_model(flags));
  Config config = load_profile(plan);
  if (flags.print_config) {
    std::cout << profile_yaml(plan, flags);
    return kExitOk;
  }
  for (const auto& note : plan.notes) log_info(note);
  RunOptions options{std::move(config), std::nullopt, false, flags.quiet};
  if (!flags.output_dir.empty()) options.output_dir = flags.output_dir;
  install_signals();
  return run_benchmark(options);
}

}  // namespace convoy::controller
