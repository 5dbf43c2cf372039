// convoy run against a real nginx (Debian's nginx-light) on loopback: the API key read from the
// worker's environment, HTTP/2 with prior knowledge and over TLS, TLS verification on by
// default and target.insecure. nginx logs each request's port, protocol, TLS and Authorization
// header, so every check looks at what the server received.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using convoy::test::bin;
using convoy::test::LoopbackSocket;
using convoy::test::read_file;
using convoy::test::read_json;
using convoy::test::read_jsonl;
using convoy::test::Subprocess;
using convoy::test::TempDir;

namespace {

constexpr const char* kNginx = "/usr/sbin/nginx";
constexpr const char* kOpenssl = "/usr/bin/openssl";
constexpr const char* kKey = "sk-convoy-test";

// One chat completion chunk and [DONE], escaped for an nginx double-quoted string.
constexpr const char* kSseBody =
    R"(data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",)"
    R"(\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n)"
    R"(data: [DONE]\n\n)";

// nginx as a child that stops cleanly: on SIGTERM the master stops its worker and exits (the
// SIGKILL of Subprocess's destructor would orphan the worker, which holds the sockets).
class NginxProcess {
 public:
  NginxProcess(std::vector<std::string> argv, std::vector<std::string> env)
      : process_(std::move(argv), std::move(env)) {}
  ~NginxProcess() {
    process_.signal(SIGTERM);
    process_.wait(10);
  }
  NginxProcess(const NginxProcess&) = delete;
  NginxProcess& operator=(const NginxProcess&) = delete;
  Subprocess& process() { return process_; }

 private:
  Subprocess process_;
};

// nginx with three listeners: HTTP/1.1, HTTP/2 with prior knowledge (h2c), and TLS with a
// fresh self-signed certificate (ALPN h2 or http/1.1). Paths under /keyed/ answer 401 in
// OpenAI's error shape unless the request carries "Authorization: Bearer sk-convoy-test".
class Nginx {
 public:
  explicit Nginx(const fs::path& dir) : dir_(dir) {
    REQUIRE_MESSAGE(fs::exists(kNginx), "nginx is missing: scripts/setup installs nginx-light");
    REQUIRE_MESSAGE(fs::exists(kOpenssl), "openssl is missing: scripts/setup installs it");
    Subprocess cert({kOpenssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                     "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                     (dir / "key.pem").string(), "-out", (dir / "cert.pem").string(), "-days", "2",
                     "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"});
    const auto cert_rc = cert.wait(30);
    INFO(cert.output());
    REQUIRE(cert_rc == 0);

    // The test binds the three listeners on ports the kernel picks and nginx inherits them
    // through its NGINX variable (the hand-over of its binary upgrade), so no port is chosen,
    // closed and hoped free. Inheriting needs master mode: nginx 1.22 crashes inheriting
    // sockets with master_process off.
    LoopbackSocket http1(LoopbackSocket::Mode::kListening);
    LoopbackSocket h2c(LoopbackSocket::Mode::kListening);
    LoopbackSocket tls(LoopbackSocket::Mode::kListening);
    http1_ = http1.port();
    h2c_ = h2c.port();
    tls_ = tls.port();
    const std::string d = dir.string();
    std::ostringstream conf;
    conf << "daemon off;\nmaster_process on;\nworker_processes 1;\n"
         << "pid " << d << "/nginx.pid;\nerror_log " << d << "/error.log;\n"
         << "events { worker_connections 256; }\nhttp {\n"
         << "  log_format proto '$server_port $server_protocol \"$https\" "
            "\"$http_authorization\"';\n"
         << "  access_log " << d << "/access.log proto;\n"
         << "  log_format ids '$http_x_request_id $http_x_correlation_id $http_x_team';\n"
         << "  access_log " << d << "/ids.log ids;\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
      conf << "  " << temp << "_temp_path " << d << "/" << temp << ";\n";
    }
    conf
        << "  server {\n"
        << "    listen 127.0.0.1:" << http1_ << ";\n"
        << "    listen 127.0.0.1:" << h2c_ << " http2;\n"
        << "    listen 127.0.0.1:" << tls_ << " ssl http2;\n"
        << "    ssl_certificate " << d << "/cert.pem;\n"
        << "    ssl_certificate_key " << d << "/key.pem;\n"
        << "    location /keyed/ {\n"
        << "      if ($http_authorization != \"Bearer " << kKey << "\") {\n"
        << "        return 401 '{\"error\":{\"message\":\"invalid api key\",\"type\":\"auth\"}}';\n"
        << "      }\n"
        // Proxied, so nginx reads the whole request body before it answers. A `return` here
        // answers on the request's headers; over HTTP/2 nginx then resets the half-sent
        // stream (RST_STREAM), and libcurl 7.88 reports "Stream error in the HTTP/N framing
        // layer" when the reset overtakes the reply (2 runs in 12 under ASan). Real servers
        // read the body first.
        << "      proxy_pass http://127.0.0.1:" << http1_ << "/sse-body;\n"
        << "    }\n"
        << "    location /sse-body {\n"  // proxy_pass appends the rest of the path
        << "      access_log off;\n"
        << "      default_type text/event-stream;\n"
        << "      return 200 \"" << kSseBody << "\";\n"
        << "    }\n"
        << "  }\n}\n";
    std::ofstream(dir / "nginx.conf") << conf.str();
    std::string inherited = "NGINX=";
    for (const LoopbackSocket* socket : {&http1, &h2c, &tls}) {
      REQUIRE(::fcntl(socket->fd(), F_SETFD, 0) == 0);  // kept across nginx's exec
      inherited += std::to_string(socket->fd()) + ";";
    }
    server_ = std::make_unique<NginxProcess>(
        std::vector<std::string>{kNginx, "-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"},
        std::vector<std::string>{inherited});
    for (LoopbackSocket* socket : {&http1, &h2c, &tls}) socket->close();  // nginx holds them now
    // The sockets already listen, so connections wait in their backlog until nginx accepts;
    // nginx writes its pid file once it has taken them over. It exits at once on a bad config.
    bool up = false;
    bool exited = false;
    for (int i = 0; i < 200 && !up && !exited; ++i) {
      up = fs::exists(dir / "nginx.pid");
      if (!up) exited = server_->process().wait(0.05).has_value();
    }
    INFO(server_->process().output());
    INFO(read_file(dir / "error.log"));
    REQUIRE(up);
  }

  std::string url(int port, const char* scheme = "http") const {
    return std::string(scheme) + "://127.0.0.1:" + std::to_string(port) + "/keyed";
  }
  int http1() const { return http1_; }
  int h2c() const { return h2c_; }
  int tls() const { return tls_; }

  // Access log lines since the last call, counted.
  std::map<std::string, int> take_log() {
    std::map<std::string, int> lines;
    std::istringstream in(read_file(dir_ / "access.log"));
    std::string line;
    int i = 0;
    for (; std::getline(in, line); ++i) {
      if (i >= seen_) ++lines[line];
    }
    seen_ = i;
    return lines;
  }

 private:
  fs::path dir_;
  int http1_ = 0;
  int h2c_ = 0;
  int tls_ = 0;
  int seen_ = 0;
  std::unique_ptr<NginxProcess> server_;
};

