// dataset.type dynamo_trace on the files Dynamo's file sink really writes (seen from ai-dynamo
// 1.6.1 with DYN_REQUEST_TRACE=1, DYN_REQUEST_TRACE_SINKS=file): gzip-compressed JSONL
// (trace.000000.jsonl.gz, rolled into numbered segments), each record inside an envelope
// {"timestamp": ms, "event": {record}}. Bare records and plain files read as before.
#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "controller/dataset/dataset.hpp"
#include "controller/dataset/dynamo_trace.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace dynamo_trace_files_test {

std::string record(const std::string& id, int64_t received_ms, const std::string& session,
                   int64_t input, int64_t output) {
  return R"({"schema":"dynamo.request.trace.v1","event_type":"request_end",)"
         R"("event_time_unix_ms":)" +
         std::to_string(received_ms + 40) +
         R"(,"event_source":"dynamo","agent_context":{"session_id":")" + session +
         R"(","input_trigger":"user_message"},"request":{"request_id":")" + id +
         R"(","model":"Qwen/Qwen3-0.6B","input_tokens":)" + std::to_string(input) +
         R"(,"output_tokens":)" + std::to_string(output) + R"(,"request_received_ms":)" +
         std::to_string(received_ms) +
         R"(,"total_time_ms":40.5,"replay":{"trace_block_size":64,"input_length":)" +
         std::to_string(input) + R"(,"input_sequence_hashes":[18187379547334509549]}}})";
}

// The sink's envelope around a record.
std::string enveloped(int64_t timestamp, const std::string& record_text) {
  return R"({"timestamp":)" + std::to_string(timestamp) + R"(,"event":)" + record_text + "}\n";
}

void write_gzip(const std::filesystem::path& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, text.data(), static_cast<unsigned>(text.size())) ==
          static_cast<int>(text.size()));
  REQUIRE(gzclose(out) == Z_OK);
}

std::vector<proto::Conversation> open_all(const std::filesystem::path& path) {
  Config config;
  config.dataset.type = DatasetType::kDynamoTrace;
  config.dataset.path = path.string();
  const auto dataset = open_dataset(config);
  std::vector<proto::Conversation> all;
  for (uint64_t i = 0; i < dataset->size(); ++i) all.push_back(dataset->conversation(i));
  return all;
}

std::string open_error(const std::filesystem::path& path) {
  return test::error_message<ConfigError>([&] { open_all(path); });
}

const std::string kFirst = enveloped(11654, record("r1", 1'796'590'214'246, "agent-1", 11, 5)) +
                           enveloped(11722, record("r2", 1'796'590'214'316, "agent-2", 11, 5));
const std::string kSecond = enveloped(12001, record("r3", 1'796'590'214'500, "agent-1", 30, 5));

}  // namespace dynamo_trace_files_test

using namespace dynamo_trace_files_test;

TEST_CASE("dynamo_trace reads the file sink's gzip segments and envelopes as they are written") {
  const auto dir = test::fresh_dir("dynamo-trace-files");
  SUBCASE("one gzip-compressed segment") {
    write_gzip(dir / "trace.000000.jsonl.gz", kFirst + kSecond);
    const auto all = open_all(dir / "trace.000000.jsonl.gz");
    REQUIRE(all.size() == 2);
    CHECK(all[0].conversation_id == "agent-1");
    REQUIRE(all[0].turns.size() == 2);
    CHECK(all[0].turns[1].input_tokens_est == 14);  // 30 - 11 - 5: the new input
    CHECK(all[1].conversation_id == "agent-2");
  }
  SUBCASE("a folder of rolled segments, in name order, compressed or not") {
    write_gzip(dir / "trace.000000.jsonl.gz", kFirst);
    std::ofstream(dir / "trace.000001.jsonl") << kSecond;
    std::ofstream(dir / "notes.txt") << "not a segment";
    const auto all = open_all(dir);
    REQUIRE(all.size() == 2);
    CHECK(all[0].turns.size() == 2);
  }
  SUBCASE("bare records in a plain file read the same") {
    std::ofstream(dir / "bare.jsonl") << record("r1", 1'796'590'214'246, "agent-1", 11, 5) << "\n"
                                      << record("r3", 1'796'590'214'500, "agent-1", 30, 5) << "\n";
    const auto all = open_all(dir / "bare.jsonl");
    REQUIRE(all.size() == 1);
    CHECK(all[0].turns[1].input_tokens_est == 14);
  }
}

TEST_CASE("dynamo_trace errors in a folder of segments name the segment and its own line") {
  const auto dir = test::fresh_dir("dynamo-trace-files-bad");
  write_gzip(dir / "trace.000000.jsonl.gz", kFirst);
  std::ofstream(dir / "trace.000001.jsonl")
      << kSecond << R"({"timestamp":1,"event":{"schema":"v0","event_type":"request_end"}})"
      << "\n";
  CHECK(open_error(dir) == (dir / "trace.000001.jsonl").string() +
                               ":2: schema: \"v0\": expected \"dynamo.request.trace.v1\" (a "
                               "Dynamo request trace record)");
  std::ofstream(dir / "trace.000001.jsonl") << R"({"timestamp":1,"event":[1]})"
                                            << "\n";
  CHECK(open_error(dir) == (dir / "trace.000001.jsonl").string() +
                               ":1: event: expected an object (the record inside the file sink's "
                               "envelope)");
  SUBCASE("corrupt gzip data, and a folder without segments") {
    const std::string gz = kFirst;
    std::string bytes;
    {
      write_gzip(dir / "whole.gz", gz);
      std::ifstream in(dir / "whole.gz", std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::ofstream(dir / "cut.jsonl.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    CHECK(open_error(dir / "cut.jsonl.gz")
              .find((dir / "cut.jsonl.gz").string() + ": cannot read the gzip data") == 0);
    const auto empty = test::fresh_dir("dynamo-trace-files-empty");
    CHECK(open_error(empty) == empty.string() +
                                   ": dataset.path is a folder without *.jsonl or *.jsonl.gz "
                                   "files");
  }
}

}  // namespace convoy::controller
