// `convoy profile` and the check before traffic, end to end: the real convoy against a
// convoy-mock started here (its request log counts what reached it) and tiny local servers that
// answer 401 or have no /v1/models; a mistyped subcommand; the help texts.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "e2e/tiny_http_server.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

struct ConvoyResult {
  int rc = -1;
  std::string output;
};

ConvoyResult run_convoy_cli(std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin(), bin("controller/convoy"));
  Subprocess p(args, std::move(env));
  const auto rc = p.wait(120);
  REQUIRE_MESSAGE(rc.has_value(), p.output());
  return {*rc, p.output()};
}

// A convoy-mock logging every request it receives (GET /v1/models excepted, by design).
struct LoggedMock {
  explicit LoggedMock(const fs::path& dir)
      : log(dir / "mock-requests.jsonl"),
        process({bin("mock/convoy-mock"), "--port", "0", "--speedup", "50", "--log-requests",
                 log.string()}),
        url(mock_url(process)) {}
  size_t logged() const { return fs::exists(log) ? read_jsonl(log).size() : 0; }
  fs::path log;
  Subprocess process;
  std::string url;  // http://127.0.0.1:PORT
};

// A short run's flags: single-turn, tiny prompts, two requests in flight.
std::vector<std::string> short_profile(const std::string& url, const fs::path& out,
                                       const std::string& requests) {
  return {"profile", "--url",   url,  "--requests", requests, "--concurrency",
          "2",       "--turns", "1",  "--isl",      "8",      "--osl",
          "4",       "-q",      "-o", out.string()};
}

std::string chat_completion_reply() {
  return TinyHttpServer::reply(
      "200 OK", "Content-Type: application/json\r\n",
      R"({"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,)"
      R"("message":{"role":"assistant","content":"one two three four"},"finish_reason":"length"}],)"
      R"("usage":{"prompt_tokens":8,"completion_tokens":4,"total_tokens":12}})");
}

}  // namespace

TEST_CASE("convoy profile: a url without a scheme, --model auto, and a report") {
  TempDir dir("e2e-profile");
  LoggedMock mock(dir.path());
  const std::string bare = mock.url.substr(std::string("http://").size());  // 127.0.0.1:PORT
  const fs::path out = dir.path() / "out";
  auto args = short_profile(bare, out, "6");
  args.insert(args.end(), {"--model", "auto"});
  const ConvoyResult r = run_convoy_cli(args);
  INFO(r.output);
  CHECK(r.rc == 0);
  CHECK(r.output.find("--model auto: mock-model") != std::string::npos);
  REQUIRE(fs::exists(out / "summary.json"));
  const auto summary = read_json(out / "summary.json");
  CHECK(summary["request_count"]["avg"].GetDouble() == 6);
  CHECK(summary["error_request_count"]["avg"].GetDouble() == 0);
  CHECK(mock.logged() == 6);  // the run's requests; the check's GET is not logged
}

TEST_CASE("convoy profile --print-config sends nothing, and convoy run runs what it prints") {
  TempDir dir("e2e-profile-print");
  LoggedMock mock(dir.path());
  auto args = short_profile(mock.url, dir.path() / "unused", "4");
  args.insert(args.end(), {"--model", "mock-model", "--print-config"});
  const ConvoyResult printed = run_convoy_cli(args);
  INFO(printed.output);
  REQUIRE(printed.rc == 0);
  CHECK(mock.logged() == 0);
  CHECK_FALSE(fs::exists(dir.path() / "unused"));
  const fs::path file = dir.path() / "printed.yaml";
  std::ofstream(file) << printed.output;
  const ConvoyResult run =
      run_convoy_cli({"run", file.string(), "-q", "-o", (dir.path() / "out").string()});
  INFO(run.output);
  CHECK(run.rc == 0);
  CHECK(read_json(dir.path() / "out" / "summary.json")["request_count"]["avg"].GetDouble() == 4);
}