struct NginxRun {
  int rc = -1;
  std::string output;
  double requests = 0;
  double errors = 0;
  std::map<std::string, int> error_types;  // error_summary's type -> count
};

NginxRun convoy_run(const fs::path& dir, const std::string& name, const std::string& url,
                    std::vector<std::string> sets, std::vector<std::string> env) {
  const fs::path config = dir / "run.yaml";
  std::ofstream(config) << "name: nginx-target\n"
                           "target:\n"
                           "  url: "
                        << url
                        << "\n"
                           "  api_key_env: CONVOY_TEST_KEY\n"
                           "  headers: {X-Team: convoy}\n"
                           "  use_server_token_counts: false\n"
                           "dataset:\n"
                           "  type: synthetic\n"
                           "  conversations: 8\n"
                           "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
                           "  input_tokens: {mean: 8, stddev: 0}\n"
                           "  output_tokens: {mean: 4, stddev: 0}\n"
                           "load:\n"
                           "  mode: concurrency\n"
                           "  concurrency: 2\n"
                           "workers:\n"
                           "  local: 1\n"
                           "output:\n"
                           "  html: false\n";
  const fs::path out = dir / name;
  std::vector<std::string> argv = {
      bin("controller/convoy"), "run", config.string(), "-o", out.string(), "--quiet"};
  for (auto& s : sets) {
    argv.push_back("--set");
    argv.push_back(std::move(s));
  }
  Subprocess run(argv, std::move(env));
  NginxRun r;
  const auto rc = run.wait(120);
  r.output = run.output();
  REQUIRE_MESSAGE(rc.has_value(), r.output);
  r.rc = *rc;
  if (r.rc == 2) return r;  // refused before any traffic: no outputs
  REQUIRE_MESSAGE(fs::exists(out / "summary.json"), r.output);
  const auto summary = read_json(out / "summary.json");
  r.requests = summary["request_count"]["avg"].GetDouble();
  r.errors = summary["error_request_count"]["avg"].GetDouble();
  for (const auto& e : summary["error_summary"].GetArray()) {
    r.error_types[e["error_details"]["type"].GetString()] += e["count"].GetInt();
  }
  return r;
}

