// Private to run.cpp and run_messages.cpp: the Run that run_benchmark() drives. Setup, the
// loop, the phase machine's actions, assignment and loss live in run.cpp; the handling of each
// worker message in run_messages.cpp.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "controller/dataset/dataset.hpp"
#include "controller/live/live_metrics.hpp"
#include "controller/report/aiperf_export.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/run/capacity_search.hpp"
#include "controller/run/circuit_breaker.hpp"
#include "controller/run/in_flight.hpp"
#include "controller/run/local_processes.hpp"
#include "controller/run/progress.hpp"
#include "controller/run/record_check.hpp"
#include "controller/run/registry.hpp"
#include "controller/run/run.hpp"
#include "controller/run/run_phase_machine.hpp"
#include "controller/run/run_sockets.hpp"
#include "controller/run/schedule.hpp"
#include "controller/run/sharding.hpp"
#include "controller/run/stage_plan.hpp"
#include "controller/telemetry/telemetry.hpp"

namespace convoy::controller {

// What the workers are told in their Welcome (run.cpp).
proto::WorkerSettings worker_settings(const Config& c, const std::string& url);
// Window conversations per worker for `phase` (warmup or measure) of `load` on `workers`
// workers (run_window.cpp); 0 where the controller must start every conversation itself.
size_t refill_window(const LoadConfig& load, size_t workers, proto::Phase phase);

class Run {
 public:
  Run(const RunOptions& options, const RunSeams& seams);

  int execute();

 private:
  // An Assign batch is split before it would outgrow half the wire's message limit.
  static constexpr uint64_t kAssignBatchBytes = proto::kMaxMessageBytes / 2;

  int64_t now() const { return clock_(); }
  void loop();
  void poll(int64_t timeout_ns);

  // The phase machine: every phase change goes through raise() or advance(), and apply()
  // carries out what the machine answers.
  void raise(RunEvent event, int64_t now);
  void apply(const RunStep& step, int64_t now);
  void on_signals(int64_t now);
  void on_starting(int64_t now);
  void schedule(int64_t now);
  void dispatch(int64_t now);
  void start_warmup(int64_t now);
  void start_measure(int64_t now);
  void broadcast_stop(bool cancel);
  // Load profiles (issue 16): stages, sweeps and a capacity search run inside the measure.
  void start_profile(int64_t now);
  void advance_profile(int64_t now);
  void on_stage_events(const std::vector<StageEvent>& events, int64_t now);
  std::optional<StageConfig> next_search_step(int finished);
  // Routes a measured record to its stage by its intended time; false: a settle record (in no
  // metric). Sets `stage`/`settle_stage` to the name records.jsonl gets.
  bool route_record(const proto::Record& r, std::string_view& stage, bool& settle);
  // "" when stage `stage`'s console line, printed as it settles, is its final table; else why
  // not ("; provisional: ...").
  std::string provisional_note(size_t stage) const;
  void check_breaker(int64_t now);
  bool workers_finished();

  // Messages (run_messages.cpp).
  void on_control(const std::string& worker_id, zmq::message_t& payload);
  void on_hello(const std::string& worker_id, proto::Hello& hello, uint32_t version, int64_t now);
  void on_pong(const std::string& worker_id, const proto::Pong& pong, int64_t now);
  void refuse_worker(const std::string& worker_id, const Refusal& why);
  void on_result(zmq::message_t& payload);
  void on_records(const std::string& worker_id, std::vector<proto::Record>& records);
  void on_end(const std::string& worker_id, const proto::ConversationEnd& end);
  // A record that failed record_problem(): counted (run.malformed_records), logged in moderation.
  void drop_malformed(const std::string& worker_id, const proto::Record& r, const std::string& why);
  // Window conversations a worker gave back unstarted (Results.returned).
  void on_returned(const std::string& worker_id, const std::vector<uint64_t>& returned);
  // Results and Bye: the named worker, when the message carries its token; else counted.
  WorkerInfo* authentic(const std::string& worker_id, const std::string& token, const char* what);
  // A conversation its worker could not run (its assignment did not decode): ended, counted.
  void on_failed(const std::string& worker_id, uint64_t index, const std::string& error);
  void on_undecodable(const std::string& worker_id, const proto::UndecodableAssign& u);
  void tick(int64_t now);
  void on_worker_lost(const std::string& worker_id, int64_t now);
  void assign(uint64_t seq, int64_t intended_ns, proto::Phase phase, bool window = false);
  // Concurrency refill (issue 19, run_window.cpp): slots that came back here go to the oldest
  // window conversations first; then every worker's window is topped up.
  void start_windows(int64_t now);
  void top_up_windows(proto::Phase phase);
  void send_assign(const std::string& worker, proto::Assign& msg);
  void incomplete(const std::string& reason);

