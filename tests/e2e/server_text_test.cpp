// End to end against a tiny local server that says what no good server would: bytes that are
// not UTF-8 in error bodies and streams, or an error for every request.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "e2e/tiny_http_server.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string sse(const std::vector<std::string>& events) {
  std::string body;
  for (const auto& e : events) body += e + "\n\n";
  return TinyHttpServer::reply("200 OK", "Content-Type: text/event-stream\r\n", body);
}

std::string bad_bytes_kind(int index);

// An early release (bind close with max_tokens 1 for a conversation a failure cut short).
bool is_early_release(const std::string& request) {
  return request.find("\"close\"") != std::string::npos &&
         (request.find("\"max_tokens\":1,") != std::string::npos ||
          request.find("\"max_tokens\":1}") != std::string::npos);
}

// Each conversation turn gets the next of these in turn: every place a server's text reaches a
// record. Early releases (which the failures here cause) get the success reply and do not take
// a place in the rotation, so every kind still reaches a turn's record.
std::string bad_bytes_reply(const std::string& request, int /*index*/) {
  static int turns = 0;  // the server answers one request at a time
  if (is_early_release(request)) return bad_bytes_kind(5);
  return bad_bytes_kind(turns++);
}

std::string bad_bytes_kind(int index) {
  switch (index % 6) {
    case 0:  // a plain-text error body, quoted as the message
      return TinyHttpServer::reply("400 Bad Request", "Content-Type: text/plain\r\n",
                                   "bad \xFF\xFE request \xE2\x82");
    case 1:  // a JSON error whose strings hold a lone lead byte and a truncated emoji
      return TinyHttpServer::reply("500 Internal Server Error",
                                   "Content-Type: application/json\r\n",
                                   R"({"error":{"message":"engine )"
                                   "\xC3"
                                   R"( failed )"
                                   "\xF0\x9F"
                                   R"(","type":"bad)"
                                   "\xFF"
                                   R"(type","code":500}})");
    case 2:  // an SSE event that is not JSON, quoted in the message
      return sse({"data: {\"choices\":[{\"delta\":{\"content\":\"ok \xFF\"}}]}",
                  "data: {\xFE oops \xC0\xAF"});
    case 3:  // an SSE error event with a surrogate in its message
      return sse({"event: error\ndata: {\"error\":{\"message\":\"stream \xED\xA0\x80 broke\"}}"});
    case 4:  // a header value that is not UTF-8, then an error
      return TinyHttpServer::reply("503 Service Unavailable",
                                   "Content-Type: text/plain\r\nX-Odd: \xFF\xFE\r\n",
                                   "overloaded \x80\x80");
    default:  // a success whose content holds invalid bytes
      return sse({"data: {\"choices\":[{\"delta\":{\"content\":\"hi \xFF\xFE there\"}}]}",
                  "data: {\"choices\":[{\"delta\":{\"content\":\" more\"}}],\"usage\":"
                  "{\"prompt_tokens\":10,\"completion_tokens\":2}}",
                  "data: [DONE]"});
  }
}

std::vector<std::string> text_run_args(const fs::path& out, const std::string& url,
                                       std::vector<std::string> extra) {
  std::vector<std::string> argv =
      quickstart_run_argv(out, {"target.url=" + url, "workers.local=1", "load.concurrency=2"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// Parsed as UTF-8 JSON with rapidjson checking the encoding; names the failure.
std::string json_error(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(text.c_str(), text.size());
  if (!doc.HasParseError()) return "";
  return "parse error " + std::to_string(doc.GetParseError()) + " at byte " +
         std::to_string(doc.GetErrorOffset());
}

// Any text checked for UTF-8 by rapidjson: written raw into a JSON string, parsed back.
bool valid_utf8_text(const std::string& text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
  return json_error(std::string(buffer.GetString(), buffer.GetSize())).empty();
}

}  // namespace

TEST_CASE("bytes a server sends that are not UTF-8 leave every output file valid UTF-8") {
  TinyHttpServer server(bad_bytes_reply);
  const fs::path out = fresh_path("e2e-badbytes");
  Subprocess run(text_run_args(out, server.url(), {"--set", "dataset.conversations=12"}));
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK((*rc == 0 || *rc == 1));  // completed; the errors are results
  CHECK(server.requests() >= 6);  // every kind of reply was sent at least once

  const std::string summary = read_file(out / "summary.json");
  CHECK_MESSAGE(json_error(summary).empty(), json_error(summary));
  // The server's messages are there, with U+FFFD where its bytes were.
  CHECK(summary.find("bad " + kFffd + kFffd + " request " + kFffd) != std::string::npos);
  CHECK(summary.find("stream " + kFffd + kFffd + kFffd + " broke") != std::string::npos);

  std::ifstream records(out / "records.jsonl");
  int lines = 0, replaced = 0;
  for (std::string line; std::getline(records, line); ++lines) {
    CHECK_MESSAGE(json_error(line).empty(), "records.jsonl line ", lines + 1, ": ",
                  json_error(line));
    if (line.find(kFffd) != std::string::npos) ++replaced;
  }
  CHECK(lines == server.requests());
  CHECK(replaced >= 5);  // each error kind carried server text with bad bytes
  CHECK(valid_utf8_text(read_file(out / "report.html")));
  CHECK(valid_utf8_text(read_file(out / "summary.csv")));
  CHECK_FALSE(valid_utf8_text("\xFF"));  // the check can fail
  fs::remove_all(out);
}

TEST_CASE("a run in which every request got HTTP 400 fails with exit 1") {
  TinyHttpServer server([](const std::string&, int) {
    return TinyHttpServer::reply(
        "400 Bad Request", "Content-Type: application/json\r\n",
        R"({"error":{"message":"bad request","type":"invalid_request_error","code":400}})");
  });
  const fs::path out = fresh_path("e2e-all400");
  Subprocess run(text_run_args(out, server.url(), {"--set", "dataset.conversations=6"}));
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 1);
  CHECK(run.output().find("Verdict: fail") != std::string::npos);
  CHECK(run.output().find("no measured request succeeded") != std::string::npos);
  const auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(std::string(summary["verdict"]["status"].GetString()) == "fail");
  CHECK(summary["request_count"]["avg"].GetDouble() == 0);
  CHECK(summary["error_request_count"]["avg"].GetDouble() == server.requests());
  fs::remove_all(out);
}
