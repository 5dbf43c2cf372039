#include "mock/server.hpp"

#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "mock/engine.hpp"
#include "mock/http_session.hpp"

namespace convoy::mock {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

namespace {

// Thousands of open streams need thousands of descriptors: lift the soft limit to the hard one.
void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

std::unique_ptr<RequestLog> open_log(const Options& options) {
  if (options.log_requests_path.empty()) return nullptr;
  return std::make_unique<RequestLog>(options.log_requests_path);
}

}  // namespace

struct Server::Impl {
  explicit Impl(Options opts)
      : options(std::move(opts)),
        engine(options),
        log(open_log(options)),
        context{options, engine, log.get(),
                std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count()},
        ioc(options.threads),
        acceptor(ioc),
        accept_retry(ioc),
        reaper(ioc) {}

  void accept() {
    // One executor per connection when several threads run the loop; none needed otherwise.
    auto executor = options.threads > 1 ? net::any_io_executor(net::make_strand(ioc))
                                        : net::any_io_executor(ioc.get_executor());
    acceptor.async_accept(executor, [this](error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (ec) {
        // Out of descriptors, most likely: back off briefly rather than spin.
        log_warn("convoy-mock: accept failed: ", ec.message());
        accept_retry.expires_after(std::chrono::milliseconds(50));
        accept_retry.async_wait([this](error_code wait_ec) {
          if (!wait_ec) accept();
        });
        return;
      }
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      start_http_session(std::move(socket), context);
      accept();
    });
  }

  void reap() {
    reaper.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double, std::milli>(options.reaper_period_ms)));
    reaper.async_wait([this](error_code ec) {
      if (ec) return;
      engine.reap(Clock::now());
      reap();
    });
  }

  const Options options;
  Engine engine;
  std::unique_ptr<RequestLog> log;
  ServerContext context;
  net::io_context ioc;
  tcp::acceptor acceptor;
  net::steady_timer accept_retry;
  net::steady_timer reaper;
  std::vector<std::thread> threads;
  uint16_t port = 0;
  bool started = false;
  bool stopped = false;
};

Server::Server(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() { stop(); }

uint16_t Server::start() {
  Impl& s = *impl_;
  if (s.started) return s.port;
  raise_fd_limit();
  error_code ec;
  const auto address = net::ip::make_address(s.options.host, ec);
  if (ec)
    throw std::runtime_error("convoy-mock: bad --host " + s.options.host + ": " + ec.message());
  const tcp::endpoint endpoint(address, s.options.port);
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error("convoy-mock: cannot listen on " + s.options.host + ":" +
                             std::to_string(s.options.port) + ": " + ec.message());
  }
  s.port = s.acceptor.local_endpoint().port();
  s.started = true;
  s.accept();
  s.reap();
  for (int i = 0; i < s.options.threads; ++i) {
    s.threads.emplace_back([&s] { s.ioc.run(); });
  }
  return s.port;
}

void Server::stop() {
  Impl& s = *impl_;
  if (!s.started || s.stopped) return;
  s.stopped = true;
  net::post(s.ioc, [&s] {
    error_code ignored;
    s.acceptor.close(ignored);
    s.accept_retry.cancel();
    s.reaper.cancel();
  });
  s.engine.shutdown();
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
}

uint16_t Server::port() const { return impl_->port; }
const Options& Server::options() const { return impl_->options; }
Engine& Server::engine() { return impl_->engine; }

}  // namespace convoy::mock
