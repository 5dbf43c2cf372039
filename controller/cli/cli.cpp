#include "controller/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "common/build_info.hpp"
#include "common/log.hpp"
#include "controller/cli/cli_aliases.hpp"
#include "controller/cli/keygen.hpp"
#include "controller/compare/compare.hpp"
#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/report/run_report.hpp"
#include "controller/run/run.hpp"

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

}  // namespace

int cli_main(int argc, char** argv) {
  CLI::App app{"convoy: a distributed load generator for OpenAI-compatible LLM servers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", build_info::version_line("convoy"));

  RunFlags run_flags;
  auto* run = app.add_subcommand(
      "run", "Run a benchmark: controller + local workers (+ the bundled mock for url: mock)");
  add_run_flags(run, run_flags);

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

  std::string keygen_dir;
  int keygen_workers = 1;
  auto* keygen = app.add_subcommand("keygen", "Write CurveZMQ key pairs for authenticated runs");
  keygen->add_option("dir", keygen_dir, "Folder to write the keys into")->required();
  keygen->add_option("--workers", keygen_workers, "Worker key pairs to create")
      ->check(CLI::Range(1, 10000));

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
    if (*val) {
      Config c = load_with_flags(val_flags);
      // The dataset too: the same streaming validation pass a run makes, so that a bad row is
      // found here rather than at `convoy run`.
      const uint64_t conversations = open_dataset(c)->size();
      std::cout << "# " << val_flags.config_path << ": valid (" << conversations
                << " conversation(s) in the dataset)\n"
                << to_yaml(with_urls_redacted(c));
      return kExitOk;
    }
    if (*keygen) return write_curve_keys(keygen_dir, keygen_workers);
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
