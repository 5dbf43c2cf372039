#include "controller/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "common/build_info.hpp"
#include "common/log.hpp"
#include "controller/cli/cli_aliases.hpp"
#include "controller/cli/dataset_command.hpp"
#include "controller/cli/keygen.hpp"
#include "controller/cli/profile_command.hpp"
#include "controller/compare/compare.hpp"
#include "controller/config/config.hpp"
#include "controller/config/did_you_mean.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/report/run_report.hpp"
#include "controller/run/expected_duration.hpp"
#include "controller/run/preflight.hpp"
#include "controller/run/run.hpp"
#include "controller/run/target_probe.hpp"

namespace convoy::controller {

namespace {

void on_signal(int) { request_stop_from_signal(); }

struct RunFlags {
  std::string config_path;
  std::vector<std::string> sets;
  std::string output_dir;
  bool conv_aware = false;
  bool legacy = false;
  std::string timeout_text;
  bool quiet = false;
  bool verbose = false;
};

void add_run_flags(CLI::App* cmd, RunFlags& f) {
  cmd->add_option("config", f.config_path, "YAML configuration file")->required();
  cmd->add_option("--set", f.sets, "Override a key: --set load.rate=50 (repeatable)");
  cmd->add_option("-o,--output", f.output_dir, "Output folder (overrides output.dir)");
  cmd->add_flag(kFlagConvAwareNames, f.conv_aware, kHelpConvAware);
  cmd->add_flag(kFlagLegacy, f.legacy, kHelpLegacy);
  cmd->add_option(kFlagTimeout, f.timeout_text, kHelpTimeout);
  cmd->add_flag("-q,--quiet", f.quiet,
                "No live view and no info lines (warnings and errors still print)");
  cmd->add_flag("-v,--verbose", f.verbose, "Debug logging");
}

// Loads the config with --set and the AIPerf aliases applied. Throws ConfigError.
Config load_with_flags(const RunFlags& f) {
  std::vector<std::string> overrides = f.sets;
  std::optional<std::string> timeout;
  if (!f.timeout_text.empty()) timeout = f.timeout_text;
  AliasResult aliases = translate_aliases(f.conv_aware, f.legacy, timeout);
  if (aliases.error) throw ConfigError(*aliases.error);
  overrides.insert(overrides.end(), aliases.overrides.begin(), aliases.overrides.end());
  return load_config(f.config_path, overrides);
}

int run_command(const RunFlags& f, bool controller_only) {
  if (f.verbose) set_log_level(LogLevel::kDebug);
  RunOptions options{load_with_flags(f), std::nullopt, controller_only, f.quiet};
  if (!f.output_dir.empty()) options.output_dir = f.output_dir;
  if (controller_only && options.config.workers.local > 0 && !options.config.workers.expect) {
    options.config.workers.expect = options.config.workers.local;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  return run_benchmark(options);
}

const char* const kRunHelpFooter = R"(
Examples:
  convoy run configs/quickstart.yaml                      # the bundled mock: no server needed
  convoy run my.yaml -o results/today
  convoy run my.yaml --set load.concurrency=32 --set target.model=my-model
  convoy validate my.yaml --check-target                  # check it first, send nothing

Before any traffic convoy checks the target: GET {url}/v1/models with the key of
target.api_key_env. A refused key, a model the server does not serve or a url that already
ends in /chat/completions exits 2 and sends nothing. No config file yet: convoy profile --help.

Exit codes: 0 ok, 1 the run failed a fail_on criterion (or no request succeeded),
2 bad input (nothing was sent), 3 the run could not complete (no workers, target
unreachable, an output file not written), 130 interrupted (partial results written).
Docs: docs/quickstart.md, docs/config.md (every key), docs/report.md (the outputs).
)";

constexpr const char kCheckTargetHelp[] =
    "Also check the target as a run does before traffic (GET /v1/models with the key): exit 2 "
    "on a refused key, an unserved model or a doubled path";

struct KeygenFlags {
  std::string dir;  // where the key pairs go
  int workers = 1;  // worker key pairs, [1, 10000]
};

CLI::App* add_keygen_command(CLI::App& app, KeygenFlags& f) {
  auto* keygen = app.add_subcommand("keygen", "Write CurveZMQ key pairs for authenticated runs");
  keygen->add_option("dir", f.dir, "Folder to write the keys into")->required();
  keygen->add_option("--workers", f.workers, "Worker key pairs to create")
      ->check(CLI::Range(1, 10000));
  return keygen;
}

// The subcommands, for "did you mean" on a mistyped one.
const std::vector<std::string_view> kSubcommands = {"run",    "controller", "validate", "profile",
                                                    "keygen", "compare",    "dataset"};

// A first argument that is no subcommand nor an option: exit 2 with the closest name.
std::optional<int> unknown_subcommand(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string_view typed = argv[1];
  for (auto name : kSubcommands) {
    if (typed == name) return std::nullopt;
  }
  std::cerr << "convoy: error: unknown command '" << typed << "'";
  if (auto close = closest_match(typed, kSubcommands)) {
    std::cerr << ": did you mean '" << *close << "'?";
  }
  std::cerr << " (commands: run, profile, validate, compare, controller, keygen, dataset; convoy "
               "--help)\n";
  return kExitBadInput;
}

// `convoy validate`'s --check-target: the check a run makes before traffic, alone.
int check_target(const Config& c) {
  if (c.target.urls.empty() && c.target.url == "mock") {
    std::cout << "# target.url is mock: the bundled mock is started by the run, nothing to check\n";
    return kExitOk;
  }
  if (!targets_reachable_at_start(c)) return kExitIncomplete;
  if (!target_passes_preflight(c)) return kExitBadInput;
  std::cout << "# target: reachable, the key accepted and target.model served (or not checked: "
               "see the warnings above)\n";
  return kExitOk;
}

// convoy validate: the config, then the dataset (the same streaming validation pass a run makes,
// so that a bad row is found here rather than at `convoy run`), then the target when asked.
int validate_main(const RunFlags& flags, bool check_target_flag) {
  Config c = load_with_flags(flags);
  const uint64_t conversations = open_dataset(c)->size();
  std::cout << "# " << flags.config_path << ": valid (" << conversations
            << " conversation(s) in the dataset)\n# " << expected_duration_line(c, conversations)
            << "\n"
            << to_yaml(with_urls_redacted(c));
  return check_target_flag ? check_target(c) : kExitOk;
}

}  // namespace

int cli_main(int argc, char** argv) {
  if (auto rc = unknown_subcommand(argc, argv)) return *rc;
  CLI::App app{"convoy: a distributed load generator for OpenAI-compatible LLM servers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", build_info::version_line("convoy"));

  RunFlags run_flags;
  auto* run = app.add_subcommand(
      "run", "Run a benchmark: controller + local workers (+ the bundled mock for url: mock)");
  add_run_flags(run, run_flags);
  run->footer(kRunHelpFooter);

  ProfileFlags profile_flags;
  auto* profile = add_profile_command(app, profile_flags);

  RunFlags ctl_flags;
  auto* ctl = app.add_subcommand(
      "controller", "Controller only: wait for workers.expect remote workers, then run");
  add_run_flags(ctl, ctl_flags);

  RunFlags val_flags;
  auto* val = app.add_subcommand("validate",
                                 "Parse and validate a config, print it resolved, send nothing");
  val->add_option("config", val_flags.config_path, "YAML configuration file")->required();
  val->add_option("--set", val_flags.sets, "Override a key (repeatable)");
  val->add_flag(kFlagConvAwareNames, val_flags.conv_aware, kHelpConvAware);
  val->add_flag(kFlagLegacy, val_flags.legacy, kHelpLegacy);
  val->add_option(kFlagTimeout, val_flags.timeout_text, kHelpTimeout);
  bool check_target_flag = false;
  val->add_flag("--check-target", check_target_flag, kCheckTargetHelp);

  KeygenFlags keygen_flags;
  auto* keygen = add_keygen_command(app, keygen_flags);

  std::vector<std::string> compare_dirs;
  std::string compare_out;
  auto* cmp = app.add_subcommand(
      "compare", "Compare runs side by side: a table, compare.json and compare.html");
  cmp->add_option("runs", compare_dirs,
                  "Run folders (the first is the baseline), or one run with stages")
      ->required();
  cmp->add_option("-o,--output", compare_out,
                  "Folder for compare.json and compare.html (default: the current directory)");
  cmp->footer(compare::kCompareHelpFooter);

  DatasetFlags dataset_flags;
  auto* dataset = add_dataset_command(app, dataset_flags);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  }

  set_log_prefix("convoy");
  try {
    if (*run) return run_command(run_flags, false);
    if (*ctl) return run_command(ctl_flags, true);
    if (*profile) return profile_main(profile_flags);
    if (*val) return validate_main(val_flags, check_target_flag);
    if (*keygen) return write_curve_keys(keygen_flags.dir, keygen_flags.workers);
    if (*dataset) return dataset_main(dataset_flags);
    if (*cmp) return compare::compare_main(compare_dirs, compare_out, std::cout, std::cerr);
  } catch (const ConfigError& e) {
    std::cerr << "convoy: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "convoy: error: " << e.what() << "\n";
    return kExitIncomplete;
  }
  return kExitBadInput;
}

}  // namespace convoy::controller
