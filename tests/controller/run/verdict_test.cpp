#include "controller/report/run_report.hpp"
#include "controller/run/registry.hpp"
#include "test_time.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace {

using convoy::Arrival;
using convoy::Config;
using convoy::LoadMode;
using convoy::controller::judge_run;
using convoy::controller::ks_p_value;
using convoy::controller::ks_statistic;
using convoy::controller::MetricsAggregator;
using convoy::controller::ReportInputs;
using convoy::controller::RunFacts;
using convoy::controller::Verdict;
using convoy::controller::VerdictStatus;
using convoy::controller::worker_summaries;
using convoy::controller::WorkerRegistry;
using convoy::proto::ErrorKind;
using convoy::proto::Record;

constexpr size_t kGaps = 2'000;
constexpr double kRatePerS = 10;

template <typename Distribution>
std::vector<int64_t> gaps_from(Distribution dist, uint64_t seed, size_t n = kGaps) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> gaps;
  for (size_t i = 0; i < n; ++i) gaps.push_back(static_cast<int64_t>(dist(rng) * 1e9));
  return gaps;
}

double p_value_of(const std::vector<int64_t>& gaps, Arrival arrival, double rate, double shape) {
  const double d = ks_statistic(gaps, arrival, rate, shape);
  REQUIRE(d >= 0);
  return ks_p_value(d, gaps.size());
}

std::string joined(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += r + "\n";
  return out;
}

bool has_reason(const Verdict& v, const std::string& needle) {
  return joined(v.reasons).find(needle) != std::string::npos;
}

// A successful streamed request sent `lag_ms` after its intended time.
Record verdict_ok_record(int64_t at, uint32_t conversation, int64_t lag_ms = 0) {
  Record r;
  r.x_request_id = "rid-" + std::to_string(at);
  r.x_correlation_id = "cid-" + std::to_string(conversation);
  r.conversation_index = conversation;
  r.intended_ns = at;
  r.sent_ns = at + lag_ms * kMs;
  r.first_token_ns = r.sent_ns + 30 * kMs;
  r.second_token_ns = r.first_token_ns + 5 * kMs;
  r.last_token_ns = r.first_token_ns + 20 * kMs;
  r.end_ns = r.last_token_ns + kMs;
  r.chunk_gaps_ns = {5 * kMs, 5 * kMs, 5 * kMs, 5 * kMs};
  r.input_tokens = 100;
  r.output_tokens = 5;
  r.http_status = 200;
  return r;
}

Record verdict_error_record(int64_t at, uint32_t conversation) {
  Record r = verdict_ok_record(at, conversation);
  r.first_token_ns = r.second_token_ns = r.last_token_ns = 0;
  r.chunk_gaps_ns.clear();
  r.output_tokens = 0;
  r.http_status = 500;
  r.error.kind = ErrorKind::kHttpStatus;
  r.error.code = 500;
  r.error.message = "internal error";
  return r;
}

// One run's inputs, with a healthy worker and `ok` clean requests; tests then spoil one thing.
struct VerdictRun {
  Config config;
  std::string url = "http://127.0.0.1:8000";
  std::filesystem::path out_dir = "/nonexistent";
  WorkerRegistry registry;
  RunFacts facts;
  std::vector<Record> records;
  bool incomplete = false;
  std::string incomplete_reason;
  std::vector<convoy::controller::OutputError> output_errors;

  explicit VerdictRun(int ok = 50) {
    add_worker("w-0", 40, 0);
    for (int i = 0; i < ok; ++i)
      records.push_back(verdict_ok_record(kS + i * 100 * kMs, static_cast<uint32_t>(i)));
  }

  void add_worker(const std::string& id, double cpu_percent, int64_t legacy_open) {
    convoy::proto::Hello hello;
    hello.worker_id = id;
    hello.host = "host-" + id;
    REQUIRE_FALSE(registry.on_hello(hello, kS).has_value());
    convoy::proto::Heartbeat hb;
    hb.cpu_percent = cpu_percent;
    hb.legacy_open_sessions = legacy_open;
    registry.on_heartbeat(id, hb, 2 * kS);
    REQUIRE(registry.find(id) != nullptr);
  }

  Verdict judge() {
    MetricsAggregator agg(config);
    for (const auto& r : records) {
      agg.add(r);
      facts.add(r);
    }
    const ReportInputs in{config, url,   out_dir,    worker_summaries(registry), agg.snapshot(),
                          facts,  false, incomplete, incomplete_reason,          output_errors};
    return judge_run(in);
  }
};

}  // namespace