std::string key_env() { return std::string("CONVOY_TEST_KEY=") + kKey; }

}  // namespace

TEST_CASE("against nginx: API key, HTTP/2 and TLS are what the server receives") {
  ::unsetenv("CONVOY_TEST_KEY");  // only the runs that set it have it
  TempDir dir("e2e-nginx");
  Nginx nginx(dir.path());
  const std::string http1_line = std::to_string(nginx.http1()) + " HTTP/1.1 \"\" ";

  SUBCASE("the key comes from the environment variable target.api_key_env names") {
    NginxRun with = convoy_run(dir.path(), "with-key", nginx.url(nginx.http1()), {}, {key_env()});
    INFO(with.output);
    CHECK(with.rc == 0);
    CHECK(with.requests == 8);
    CHECK(with.errors == 0);
    // The 8 requests and the check before traffic (GET /keyed/v1/models), all with the key.
    CHECK(nginx.take_log() ==
          std::map<std::string, int>{{http1_line + "\"Bearer " + kKey + "\"", 9}});

    // Every request carries its X-Request-ID and X-Correlation-ID (the ones its record names)
    // and target.headers.
    std::set<std::string> sent;
    std::istringstream ids(read_file(dir.path() / "ids.log"));
    for (std::string id, correlation, team; ids >> id >> correlation >> team;) {
      CHECK(team == "convoy");
      if (id == "-") continue;  // the check before traffic (GET /v1/models) has no request id
      sent.insert(id + " " + correlation);
    }
    std::set<std::string> recorded;
    for (const auto& r : read_jsonl(dir.path() / "with-key" / "records.jsonl")) {
      recorded.insert(std::string(r["x_request_id"].GetString()) + " " +
                      r["x_correlation_id"].GetString());
    }
    CHECK(recorded.size() == 8);
    CHECK(sent == recorded);

    NginxRun without = convoy_run(dir.path(), "without-key", nginx.url(nginx.http1()), {}, {});
    INFO(without.output);
    // The check before traffic gets the 401 and stops the run: exit 2, the variable named,
    // only its GET reached the server.
    CHECK(without.rc == 2);
    CHECK(without.output.find("CONVOY_TEST_KEY") != std::string::npos);
    CHECK(without.output.find("Nothing was sent.") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path() / "without-key" / "summary.json"));
    CHECK(nginx.take_log() == std::map<std::string, int>{{http1_line + "\"-\"", 1}});
  }

  SUBCASE("target.http2 over http:// speaks HTTP/2 with prior knowledge") {
    NginxRun r =
        convoy_run(dir.path(), "h2c", nginx.url(nginx.h2c()), {"target.http2=true"}, {key_env()});
    INFO(r.output);
    CHECK(r.rc == 0);
    CHECK(r.requests == 8);
    CHECK(r.errors == 0);
    const std::string line = std::to_string(nginx.h2c()) + " HTTP/2.0 \"\" \"Bearer " + kKey + "\"";
    CHECK(nginx.take_log() == std::map<std::string, int>{{line, 9}});  // 8 and GET /v1/models
  }

  SUBCASE("TLS is verified by default: a self-signed server is a tls error, nothing is sent") {
    NginxRun r =
        convoy_run(dir.path(), "tls-verify", nginx.url(nginx.tls(), "https"), {}, {key_env()});
    INFO(r.output);
    CHECK(r.requests == 0);
    CHECK(r.errors == 8);
    CHECK(r.error_types == std::map<std::string, int>{{"tls", 8}});
    CHECK(r.output.find("self-signed") != std::string::npos);
    CHECK(nginx.take_log().empty());
  }

  SUBCASE("target.insecure skips verification, with a warning; http2 negotiates h2 by ALPN") {
    NginxRun r = convoy_run(dir.path(), "tls-insecure", nginx.url(nginx.tls(), "https"),
                            {"target.insecure=true", "target.http2=true"}, {key_env()});
    INFO(r.output);
    CHECK(r.rc == 0);
    CHECK(r.requests == 8);
    CHECK(r.errors == 0);
    CHECK(r.output.find("TLS certificate verification is OFF") != std::string::npos);
    const std::string line =
        std::to_string(nginx.tls()) + " HTTP/2.0 \"on\" \"Bearer " + kKey + "\"";
    CHECK(nginx.take_log() == std::map<std::string, int>{{line, 9}});  // 8 and GET /v1/models
  }
}
