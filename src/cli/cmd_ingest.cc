// src/cli/cmd_ingest.cc
//
// `ncclpm ingest PATH... [--db FILE] [--job NAME] [--threads N]`
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"
#include "options.h"

namespace ncclpm::cli {
namespace {

using util::with_commas;

// group_concat's "3,1,2" -> "1-3": a 4096-rank timeout fits on one line.
std::string rank_list(const std::string& concatenated) {
  std::vector<int> ranks;
  for (std::string_view r : util::split(concatenated, ','))
    if (auto v = util::parse_int(r)) ranks.push_back(static_cast<int>(*v));
  return util::rank_ranges(std::move(ranks));
}

// Redrawn in place on the terminal, a few times a second.
std::function<void(const ingest::Progress&)> progress_printer() {
  auto start = std::chrono::steady_clock::now();
  return [start, throttle = ingest::ProgressThrottle()](const ingest::Progress& p) mutable {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!throttle.due(p, elapsed)) return;
    std::fprintf(stderr, "\r\x1b[K%s", ingest::progress_text(p, elapsed).c_str());
    std::fflush(stderr);
  };
}

// What was found, from the database itself: the same numbers `query` shows.
void print_findings_summary(const ingest::Report& r) {
  auto db = store::open_for_reading(r.db_path);
  if (!db) return;
  auto job = db->scalar_int("SELECT job_id FROM jobs WHERE name = ?", {r.job});
  if (!job) return;
  std::cout << "events by kind:\n";
  // Progress, channel and transport lines are stored as lines, not events rows; their groups know how many.
  auto kinds = db->prepare(
      "SELECT kind, n FROM (SELECT kind, count(*) AS n FROM events WHERE job_id = ?1 GROUP BY kind"
      " UNION ALL SELECT kind, sum(rows) FROM line_groups WHERE job_id = ?1 AND kind IN ('training_progress', 'nccl_channel', 'nccl_network')"
      " GROUP BY kind) ORDER BY n DESC, kind");
  if (kinds && kinds->bind_all({*job})) {
    while (kinds->step())
      std::printf("  %-22s %s\n", kinds->column_text(0).c_str(), with_commas(kinds->column_int(1)).c_str());
  }
  // The blocks know their row counts: no need to decode millions of calls.
  auto colls = db->scalar_int("SELECT coalesce(sum(rows), 0) FROM collective_blocks WHERE job_id = ?", {*job});
  if (colls && *colls > 0) std::printf("  %-22s %s\n", "(collectives)", with_commas(*colls).c_str());
  auto wd = db->prepare(
      "SELECT seq, op_type, timeout_ms, count(DISTINCT coalesce(rank, host || ':' || file_id)), "
      "group_concat(DISTINCT rank) FROM watchdog_timeouts WHERE job_id = ? "
      "GROUP BY seq, op_type, timeout_ms ORDER BY 4 DESC LIMIT 5");
  if (wd && wd->bind_all({*job})) {
    bool header = false;
    while (wd->step()) {
      if (!header) std::cout << "watchdog timeouts:\n";
      header = true;
      std::printf("  seq %s %s timeout %s ms on %lld rank(s): %s\n",
                  wd->column_is_null(0) ? "?" : wd->column_text(0).c_str(), wd->column_text(1).c_str(),
                  wd->column_text(2).c_str(), static_cast<long long>(wd->column_int(3)),
                  rank_list(wd->column_text(4)).c_str());
    }
  }
}

}  // namespace