TEST_CASE("KS statistic of inter-arrival gaps") {
  // Under the null hypothesis p is uniform: over kSeeds samples about 5% fall below 0.05, so
  // "accepted" means at most kSeeds / 8 of them do, and the median p is well above 0.05.
  constexpr uint64_t kSeeds = 20;
  auto accepted = [](auto dist, Arrival arrival, double shape) {
    std::vector<double> ps;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      ps.push_back(p_value_of(gaps_from(dist, seed), arrival, kRatePerS, shape));
    }
    const auto low = std::count_if(ps.begin(), ps.end(), [](double p) { return p < 0.05; });
    std::sort(ps.begin(), ps.end());
    CAPTURE(low);
    CAPTURE(ps[kSeeds / 2]);
    return low <= static_cast<long>(kSeeds / 8) && ps[kSeeds / 2] > 0.2;
  };
  auto rejected = [](auto dist, Arrival arrival, double shape) {
    double worst = 0;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      worst = std::max(worst, p_value_of(gaps_from(dist, seed), arrival, kRatePerS, shape));
    }
    CAPTURE(worst);
    return worst < 0.001;
  };

  SUBCASE("exponential gaps at the configured rate match poisson") {
    CHECK(accepted(std::exponential_distribution<double>(kRatePerS), Arrival::kPoisson, 1));
    const auto gaps = gaps_from(std::exponential_distribution<double>(kRatePerS), 2);
    CHECK(ks_statistic(gaps, Arrival::kPoisson, kRatePerS, 1) < 0.04);
  }
  SUBCASE("constant gaps do not match poisson") {
    const std::vector<int64_t> gaps(kGaps, static_cast<int64_t>(1e9 / kRatePerS));
    const double d = ks_statistic(gaps, Arrival::kPoisson, kRatePerS, 1);
    CHECK(d == doctest::Approx(1 - std::exp(-1.0)).epsilon(1e-6));  // CDF at the mean
    CHECK(ks_p_value(d, gaps.size()) < 0.001);
  }
  SUBCASE("exponential gaps at twice the rate do not match") {
    CHECK(rejected(std::exponential_distribution<double>(2 * kRatePerS), Arrival::kPoisson, 1));
  }
  SUBCASE("gamma(0.5) gaps match gamma with shape 0.5, not poisson") {
    constexpr double kShape = 0.5;
    // std::gamma_distribution(alpha, beta) has mean alpha * beta.
    const std::gamma_distribution<double> dist(kShape, 1 / kRatePerS / kShape);
    CHECK(accepted(dist, Arrival::kGamma, kShape));
    CHECK(rejected(dist, Arrival::kPoisson, 1));
  }
  SUBCASE("exponential gaps do not match gamma(0.5)") {
    CHECK(rejected(std::exponential_distribution<double>(kRatePerS), Arrival::kGamma, 0.5));
  }
  SUBCASE("gamma with shape 1 is poisson") {
    const auto gaps = gaps_from(std::exponential_distribution<double>(kRatePerS), 4);
    CHECK(ks_statistic(gaps, Arrival::kGamma, kRatePerS, 1.0) ==
          doctest::Approx(ks_statistic(gaps, Arrival::kPoisson, kRatePerS, 1)).epsilon(1e-6));
  }
  SUBCASE("not computed for constant arrivals, too few gaps or no rate") {
    const auto gaps = gaps_from(std::exponential_distribution<double>(kRatePerS), 5);
    CHECK(ks_statistic(gaps, Arrival::kConstant, kRatePerS, 1) == -1);
    CHECK(ks_statistic({gaps.begin(), gaps.begin() + 19}, Arrival::kPoisson, kRatePerS, 1) == -1);
    CHECK(ks_statistic({gaps.begin(), gaps.begin() + 20}, Arrival::kPoisson, kRatePerS, 1) >= 0);
    CHECK(ks_statistic(gaps, Arrival::kPoisson, 0, 1) == -1);
  }
}

