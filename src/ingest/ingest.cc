// src/ingest/ingest.cc
//
// Orchestration: workers parse files (one file each, in order within a file),
// the calling thread is the only writer. A bounded queue between them keeps
// memory flat whatever the input size.
#include "ncclpm/ingest/ingest.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "file_parser.h"
#include "ncclpm/discover/discover.h"
#include "ncclpm/store/ingest_writer.h"

namespace fs = std::filesystem;

namespace ncclpm::ingest {
namespace {

// Memory of the batches waiting for the writer. A count of batches would not
// do: one file's batch of events can be 40 MB while a small file's is a few
// KB, and a big file outruns the writer until the queue is full.
constexpr size_t kQueueBytes = 96u << 20;

// A multi-producer, single-consumer queue bounded by the bytes it holds (one
// batch always fits, whatever its size).
class BatchQueue {
 public:
  void push(Batch&& b) {
    size_t bytes = b.approx_bytes();
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return items_.empty() || bytes_ + bytes <= kQueueBytes || closed_; });
    bytes_ += bytes;
    items_.push_back({std::move(b), bytes});
    not_empty_.notify_one();
  }
  bool pop(Batch& out) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !items_.empty() || producers_ == 0; });
    if (items_.empty()) return false;
    out = std::move(items_.front().batch);
    bytes_ -= items_.front().bytes;
    items_.pop_front();
    not_full_.notify_all();
    return true;
  }
  void set_producers(int n) { producers_ = n; }
  void producer_done() {
    std::lock_guard lock(mu_);
    if (--producers_ == 0) not_empty_.notify_all();
  }
  /// Lets blocked producers finish (used when the writer gives up).
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    items_.clear();
    bytes_ = 0;
    not_full_.notify_all();
  }

 private:
  struct Item {
    Batch batch;
    size_t bytes;
  };
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Item> items_;
  size_t bytes_ = 0;
  int producers_ = 0;
  bool closed_ = false;
};

std::string join_paths(const std::vector<fs::path>& paths) {
  std::string s;
  for (const auto& p : paths) {
    if (!s.empty()) s += ' ';
    std::error_code ec;
    s += fs::absolute(p, ec).string();
  }
  return s;
}

}  // namespace

std::string default_job_name(const std::vector<fs::path>& paths) {
  if (paths.empty()) return "job";
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(paths.front(), ec), ec);
  std::string name = p.filename().string();
  // "job42/logs" is better named by "job42" than by "logs".
  if ((name == "logs" || name == "log") && p.has_parent_path()) name = p.parent_path().filename().string();
  return name.empty() ? "job" : name;
}

Result<Report> run(const Options& opt) {
  auto start = std::chrono::steady_clock::now();
  auto cancelled = [&] { return opt.cancel != nullptr && opt.cancel->load(); };
  auto found = discover::discover(opt.paths);
  if (!found) return found.take_error();
  discover::Discovery& d = *found;
  Report report;
  report.job = opt.job_name.empty() ? default_job_name(opt.paths) : opt.job_name;
  report.db_path = opt.db_path;
  report.warnings = d.problems;
  report.files_found = static_cast<int64_t>(d.files.size());
  if (d.files.empty()) {
    return Error::at(join_paths(opt.paths), "no log files found",
                     "give the directory a job's logs were written to");
  }
  report.discover_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  auto writer = store::IngestWriter::begin(opt.db_path, report.job, join_paths(opt.paths));
  if (!writer) return writer.take_error();
  store::IngestWriter& w = **writer;

  // Register new files up front so workers know their ids.
  std::vector<const discover::DiscoveredFile*> todo;
  std::vector<int64_t> ids;
  Progress progress;
  for (const auto& f : d.files) {
    if (w.known_fingerprints().count(f.fingerprint) != 0) {
      ++report.files_already;
      continue;
    }
    // Known path, new content: the file grew (or was rewritten) since the
    // last ingest. Its new content replaces its rows, in this transaction.
    if (auto old = w.file_at(f.rel_path)) {
      if (Status s = w.forget_file(*old); !s) return s.take_error();
      ++report.files_replaced;
    }
    auto id = w.add_file(f);
    if (!id) return id.take_error();
    todo.push_back(&f);
    ids.push_back(*id);
    progress.bytes_total += f.size_bytes;
  }
  progress.files_total = static_cast<int64_t>(todo.size());
  report.files.resize(todo.size());

  int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, std::max<size_t>(1, todo.size()));
  BatchQueue queue;
  queue.set_producers(threads);
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < todo.size() && !cancelled();)
        parse_file(*todo[i], i, ids[i], opt.cancel, [&](Batch&& b) { queue.push(std::move(b)); });
      queue.producer_done();
    });
  }

  std::optional<Error> failure;
  Batch batch;
  while (queue.pop(batch)) {
    if (failure || cancelled()) continue;  // drain so the workers can finish
    Status s = w.write_rows(batch.file_id, batch.rows);
    if (s && !batch.collectives.empty()) s = w.write_collectives(batch.file_id, batch.collectives);
    if (s && !batch.lines.empty()) s = w.write_lines(batch.file_id, batch.lines);
    if (s && !batch.progress_streams.empty()) s = w.write_progress_streams(batch.file_id, batch.progress_streams);
    if (s && (!batch.fr_entries.empty() || !batch.fr_status.empty()))
      s = w.write_flight_recorder(batch.file_id, batch.fr_entries, batch.fr_status);
    report.events += batch.events;
    if (s && batch.final) {
      s = w.finish_file(batch.file_id, batch.outcome);
      const discover::DiscoveredFile& f = *todo[batch.file_index];
      FileReport& fr = report.files[batch.file_index];
      fr = FileReport{f.rel_path, discover::file_kind_name(f.kind), batch.outcome.status,
                      batch.outcome.problem, batch.outcome.counts};
      ++progress.files_done;
      progress.bytes_done += f.size_bytes;
      progress.lines += batch.outcome.counts.read;
      if (opt.on_progress) opt.on_progress(progress);
    }
    if (!s) {
      failure = s.take_error();
      queue.close();
    }
  }
  for (auto& t : workers) t.join();
  if (cancelled()) {
    w.abort();
    return Error::plain("interrupted: nothing was written to " + opt.db_path.string());
  }
  if (failure) {
    w.abort();
    return *failure;
  }

  for (const FileReport& f : report.files) {
    report.totals.read += f.counts.read;
    report.totals.blank += f.counts.blank;
    report.totals.recognized += f.counts.recognized;
    report.totals.unparsed += f.counts.unparsed;
    report.totals.oversized += f.counts.oversized;
    report.totals.bytes += f.counts.bytes;
    if (f.status == "skipped") ++report.files_skipped;
    if (f.status == "partial") ++report.files_partial;
    if (f.status == "error") ++report.files_unreadable;
    if (!f.problem.empty()) report.warnings.push_back(Error::at(f.rel_path, f.problem));
  }
  report.files_new = static_cast<int64_t>(todo.size());
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  store::IngestWriter::Totals totals{report.files_new, report.files_already, report.totals.read,
                                     report.totals.bytes, report.seconds};
  auto finalize_start = std::chrono::steady_clock::now();
  if (Status s = w.commit(totals); !s) {
    w.abort();
    return s.take_error();
  }
  report.finalize_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - finalize_start).count();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ncclpm::ingest
