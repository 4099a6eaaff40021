// src/cli/cmd_history.cc
//
// `ncclpm history [--db FILE]`: across every job in the database, the hosts
// and ranks that keep being culprits and the signatures that keep firing.
// Jobs not diagnosed yet are diagnosed first (their findings are stored).
#include <cstdio>
#include <iostream>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/store/schema.h"
#include "rules_option.h"

namespace ncclpm::cli {
namespace {

Status diagnose_missing_jobs(store::Connection& db, const rules::RuleSet& rules, int* diagnosed) {
  auto jobs = db.prepare("SELECT job_id, name FROM jobs WHERE job_id NOT IN (SELECT job_id FROM findings)"
                         " AND job_id IN (SELECT job_id FROM files) ORDER BY job_id");
  if (!jobs) return jobs.take_error();
  std::vector<std::pair<int64_t, std::string>> todo;
  while (jobs->step()) todo.emplace_back(jobs->column_int(0), jobs->column_text(1));
  for (auto& [id, name] : todo) {
    auto d = diagnose::run(db, id, rules);
    if (!d) return d.take_error();
    d->job = name;
    auto stored = diagnose::store_findings_if_writable(db, *d);
    if (!stored) return stored.take_error();
    if (!*stored) {
      print_warning(Error::plain("the database is read-only: " + std::to_string(todo.size()) +
                                 " job(s) not diagnosed yet are left out of the history"));
      return Ok{};
    }
    ++*diagnosed;
  }
  return Ok{};
}

void print_section(store::Connection& db, const char* title, const char* sql, const char* header) {
  auto stmt = db.prepare(sql);
  if (!stmt) {
    print_error(stmt.error());
    return;
  }
  std::printf("%s\n%s\n", title, header);
  int rows = 0;
  while (stmt->step()) {
    ++rows;
    std::printf("  %-32s %5lld  %s\n", stmt->column_text(0).c_str(),
                static_cast<long long>(stmt->column_int(1)), stmt->column_text(2).c_str());
  }
  if (rows == 0) std::printf("  (none)\n");
  std::printf("\n");
}

}  // namespace

int cmd_history(const Args& args) {
  static const CommandHelp help{
      "history", "ncclpm history [--db FILE]",
      "Across every job in the incident database: the hosts and ranks that were root-cause\n"
      "culprits in more than one job, and the failure signatures that recur. Jobs that were\n"
      "ingested but not diagnosed are diagnosed first.",
      "  ncclpm history --db team.db\n"};
  po::options_description visible("Options");
  visible.add_options()("db", po::value<std::string>()->default_value(default_db_path()), "incident database");
  add_rules_option(visible);
  po::options_description hidden;
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  auto rules = load_rules(vm);
  if (!rules) return static_cast<int>(ExitCode::kError);
  auto db = store::open_for_update(vm["db"].as<std::string>());
  if (!db) {
    print_error(db.error());
    return static_cast<int>(ExitCode::kError);
  }
  int diagnosed = 0;
  if (Status s = diagnose_missing_jobs(*db, *rules, &diagnosed); !s) {
    print_error(s.error());
    return static_cast<int>(ExitCode::kError);
  }
  auto jobs = db->scalar_int("SELECT count(*) FROM jobs");
  std::printf("%lld jobs in %s (%d diagnosed now)\n\n", static_cast<long long>(jobs ? *jobs : 0),
              vm["db"].as<std::string>().c_str(), diagnosed);
  print_section(*db, "Culprit hosts (root causes):",
                "SELECT h.value, count(DISTINCT f.job_id), group_concat(DISTINCT j.name)"
                " FROM findings f JOIN jobs j USING (job_id), json_each(f.culprit_hosts) h"
                " WHERE f.root_cause GROUP BY h.value ORDER BY 2 DESC, 1 LIMIT 20",
                "  host                              jobs  which");
  print_section(*db, "Culprit ranks (root causes):",
                "SELECT 'rank ' || r.value, count(DISTINCT f.job_id), group_concat(DISTINCT j.name)"
                " FROM findings f JOIN jobs j USING (job_id), json_each(f.culprit_ranks) r"
                " WHERE f.root_cause GROUP BY r.value ORDER BY 2 DESC, r.value LIMIT 20",
                "  rank                              jobs  which");
  print_section(*db, "Signatures (root causes):",
                "SELECT f.rule, count(DISTINCT f.job_id), group_concat(DISTINCT j.name)"
                " FROM findings f JOIN jobs j USING (job_id) WHERE f.root_cause"
                " GROUP BY f.rule ORDER BY 2 DESC, 1 LIMIT 30",
                "  rule                              jobs  which");
  return 0;
}

}  // namespace ncclpm::cli