TEST_CASE("KS p-value") {
  SUBCASE("known values of the Kolmogorov distribution") {
    // Q_KS(lambda) with lambda = (sqrt(n) + 0.12 + 0.11 / sqrt(n)) * d; n = 10000 makes the
    // correction negligible: Q(1.36) = 0.0494, Q(1.63) = 0.0098, Q(1.0) = 0.2700.
    CHECK(ks_p_value(0.0136, 10'000) == doctest::Approx(0.0494).epsilon(0.02));
    CHECK(ks_p_value(0.0163, 10'000) == doctest::Approx(0.0098).epsilon(0.03));
    CHECK(ks_p_value(0.0100, 10'000) == doctest::Approx(0.2700).epsilon(0.02));
  }
  SUBCASE("decreases with d and with n") {
    CHECK(ks_p_value(0.02, 1000) > ks_p_value(0.05, 1000));
    CHECK(ks_p_value(0.05, 100) > ks_p_value(0.05, 1000));
    CHECK(ks_p_value(0.9, 1000) == doctest::Approx(0.0));
  }
  SUBCASE("not computed without a statistic or samples") {
    CHECK(ks_p_value(-1, 100) == -1);
    CHECK(ks_p_value(0.1, 0) == -1);
  }
}

TEST_CASE("run verdict") {
  VerdictRun run;

  SUBCASE("a clean run passes with no reason") {
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kPass);
    CHECK(v.reasons.empty());
    CHECK(v.ks_statistic == -1);  // concurrency mode: no arrival process to test
  }
  SUBCASE("errors warn; above fail_on.error_rate they fail") {
    for (uint32_t i = 0; i < 10; ++i)
      run.records.push_back(verdict_error_record(2 * kS + i * kMs, 100 + i));
    SUBCASE("no criterion") {
      const Verdict v = run.judge();
      CHECK(v.status == VerdictStatus::kWarn);
      CHECK(has_reason(v, "10 request(s) failed"));
    }
    SUBCASE("within the criterion") {
      run.config.fail_on.error_rate = 0.2;  // 10 of 60 = 16.7%
      const Verdict v = run.judge();
      CHECK(v.status == VerdictStatus::kWarn);
    }
    SUBCASE("exceeding the criterion") {
      run.config.fail_on.error_rate = 0.1;
      const Verdict v = run.judge();
      CHECK(v.status == VerdictStatus::kFail);
      CHECK(has_reason(v, "fail_on.error_rate"));
    }
  }
  SUBCASE("a lost worker warns") {
    run.facts.lost_workers.push_back("w-9");
    run.facts.lost_conversations = {"cid-1", "cid-2"};
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(has_reason(v, "worker w-9 was lost"));
    CHECK(has_reason(v, "2 conversation(s) were lost"));
  }
  SUBCASE("worker CPU above 85% warns") {
    run.add_worker("w-1", 92.5, 0);
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(has_reason(v, "worker w-1 peaked at 92% CPU"));
  }
  SUBCASE("worker CPU at 85% passes") {
    run.add_worker("w-1", 85, 0);
    CHECK(run.judge().status == VerdictStatus::kPass);
  }
  SUBCASE("legacy sessions left open warn") {
    run.add_worker("w-1", 10, 3);
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(has_reason(v, "3 legacy session(s) still open"));
  }
  SUBCASE("schedule lag p99 above 10 ms warns") {
    run.records.clear();
    for (int i = 0; i < 100; ++i) {
      run.records.push_back(
          verdict_ok_record(kS + i * 100 * kMs, static_cast<uint32_t>(i), i < 90 ? 1 : 25));
    }
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(has_reason(v, "schedule_lag p99"));
  }
  SUBCASE("schedule lag p99 within 10 ms passes") {
    run.records.clear();
    for (int i = 0; i < 100; ++i)
      run.records.push_back(verdict_ok_record(kS + i * 100 * kMs, static_cast<uint32_t>(i), 8));
    CHECK(run.judge().status == VerdictStatus::kPass);
  }
  SUBCASE("an incomplete run fails, even with warnings") {
    run.add_worker("w-1", 99, 0);
    run.incomplete = true;
    run.incomplete_reason = "all workers lost";
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kFail);
    CHECK(has_reason(v, "could not complete: all workers lost"));
    CHECK(has_reason(v, "CPU"));
  }
  SUBCASE("no measured request fails") {
    run.records.clear();
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kFail);
    CHECK(has_reason(v, "no measured request"));
  }
}

TEST_CASE("run verdict in rate mode checks the delivered arrival process") {
  VerdictRun run(0);
  run.config.load.mode = LoadMode::kRate;
  run.config.load.rate = kRatePerS;
  run.config.load.arrival = Arrival::kPoisson;
  // Conversation starts at the given gaps (first turns only).
  auto start_at = [&](const std::vector<int64_t>& gaps) {
    int64_t t = kS;
    uint32_t conversation = 0;
    run.records.push_back(verdict_ok_record(t, conversation++));
    for (int64_t gap : gaps) {
      t += gap;
      run.records.push_back(verdict_ok_record(t, conversation++));
    }
  };

  SUBCASE("poisson arrivals at the rate pass") {
    start_at(gaps_from(std::exponential_distribution<double>(kRatePerS), 11, 500));
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kPass);
    CHECK(v.intended_rate_per_s == kRatePerS);
    CHECK(v.achieved_rate_per_s == doctest::Approx(kRatePerS).epsilon(0.1));
    CHECK(v.ks_statistic >= 0);
    CHECK(v.ks_p_value > 0.01);
  }
  SUBCASE("constant arrivals where poisson was configured warn") {
    start_at(std::vector<int64_t>(500, static_cast<int64_t>(1e9 / kRatePerS)));
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(v.ks_p_value < 0.01);
    CHECK(has_reason(v, "do not match the configured poisson process"));
  }
  SUBCASE("half the intended rate warns") {
    start_at(gaps_from(std::exponential_distribution<double>(kRatePerS / 2), 12, 500));
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(v.achieved_rate_per_s == doctest::Approx(kRatePerS / 2).epsilon(0.15));
    CHECK(has_reason(v, "conversations/s vs"));
  }
}

TEST_CASE("run verdict fails when no measured request succeeded") {
  VerdictRun run(0);
  for (uint32_t i = 0; i < 8; ++i) run.records.push_back(verdict_error_record(kS + i * kMs, i));
  const Verdict v = run.judge();
  CHECK(v.status == VerdictStatus::kFail);
  CHECK(has_reason(v, "no measured request succeeded: all 8 failed"));

  SUBCASE("one success among the failures is a warning, not a failure") {
    run.records.push_back(verdict_ok_record(2 * kS, 99));
    const Verdict w = run.judge();
    CHECK(w.status == VerdictStatus::kWarn);
    CHECK_FALSE(has_reason(w, "no measured request succeeded"));
  }
}

TEST_CASE("run verdict fails when an output file could not be written") {
  VerdictRun run;
  run.output_errors.push_back({"records.jsonl", "/out/records.jsonl",
                               "write: No space left on device", "230 of 600 records lost"});
  const Verdict v = run.judge();
  CHECK(v.status == VerdictStatus::kFail);
  CHECK(has_reason(v,
                   "cannot write records.jsonl (/out/records.jsonl): write: No space left on "
                   "device; 230 of 600 records lost"));
}

TEST_CASE("verdict statuses are written pass, warn and fail") {
  CHECK(std::string(to_string(VerdictStatus::kPass)) == "pass");
  CHECK(std::string(to_string(VerdictStatus::kWarn)) == "warn");
  CHECK(std::string(to_string(VerdictStatus::kFail)) == "fail");
  CHECK(Verdict{}.status == VerdictStatus::kPass);
}

TEST_CASE("run verdict fails when load.abort_on stopped the run") {
  VerdictRun run;
  run.facts.aborted_reason = "error rate 0.97 over the last 10 s (412 requests) >= 0.5";
  const Verdict v = run.judge();
  CHECK(v.status == VerdictStatus::kFail);
  CHECK(has_reason(v, "aborted by load.abort_on: error rate 0.97 over the last 10 s"));
  REQUIRE(v.aborted_reason.has_value());
  CHECK(*v.aborted_reason == *run.facts.aborted_reason);

  SUBCASE("a run the breaker left alone has no aborted reason") {
    VerdictRun clean;
    const Verdict c = clean.judge();
    CHECK(c.status == VerdictStatus::kPass);
    CHECK_FALSE(c.aborted_reason.has_value());
  }
}

TEST_CASE("run verdict of an interrupted capacity search claims nothing it never judged") {
  VerdictRun run;
  convoy::controller::SearchFacts search;
  search.config.low = 1;
  search.config.high = 64;
  search.steps = {convoy::controller::SearchStep{0, 1, true}};  // high's step never judged
  search.max_meeting_slo = 1;
  run.facts.search = search;
  SUBCASE("interrupted: no word of high") {
    const Verdict v = run.judge();
    CHECK_FALSE(has_reason(v, "still met the SLO"));
    CHECK(has_reason(v,
                     "capacity search interrupted after 1 judged step(s): the highest load "
                     "that met the SLO so far is 1.00"));
  }
  SUBCASE("interrupted before any step was judged") {
    run.facts.search->steps.clear();
    run.facts.search->max_meeting_slo.reset();
    const Verdict v = run.judge();
    CHECK_FALSE(has_reason(v, "missed the SLO"));
    CHECK(has_reason(v, "capacity search interrupted after 0 judged step(s): no step met"));
  }
  SUBCASE("complete, high judged and met: the capacity is higher") {
    run.facts.search->steps.push_back({1, 64, true});
    run.facts.search->max_meeting_slo = 64;
    run.facts.search->complete = true;
    const Verdict v = run.judge();
    CHECK(has_reason(v, "load.search.high (64.00) still met the SLO"));
  }
}

TEST_CASE("run verdict counts the requests intended in settle windows") {
  VerdictRun run;
  run.facts.settle_requests = 12;
  const Verdict v = run.judge();
  CHECK(v.settle_requests == 12);
  CHECK(v.status == VerdictStatus::kPass);  // a count, not a finding
  CHECK(v.reasons.empty());
}

TEST_CASE("run verdict of a load profile does not judge the whole run against one rate") {
  VerdictRun run(0);
  run.config.load.mode = LoadMode::kRate;
  run.config.load.rate = kRatePerS;
  run.config.load.arrival = Arrival::kPoisson;
  // Constant arrivals at half the rate: a single-level run warns twice on them.
  for (uint32_t i = 0; i < 300; ++i)
    run.records.push_back(verdict_ok_record(kS + i * 200 * kMs, i));
  SUBCASE("single level") {
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(v.ks_statistic >= 0);
  }
  SUBCASE("stages") {
    run.config.load.profile = convoy::ProfileKind::kStages;
    const Verdict v = run.judge();
    CHECK(v.status == VerdictStatus::kPass);
    CHECK(v.ks_statistic == -1);
    CHECK(v.intended_rate_per_s == 0);
  }
}

TEST_CASE("stage verdict judges a stage on its own requests") {
  using convoy::controller::judge_stage;
  using convoy::controller::StageFacts;
  auto stage_of = [](const std::vector<Record>& records) {
    StageFacts st;
    st.config.name = "s";
    MetricsAggregator agg{Config{}};
    for (const auto& r : records) agg.add(r);
    st.metrics = agg.snapshot();
    return st;
  };
  std::vector<Record> ok;
  for (uint32_t i = 0; i < 20; ++i) ok.push_back(verdict_ok_record(kS + i * 10 * kMs, i));

  SUBCASE("clean: pass") {
    const Verdict v = judge_stage(stage_of(ok));
    CHECK(v.status == VerdictStatus::kPass);
    CHECK(v.reasons.empty());
    CHECK_FALSE(v.slo_met.has_value());
  }
  SUBCASE("some errors: warn") {
    auto records = ok;
    records.push_back(verdict_error_record(2 * kS, 99));
    const Verdict v = judge_stage(stage_of(records));
    CHECK(v.status == VerdictStatus::kWarn);
    CHECK(has_reason(v, "1 request(s) failed (4.76%)"));
  }
  SUBCASE("nothing succeeded, or nothing completed: fail") {
    const Verdict all_failed =
        judge_stage(stage_of({verdict_error_record(kS, 1), verdict_error_record(kS, 2)}));
    CHECK(all_failed.status == VerdictStatus::kFail);
    CHECK(has_reason(all_failed, "all 2 failed"));
    const Verdict empty = judge_stage(stage_of({}));
    CHECK(empty.status == VerdictStatus::kFail);
    CHECK(has_reason(empty, "no measured request of this stage completed"));
  }
  SUBCASE("late sends: warn") {
    std::vector<Record> late;
    for (uint32_t i = 0; i < 20; ++i) late.push_back(verdict_ok_record(kS + i * 10 * kMs, i, 30));
    CHECK(judge_stage(stage_of(late)).status == VerdictStatus::kWarn);
  }
  SUBCASE("a missed SLO is carried beside the status, not in it") {
    StageFacts st = stage_of(ok);
    st.slo_met = false;
    st.slo_failures = {"time_to_first_token p99 812 ms > 500 ms"};
    const Verdict v = judge_stage(st);
    CHECK(v.status == VerdictStatus::kPass);
    REQUIRE(v.slo_met.has_value());
    CHECK_FALSE(*v.slo_met);
    CHECK(v.slo_failures == st.slo_failures);
  }
}
