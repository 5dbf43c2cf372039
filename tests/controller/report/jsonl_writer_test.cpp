// JsonlWriter: the one writer of the run's JSON Lines files (records.jsonl,
// profile_export.jsonl, server_metrics.jsonl) and its failure contract: the first failure kept,
// logged once, later lines dropped and counted, whole lines only, failure() names what is lost.
#include "controller/report/jsonl_writer.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_util.hpp"
#include "tmpfs_util.hpp"

namespace {

namespace fs = std::filesystem;
using convoy::controller::JsonlWriter;
using namespace convoy::test;

// Points stderr (where the log goes) at a file while it lives; text() reads what was logged.
class StderrCapture {
 public:
  explicit StderrCapture(fs::path path) : path_(std::move(path)), saved_(::dup(2)) {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  std::string text() {
    restore();
    return read_file(path_);
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  fs::path path_;
  int saved_;
};

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("JsonlWriter buffers lines up to its threshold, or writes each through with 0") {
  TempDir dir("convoy-jsonl-");
  const fs::path path = dir.path() / "out.jsonl";
  SUBCASE("buffered") {
    JsonlWriter w(path, "records", 64);
    w.write_line(R"({"a":1})");
    w.append_line([](rapidjson::StringBuffer& out) {
      for (char c : std::string(R"({"b":2})")) out.Put(c);
    });
    CHECK(read_file(path).empty());  // 16 bytes < 64: still buffered
    CHECK(w.written() == 0);
    w.flush();
    CHECK(read_file(path) == "{\"a\":1}\n{\"b\":2}\n");
    w.write_line(std::string(70, 'x'));  // reaches the threshold on its own: out at once
    CHECK(w.written() == 3);
    w.close();
    CHECK(w.lines() == 3);
    CHECK_FALSE(w.failure());
  }
  SUBCASE("write-through") {
    JsonlWriter w(path, "scrapes", 0);
    w.write_line(R"({"scrape":1})");
    CHECK(read_file(path) == "{\"scrape\":1}\n");
    w.append_line([](rapidjson::StringBuffer& out) { out.Put('2'); });
    CHECK(read_file(path) == "{\"scrape\":1}\n2\n");
    CHECK(w.written() == 2);
    w.close();
    w.write_line("after close");  // dropped, not counted
    CHECK(w.lines() == 2);
    CHECK(read_jsonl(path).size() == 2);
  }
}

TEST_CASE("JsonlWriter keeps the first write failure, logs it once and counts what is lost") {
  if (!fs::exists("/dev/full")) {
    MESSAGE("skipped: no /dev/full");
    return;
  }
  TempDir dir("convoy-jsonl-");
  for (const size_t flush_bytes : {size_t{0}, size_t{1024}}) {
    CAPTURE(flush_bytes);
    StderrCapture log(dir.path() / "stderr.txt");
    JsonlWriter w("/dev/full", "scrapes", flush_bytes);
    for (int i = 0; i < 3; ++i) w.write_line(R"({"scrape":0})");
    w.flush();
    REQUIRE(w.failed());
    CHECK(w.error() == "write: No space left on device");
    w.write_line(R"({"scrape":4})");  // dropped, counted
    w.flush();
    w.close();
    CHECK(w.lines() == 4);
    CHECK(w.written() == 0);
    const auto failure = w.failure();
    REQUIRE(failure.has_value());
    CHECK(failure->missing == "4 of 4 scrapes lost (0 written)");
    const std::string logged = log.text();
    CHECK(count_of(logged,
                   "cannot write full (/dev/full): write: No space left on device: "
                   "scrapes from here on are lost; the run goes on and will exit 3") == 1);
  }
}

TEST_CASE("JsonlWriter on a full disk leaves only whole lines, buffered or written through") {
  Tmpfs disk("jsonl-full", "16k");
  if (!disk.skipped().empty()) {
    MESSAGE("skipped: " << disk.skipped());
    return;
  }
  for (const size_t flush_bytes : {size_t{0}, size_t{4096}}) {
    CAPTURE(flush_bytes);
    const fs::path path = disk.path() / ("out-" + std::to_string(flush_bytes) + ".jsonl");
    JsonlWriter w(path, "scrapes", flush_bytes);
    const std::string line = "{\"v\":\"" + std::string(700, 'v') + "\"}";
    for (int i = 0; i < 40; ++i) w.write_line(line);
    w.close();
    REQUIRE(w.failed());
    CHECK(w.written() > 0);
    CHECK(w.written() < 40);
    CHECK(w.written() + w.lost() == 40);
    const std::string text = read_file(path);
    REQUIRE_FALSE(text.empty());
    CHECK(text.back() == '\n');
    CHECK(static_cast<int64_t>(read_jsonl(path).size()) == w.written());
    fs::remove(path);
  }
}

TEST_CASE("JsonlWriter whose file is removed during the run fails at close, naming the unit") {
  TempDir dir("convoy-jsonl-");
  const fs::path path = dir.path() / "server_metrics.jsonl";
  JsonlWriter w(path, "scrapes", 0);
  w.write_line("{}");
  w.write_line("{}");
  fs::remove(path);
  w.close();
  REQUIRE(w.failure().has_value());
  CHECK(w.failure()->file == "server_metrics.jsonl");
  CHECK(w.failure()->missing == "all 2 scrapes lost (2 were written to a file that is gone)");
}

TEST_CASE("JsonlWriter that cannot create its file names it and the OS error") {
  TempDir dir("convoy-jsonl-");
  const fs::path path = dir.path() / "missing" / "server_metrics.jsonl";
  CHECK(error_message<std::runtime_error>([&] { JsonlWriter w(path, "scrapes", 0); }) ==
        "cannot create server_metrics.jsonl (" + path.string() + "): No such file or directory");
}
