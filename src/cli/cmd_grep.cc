// src/cli/cmd_grep.cc
//
// `ncclpm grep PATTERN [--rank R] [--host H] [--since T] [--until T]`: the
// stored lines of a job that match, each with the rank, host and time ingest
// gave it, so the original log directory is not needed after ingest.
#include <iostream>

#include "cli.h"
#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/report/report.h"
#include "ncclpm/store/line_search.h"
#include "ncclpm/store/schema.h"
#include "options.h"

namespace ncclpm::cli {
namespace {

// "logs/node1.log:42: [rank 3, node1, 06-12 09:28:37] text"
void print_hit(const store::LineHit& h, bool years_known) {
  std::string who;
  auto add = [&](const std::string& part) { who += (who.empty() ? "" : ", ") + part; };
  if (h.rank >= 0) add("rank " + std::to_string(h.rank));
  if (!h.host.empty()) add(h.host);
  if (h.ts_us != 0) add(report::format_time(h.ts_us, years_known));
  std::cout << h.file << ':' << h.line << ": " << (who.empty() ? "" : "[" + who + "] ") << h.text << '\n';
}

// The job's first time: what a moment given without its date is read against.
Result<int64_t> first_time(store::Connection& db, int64_t job_id) {
  return db.scalar_int(
      "SELECT coalesce(min(ts_us), 0) FROM (SELECT ts_us FROM events WHERE job_id = ?1 AND ts_us IS NOT NULL"
      " UNION ALL SELECT ncclpm_stored_time(min_ts_us, ts_year, ts_shift_us) FROM line_groups"
      " WHERE job_id = ?1 AND min_ts_us IS NOT NULL)",
      {job_id});
}

}  // namespace

int cmd_grep(const Args& args) {
  static const CommandHelp help{
      "grep", "ncclpm grep PATTERN [--db FILE] [--job NAME] [--rank R] [--host H] [--since T] [--until T]",
      "Searches the stored lines of a job with a regular expression (RE2 syntax) and prints\n"
      "each hit as FILE:LINE: [rank, host, time] TEXT, the launcher and producer prefixes\n"
      "taken off. Every line ingest kept is searched except NCCL COLL lines (query the\n"
      "collective_calls table for those). Times are on the job's corrected clock (see\n"
      "clock_offsets); --since and --until take YYYY-MM-DD HH:MM[:SS], MM-DD HH:MM[:SS] or\n"
      "HH:MM[:SS], the date taken from the job's first line when left out.",
      "  ncclpm grep 'NCCL WARN|Watchdog caught' --rank 17\n"
      "  ncclpm grep -i 'saving model checkpoint' --by-time\n"
      "  ncclpm grep 'Traceback|Error' --host node024 --since '09:28' --max-count 20\n"};
  po::options_description visible("Options");
  visible.add_options()
      ("db", po::value<std::string>()->default_value(default_db_path()), "incident database to read")
      ("job", po::value<std::string>()->default_value(""), "job name (default: the last ingested)")
      ("rank", po::value<int>(), "only lines of this global rank")
      ("host", po::value<std::string>(), "only lines of this host (full or short name)")
      ("since", po::value<std::string>(), "only lines at or after this time")
      ("until", po::value<std::string>(), "only lines at or before this time")
      ("ignore-case,i", "match letters in either case")
      ("by-time", "order hits by time across files (lines without a time last)")
      ("max-count,m", po::value<int64_t>(), "stop after this many hits")
      ("count,c", "print only the number of hits");
  po::options_description hidden;
  hidden.add_options()("pattern", po::value<std::string>(), "PATTERN");
  po::positional_options_description pos;
  pos.add("pattern", 1);
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  if (vm.count("pattern") == 0) return usage_error("grep", "give the pattern to search for");
  if (vm.count("rank") != 0 && vm["rank"].as<int>() < 0) return usage_error("grep", "--rank takes a rank of 0 or more");
  int64_t max_count = vm.count("max-count") != 0 ? vm["max-count"].as<int64_t>() : -1;
  if (vm.count("max-count") != 0 && max_count < 1) return usage_error("grep", "--max-count takes a number above 0");

  auto db = store::open_for_reading(vm["db"].as<std::string>());
  if (!db) {
    print_error(db.error());
    return static_cast<int>(ExitCode::kError);
  }
  std::string job;
  auto job_id = diagnose::resolve_job(*db, vm["job"].as<std::string>(), &job);
  if (!job_id) {
    print_error(job_id.error());
    return static_cast<int>(ExitCode::kError);
  }
  auto reference = first_time(*db, *job_id);
  auto year_known = db->scalar_int("SELECT ref_year IS NOT NULL FROM jobs WHERE job_id = ?", {*job_id});
  if (!reference || !year_known) {
    print_error(reference ? year_known.error() : reference.error());
    return static_cast<int>(ExitCode::kError);
  }

  store::LineFilter filter;
  filter.pattern = vm["pattern"].as<std::string>();
  filter.ignore_case = vm.count("ignore-case") != 0;
  filter.by_time = vm.count("by-time") != 0;
  filter.cancel = &g_interrupted;
  if (vm.count("rank") != 0) filter.rank = vm["rank"].as<int>();
  if (vm.count("host") != 0) filter.host = vm["host"].as<std::string>();
  for (const char* bound : {"since", "until"}) {
    if (vm.count(bound) == 0) continue;
    auto moment = store::parse_moment(vm[bound].as<std::string>(), *reference);
    if (!moment) return usage_error("grep", "--" + std::string(bound) + ": " + moment.error().message);
    (std::string(bound) == "since" ? filter.since_us : filter.until_us) = *moment;
  }

  bool count_only = vm.count("count") != 0;
  int64_t hits = 0;
  Status s = store::search_lines(*db, *job_id, filter, [&](const store::LineHit& h) {
    ++hits;
    if (!count_only) print_hit(h, *year_known != 0);
    return max_count < 0 || hits < max_count;
  });
  if (!s) {
    if (g_interrupted) return static_cast<int>(ExitCode::kInterrupted);
    print_error(s.error());
    return static_cast<int>(ExitCode::kError);
  }
  if (count_only) std::cout << hits << '\n';
  if (hits == 0 && !count_only) std::cerr << "ncclpm grep: no line of job " << job << " matches\n";
  return 0;
}

}  // namespace ncclpm::cli