TEST_CASE("the check before traffic: a model the server does not serve exits 2, nothing sent") {
  TempDir dir("e2e-preflight-model");
  LoggedMock mock(dir.path());
  auto args = short_profile(mock.url, dir.path() / "out", "4");
  args.insert(args.end(), {"--model", "mock-modle"});
  const ConvoyResult r = run_convoy_cli(args);
  INFO(r.output);
  CHECK(r.rc == 2);
  CHECK(r.output.find("target.model 'mock-modle' is not served") != std::string::npos);
  CHECK(r.output.find("it serves: mock-model") != std::string::npos);
  CHECK(r.output.find("Nothing was sent.") != std::string::npos);
  CHECK(mock.logged() == 0);
  CHECK_FALSE(fs::exists(dir.path() / "out"));

  SUBCASE("convoy validate --check-target says the same, and passes a served model") {
    const fs::path config = dir.path() / "c.yaml";
    std::ofstream(config) << "target: {url: \"" << mock.url << "\", model: mock-modle}\n";
    const ConvoyResult bad = run_convoy_cli({"validate", config.string(), "--check-target"});
    INFO(bad.output);
    CHECK(bad.rc == 2);
    CHECK(bad.output.find("it serves: mock-model") != std::string::npos);
    const ConvoyResult good = run_convoy_cli(
        {"validate", config.string(), "--check-target", "--set", "target.model=mock-model"});
    INFO(good.output);
    CHECK(good.rc == 0);
    CHECK(good.output.find("target: reachable") != std::string::npos);
    CHECK(mock.logged() == 0);
  }
}

TEST_CASE("the check before traffic: a url that already ends in the route exits 2 with the fix") {
  TempDir dir("e2e-preflight-path");
  LoggedMock mock(dir.path());
  auto args = short_profile(mock.url + "/v1/chat/completions", dir.path() / "out", "4");
  args.insert(args.end(), {"--model", "mock-model"});
  const ConvoyResult r = run_convoy_cli(args);
  INFO(r.output);
  CHECK(r.rc == 2);
  CHECK(r.output.find("already ends in /chat/completions") != std::string::npos);
  CHECK(r.output.find("Set target.url to the server's base url, " + mock.url) != std::string::npos);
  CHECK(mock.logged() == 0);
}

TEST_CASE("the check before traffic: a server answering 401 exits 2, no chat request sent") {
  TempDir dir("e2e-preflight-401");
  TinyHttpServer server([](const std::string&, int) {
    return TinyHttpServer::reply("401 Unauthorized", "Content-Type: application/json\r\n",
                                 R"({"error":{"message":"invalid api key"}})");
  });
  auto args = short_profile(server.url(), dir.path() / "out", "4");
  args.insert(args.end(), {"--model", "m", "--api-key-env", "CONVOY_PREFLIGHT_TEST_KEY"});
  const ConvoyResult r = run_convoy_cli(args);
  INFO(r.output);
  CHECK(r.rc == 2);
  CHECK(r.output.find("answered 401") != std::string::npos);
  CHECK(r.output.find("export CONVOY_PREFLIGHT_TEST_KEY=") != std::string::npos);
  CHECK(r.output.find("Nothing was sent.") != std::string::npos);
  CHECK(server.models_requests() == 1);
  CHECK(server.requests() == 0);  // no chat request
}

TEST_CASE("the check before traffic: a server without /v1/models is a warning, the run goes on") {
  TempDir dir("e2e-preflight-404");
  TinyHttpServer server([](const std::string& request, int) {
    if (request.rfind("GET ", 0) == 0) {
      return TinyHttpServer::reply("404 Not Found", "Content-Type: text/plain\r\n", "no");
    }
    return chat_completion_reply();
  });
  auto args = short_profile(server.url(), dir.path() / "out", "3");
  args.insert(args.end(), {"--model", "m", "--no-streaming"});
  *(std::find(args.begin(), args.end(), "--concurrency") + 1) = "1";  // one connection at a time
  const ConvoyResult r = run_convoy_cli(args);
  INFO(r.output);
  CHECK(r.rc == 0);
  CHECK(r.output.find("answered 404") != std::string::npos);
  CHECK(r.output.find("is not checked") != std::string::npos);
  CHECK(server.requests() == 3);
}

TEST_CASE("a mistyped subcommand says which one was meant, exit 2") {
  const ConvoyResult r = run_convoy_cli({"rnu", "x.yaml"});
  CHECK(r.rc == 2);
  CHECK(r.output.find("unknown command 'rnu': did you mean 'run'?") != std::string::npos);
  CHECK(run_convoy_cli({"profiel"}).output.find("did you mean 'profile'?") != std::string::npos);
}

TEST_CASE("convoy run --help and convoy profile --help: examples, exit codes, docs") {
  for (const char* command : {"run", "profile"}) {
    const ConvoyResult r = run_convoy_cli({command, "--help"});
    INFO(command, r.output);
    CHECK(r.rc == 0);
    CHECK(r.output.find("Examples:") != std::string::npos);
    CHECK(r.output.find("Exit codes: 0 ok") != std::string::npos);
    CHECK(r.output.find("docs/quickstart.md") != std::string::npos);
  }
}
