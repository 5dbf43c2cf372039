// The record pipeline: a batch put on the controller's clock and checked, each record's facts
// computed once into one RecordEvent, every output seeing it in order, one measured count.
#include <doctest/doctest.h>

#include "test_time.hpp"

#include <memory>
#include <string>
#include <vector>

#include "controller/report/report_records.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/run/record_pipeline.hpp"

using convoy::controller::RecordBounds;
using convoy::controller::RecordEvent;
using convoy::controller::RecordOutput;
using convoy::controller::RecordPipeline;
using convoy::controller::RecordRoute;
using convoy::controller::RunFacts;
namespace proto = convoy::proto;

namespace {

// What one output saw, in the order it saw it.
struct PipelineSeen {
  std::vector<std::string> calls;  // "begin:W", "record:RID", "flush", "close"
  std::vector<int64_t> sent_ns;
  std::vector<int64_t> ttft_ns;
  std::vector<bool> measured;
  std::vector<std::string> stages;
};

class RecordingOutput : public RecordOutput {
 public:
  RecordingOutput(PipelineSeen& seen, std::string name) : seen_(seen), name_(std::move(name)) {}
  void begin_batch(std::string_view worker_id) override {
    seen_.calls.push_back(name_ + " begin:" + std::string(worker_id));
  }
  void on_record(const RecordEvent& e) override {
    seen_.calls.push_back(name_ + " record:" + e.record.x_request_id);
    seen_.sent_ns.push_back(e.record.sent_ns);
    seen_.ttft_ns.push_back(e.metrics.ttft_ns.value_or(-1));
    seen_.measured.push_back(e.measured);
    seen_.stages.push_back(std::string(e.route.stage) + (e.route.settle ? "/settle" : ""));
  }
  void flush() override { seen_.calls.push_back(name_ + " flush"); }
  void close() override { seen_.calls.push_back(name_ + " close"); }
  std::optional<convoy::controller::OutputError> failure() const override {
    if (name_ != "broken") return std::nullopt;
    return convoy::controller::OutputError{"x.jsonl", "/tmp/x.jsonl", "write: disk full", "all"};
  }

 private:
  PipelineSeen& seen_;
  std::string name_;
};

RecordBounds pipeline_bounds() { return RecordBounds{0, 1000 * kS, 1}; }

}  // namespace

TEST_CASE("record pipeline: every record on the controller's clock, its metrics computed once") {
  RunFacts facts;
  RecordPipeline pipeline(facts);
  PipelineSeen seen;
  pipeline.add(std::make_unique<RecordingOutput>(seen, "a"));
  std::vector<proto::Record> batch{convoy::test::streamed_ok_record(10 * kS)};
  // The worker's clock runs 2 s ahead of the controller's: every timestamp moves back 2 s.
  CHECK(pipeline.on_batch("w1", "host-1", 2 * kS, batch, pipeline_bounds()) == 1);
  REQUIRE(seen.sent_ns.size() == 1);
  CHECK(seen.sent_ns[0] == 8 * kS + kMs);
  CHECK(batch[0].intended_ns == 8 * kS);
  CHECK(batch[0].end_ns == 8 * kS + 42 * kMs);
  CHECK(seen.ttft_ns[0] == 20 * kMs);  // first token 21 ms - sent 1 ms
  CHECK(seen.measured[0]);
  CHECK(pipeline.measured_requests() == 1);
}

TEST_CASE("record pipeline: outputs in the order added, one begin per batch, flush and close") {
  RunFacts facts;
  RecordPipeline pipeline(facts);
  PipelineSeen seen;
  RecordingOutput owned_elsewhere(seen, "b");
  pipeline.add(std::make_unique<RecordingOutput>(seen, "a"));
  pipeline.add(owned_elsewhere);
  std::vector<proto::Record> batch{convoy::test::streamed_ok_record(kS),
                                   convoy::test::streamed_ok_record(2 * kS)};
  pipeline.on_batch("w1", "h", 0, batch, pipeline_bounds());
  pipeline.flush();
  pipeline.close();
  const std::vector<std::string> expected{"a begin:w1",
                                          "b begin:w1",
                                          "a record:rid-1000000000",
                                          "b record:rid-1000000000",
                                          "a record:rid-2000000000",
                                          "b record:rid-2000000000",
                                          "a flush",
                                          "b flush",
                                          "a close",
                                          "b close"};
  CHECK(seen.calls == expected);
}

TEST_CASE("record pipeline: a malformed record is dropped, counted and seen by no output") {
  RunFacts facts;
  RecordPipeline pipeline(facts);
  PipelineSeen seen;
  pipeline.add(std::make_unique<RecordingOutput>(seen, "a"));
  std::vector<proto::Record> batch{convoy::test::streamed_ok_record(kS),
                                   convoy::test::streamed_ok_record(2 * kS)};
  batch[0].output_tokens = -3;
  CHECK(pipeline.on_batch("w1", "h", 0, batch, pipeline_bounds()) == 1);
  CHECK(facts.malformed_records == 1);
  CHECK(facts.malformed_example.find("output_tokens") != std::string::npos);
  REQUIRE(seen.sent_ns.size() == 1);
  CHECK(seen.sent_ns[0] == 2 * kS + kMs);
}

TEST_CASE("record pipeline: one measured count, without warmup and release-only requests") {
  RunFacts facts;
  RecordPipeline pipeline(facts);
  PipelineSeen seen;
  pipeline.add(std::make_unique<RecordingOutput>(seen, "a"));
  std::vector<proto::Record> batch(4, convoy::test::streamed_ok_record(kS));
  batch[1].phase = proto::Phase::kWarmup;
  batch[2].close_request = true;
  batch[3].early_release = true;
  pipeline.on_batch("w1", "h", 0, batch, pipeline_bounds());
  CHECK(pipeline.measured_requests() == 1);
  std::vector<proto::Record> more(3, convoy::test::streamed_ok_record(kS));
  pipeline.on_batch("w2", "h", 0, more, pipeline_bounds());
  CHECK(pipeline.measured_requests() == 4);
  CHECK(seen.measured == std::vector<bool>{true, false, false, false, true, true, true});
}

TEST_CASE("record pipeline: the router names each record's stage, and failures are collected") {
  RunFacts facts;
  RecordPipeline pipeline(facts);
  PipelineSeen seen;
  pipeline.add(std::make_unique<RecordingOutput>(seen, "a"));
  pipeline.add(std::make_unique<RecordingOutput>(seen, "broken"));
  pipeline.set_router([](const proto::Record& r) {
    RecordRoute route;
    route.stage_index = r.intended_ns < 2 * kS ? 0 : 1;
    route.stage = route.stage_index == 0 ? "base" : "spike";
    route.settle = r.intended_ns >= 3 * kS;
    return route;
  });
  std::vector<proto::Record> batch{convoy::test::streamed_ok_record(kS),
                                   convoy::test::streamed_ok_record(2 * kS),
                                   convoy::test::streamed_ok_record(3 * kS)};
  pipeline.on_batch("w1", "h", 0, batch, pipeline_bounds());
  CHECK(seen.stages ==
        std::vector<std::string>{"base", "base", "spike", "spike", "spike/settle", "spike/settle"});
  const auto failures = pipeline.failures();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].file == "x.jsonl");
}