  template <class T>
  void send_to(const std::string& worker_id, const T& msg) {
    sockets_->send(worker_id, msg);
  }

  bool start_telemetry();  // false: a required endpoint is down (exit 3, nothing sent)
  // output.metrics_listen (controller/live/): bound before anything starts; a failure throws
  // live::ListenError (exit 3). update_live(): the series the run loop only knows each tick.
  void start_live();
  void update_live(int64_t now);
  int finish();

  const RunOptions& options_;
  Config config_;
  std::function<int64_t()> clock_;
  std::string url_;
  std::string run_id_;
  std::filesystem::path out_dir_;

  LocalProcesses local_;
  std::optional<zmq::context_t> own_ctx_;  // unless the caller gave one
  zmq::context_t* ctx_;
  std::optional<RunSockets> sockets_;

  WorkerRegistry registry_;
  Sharder sharder_;
  std::unique_ptr<Dataset> dataset_;  // generated or read back per conversation, never held
  std::optional<MetricsAggregator> metrics_;
  std::optional<RecordsWriter> records_;
  std::optional<AiperfRecordsWriter> aiperf_records_;  // output.aiperf_export: profile_export.jsonl
  // Server telemetry (controller/telemetry/): scraped on its own thread from the moment the
  // target is known until finish(); none when no endpoint is configured and no mock runs.
  std::optional<telemetry::Telemetry> telemetry_;
  // Live metrics on output.metrics_listen, served from civetweb's threads until the Run ends.
  std::optional<live::LiveMetrics> live_;
  RunFacts facts_;

  std::optional<RunPhaseMachine> machine_;
  std::optional<Scheduler> scheduler_;
  uint64_t seq_base_ = 0;  // first seq of the current scheduler
  InFlight in_flight_{kAssignBatchBytes};
  size_t window_per_worker_ = 0;  // 0: no windows (load.warmup_s, rate, trace, stages)
  InFlight::Send send_assign_ = [this](const std::string& w, proto::Assign& m) {
    send_assign(w, m);
  };
  // Load profiles: the stage plan, one aggregator per stage (a record goes to the stage it was
  // intended in), what the current stage started, the search, the breaker.
  std::optional<StagePlan> plan_;
  std::vector<MetricsAggregator> stage_metrics_;
  // A stage that ends on `requests: N` is ended by intended requests: every request of a
  // conversation it started belongs to it (whenever intended), the first N in its table and the
  // rest excluded as settle requests, so its table holds exactly N. Conversation index -> its
  // stage, until the conversation ends; and per stage, the requests in its table so far.
  std::unordered_map<uint64_t, int> count_stage_of_;
  std::vector<int64_t> stage_taken_;
  StageCounters stage_counters_;
  int64_t last_planned_turns_ = 0;  // of the conversation assign() last queued
  std::optional<CapacitySearch> search_;
  std::optional<CircuitBreaker> breaker_;
  RequestBudget budget_;  // unlimited until the measure phase
  int64_t measure_requests_ = 0;
  int64_t next_tick_ns_ = 0;
  int64_t started_ns_ = 0;  // the controller's clock as run_benchmark began (record_check)
  int handled_signals_ = 0;
  bool interrupted_ = false;
  bool incomplete_ = false;
  std::string incomplete_reason_;
  uint64_t ping_seq_ = 0;
  Progress progress_;
};

}  // namespace convoy::controller