int cmd_ingest(const Args& args) {
  static const CommandHelp help{
      "ingest", "ncclpm ingest PATH... [--db FILE] [--job NAME] [--threads N]",
      "Reads every file under PATH (any launcher's format, .gz and .zst too), works out\n"
      "who said each line (host, rank, pid, time) and stores typed events in the\n"
      "incident database. Ingesting the same files again adds nothing.",
      "  ncclpm ingest /mnt/jobs/run-8812/logs\n"
      "  ncclpm ingest slurm-4412.out nccl/ --db team.db --job run-4412\n"};
  po::options_description visible("Options");
  visible.add_options()
      ("db", po::value<std::string>()->default_value(default_db_path()), "incident database to write")
      ("job", po::value<std::string>(), "job name (default: the directory's name)")
      ("threads", po::value<int>()->default_value(0), "parsing threads (0: one per core)")
      ("quiet,q", "print nothing but errors")
      ("timings", "print where the time went");
  po::options_description hidden;
  hidden.add_options()("path", po::value<std::vector<std::string>>(), "log paths");
  po::positional_options_description pos;
  pos.add("path", -1);
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  if (vm.count("path") == 0) return usage_error("ingest", "give at least one log directory or file");

  ingest::Options opt;
  for (const auto& p : vm["path"].as<std::vector<std::string>>()) opt.paths.emplace_back(p);
  opt.db_path = vm["db"].as<std::string>();
  if (vm.count("job") != 0) opt.job_name = vm["job"].as<std::string>();
  opt.threads = vm["threads"].as<int>();
  opt.cancel = &g_interrupted;
  bool quiet = vm.count("quiet") != 0;
  bool tty = isatty(STDERR_FILENO) != 0;
  if (tty && !quiet) opt.on_progress = progress_printer();

  // Every file's parsing allocates and frees buffers of a few MB (line
  // blocks, batches). glibc maps and unmaps those anew each time, and the
  // page faults of the fresh pages cost a sixth of ingest's CPU on a console
  // job: keep such buffers in the heap and freed memory for reuse instead.
  // Peak memory stays bounded by the batch queue.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  auto report = ingest::run(opt);
  if (tty && !quiet) std::fprintf(stderr, "\r\x1b[K");
  if (g_interrupted.load()) {
    std::cerr << "ncclpm: interrupted: " << opt.db_path.string() << " was left as it was\n";
    return static_cast<int>(ExitCode::kInterrupted);
  }
  if (!report) {
    print_error(report.error());
    return static_cast<int>(ExitCode::kError);
  }
  const ingest::Report& r = *report;
  for (const Error& w : r.warnings) print_warning(w);
  if (r.totals.unparsed > 0 && !quiet) {
    std::cerr << "ncclpm: note: " << with_commas(r.totals.unparsed)
              << " lines matched no parser (kept, see table unparsed_lines)\n";
  }
  std::fprintf(stderr, "ingested %s lines from %s files in %.2f s (%s already in the database%s)\n",
               with_commas(r.totals.read).c_str(), with_commas(r.files_new).c_str(), r.seconds,
               with_commas(r.files_already).c_str(),
               r.files_replaced > 0
                   ? (", " + with_commas(r.files_replaced) + " changed since and replaced").c_str()
                   : "");
  if (vm.count("timings") != 0)
    std::fprintf(stderr,
                 "timings: discover %.2f s, read+parse+write %.2f s, finalize (inference, indexes, commit) %.2f s\n",
                 r.discover_seconds, r.seconds - r.discover_seconds - r.finalize_seconds, r.finalize_seconds);
  if (quiet) return 0;
  std::cout << "job " << r.job << " -> " << r.db_path.string() << "\n";
  std::cout << "files: " << r.files_new << " new, " << r.files_already << " already ingested, "
            << r.files_skipped << " skipped, " << r.files_partial << " partly readable, " << r.files_unreadable
            << " unreadable\n";
  std::cout << "lines: " << with_commas(r.totals.read) << " read = " << with_commas(r.totals.blank)
            << " blank + " << with_commas(r.totals.recognized) << " recognized + "
            << with_commas(r.totals.unparsed) << " unparsed\n";
  if (r.files_new > 0) print_findings_summary(r);
  return 0;
}

}  // namespace ncclpm::cli
