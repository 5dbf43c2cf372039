// What a run tested and what came out, in words: the first lines of the console report and the
// box at the top of report.html, so a reader gets the answer before any table or chart. Pure: a
// function of the configuration, the metrics, the verdict and the insights.
#pragma once

#include <cstddef>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/insights.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/report/verdict.hpp"

namespace convoy::controller {

struct Headline {
  std::string model;     // target.model
  std::string endpoint;  // "chat, streaming" | "completions, not streamed" | ...
  std::string target;    // the target URL as every output shows it (password redacted)
  // "concurrency 8, until 24 conversations" | "sweep of concurrency over 1, 2, 4 (30 s each)" |
  // "capacity search of concurrency in [1, 256]: TTFT p99 <= 500 ms, error rate <= 1%".
  std::string load;
  // "synthetic, 24 conversations; turns mean 3; ISL mean 128 tokens (measured 131.2); OSL ..."
  std::string dataset;
  // The measured outcome: "72 requests ok, 0 failed; 12.3 req/s; 410 output tok/s; TTFT p50
  // 40 ms p99 80 ms; ITL p50 8 ms p99 9 ms" ("no request succeeded: 72 failed" when none did).
  std::string results;
  // A profile's answer. Search: "highest concurrency meeting the SLO: 16; 24 missed it (TTFT
  // p99 812 ms > 500 ms)". Sweep: the peak throughput and the latency across the steps, then
  // the stages that did not pass. "" for a single-level run.
  std::string answer;
  // A failed run's cause: the top insight (errors first) as "title: problem", with its first
  // fix in `fix`; "" when the run did not fail or no insight explains it.
  std::string cause;
  std::string fix;
};

Headline make_headline(const Config& config, const std::string& url, const MetricsSnapshot& s,
                       const Verdict& verdict, const std::vector<Insight>& insights,
                       std::span<const StageFacts> stages, const SearchFacts* search);

// The verdict in words: "pass: the run delivered the intended load with no finding" or
// "warn: <its first reason>" (+ "(and N more below)").
std::string verdict_line(const Verdict& verdict);

// The console's first block, e.g.
//   convoy | quickstart: mock-model at http://127.0.0.1:40123 (chat, streaming)
//     load:    concurrency 8, until 24 conversations
//     dataset: synthetic, 24 conversations; turns mean 3; ISL mean 128 ...
//     result:  72 requests ok, 0 failed; ...
//     verdict: pass: the run delivered the intended load with no finding
// then "answer:" (a profile) and "cause:" / "fix:" (a failed run). Values wrap at spaces to
// `width` columns, under the value.
void print_headline(std::ostream& out, const std::string& name, const Headline& h,
                    const Verdict& verdict, size_t width = 120);

// `prefix` then `text` wrapped at spaces to `width` columns, each continuation line indented by
// the prefix's length; a word longer than a line stays whole. Ends with a newline.
std::string wrap_at_spaces(const std::string& prefix, const std::string& text, size_t width);

}  // namespace convoy::controller
