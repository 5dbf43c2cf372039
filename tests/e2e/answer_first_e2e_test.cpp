// End to end, answer first: a run whose every request fails leads its console report and its
// report.html with what was tested and the cause (the top insight with its fix), above any
// table, and the page draws no empty chart.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "e2e/tiny_http_server.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

TEST_CASE("a run that failed names its cause first, in the console and in report.html") {
  // GET /v1/models lists the configured model (a check before traffic passes); every request
  // then gets the 404 a server gives for a model it does not serve.
  TinyHttpServer server([](const std::string& request, int) {
    if (request.rfind("GET ", 0) == 0) {
      return TinyHttpServer::reply("200 OK", "Content-Type: application/json\r\n",
                                   R"({"object":"list","data":[{"id":"mock-model"}]})");
    }
    return TinyHttpServer::reply(
        "404 Not Found", "Content-Type: application/json\r\n",
        R"({"object":"error","message":"The model `mock-model` does not exist.",)"
        R"("type":"NotFoundError","code":404})");
  });
  const fs::path out = fresh_path("e2e-answer-first");
  Subprocess run(quickstart_run_argv(
      out, {"target.url=" + server.url(), "workers.local=1", "load.concurrency=2",
            "dataset.conversations=4", "session_routing.mode=off"}));
  const auto rc = run.wait(120);
  const std::string console = run.output();
  INFO(console);
  REQUIRE(rc.has_value());
  CHECK(*rc == 1);
  const size_t headline = console.find("convoy | quickstart: mock-model at " + server.url());
  const size_t cause = console.find("  cause:   Model not found");
  const size_t table = console.find("convoy | LLM metrics");
  REQUIRE(headline != std::string::npos);
  REQUIRE(cause != std::string::npos);
  CHECK(headline < cause);
  CHECK(cause < table);
  CHECK(console.find("  fix:     ") < table);
  CHECK(console.find("  result:  no request succeeded") < table);

  const std::string html = read_file(out / "report.html");
  const size_t box = html.find("id=\"cause\"");
  REQUIRE(box != std::string::npos);
  CHECK(box < html.find("</header>"));
  CHECK(html.find("Model not found") < html.find("<table"));
  CHECK(html.find("<svg") == std::string::npos);
  fs::remove_all(out);
}
