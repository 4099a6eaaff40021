// src/cli/cmd_diagnose.cc
//
// `ncclpm diagnose [--db FILE] [--job NAME] [--format text|json|markdown]`
#include <cctype>
#include <iostream>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/report/report.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"
#include "diagnose_job.h"
#include "rules_option.h"

namespace ncclpm::cli {
namespace {

// The last line of the text report: the command that draws the same
// diagnosis as a web page, with a file name made from the job's.
std::string html_report_hint(const std::string& job, const std::string& db_path) {
  std::string file;
  for (char c : job) file += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  std::string cmd = "ncclpm report --html " + (file.empty() ? std::string("postmortem") : file) + ".html";
  if (db_path != default_db_path()) cmd += " --db " + util::shell_word(db_path);
  if (!job.empty()) cmd += " --job " + util::shell_word(job);
  return "As a web page with a per-rank timeline: " + cmd;
}

}  // namespace

int cmd_diagnose(const Args& args) {
  static const CommandHelp help{
      "diagnose", "ncclpm diagnose [--db FILE] [--job NAME] [--format text|json|markdown]",
      "Applies the rule base and the cross-rank analysis to a job in the incident\n"
      "database: which rank broke first, in which collective, why, and what to change.\n"
      "Findings come root causes first and are stored in the database (table findings).",
      "  ncclpm diagnose\n"
      "  ncclpm diagnose --job run-4412 --format markdown > postmortem.md\n"
      "  ncclpm diagnose --format json | jq '.findings[0].culprit_ranks'\n"};
  po::options_description visible("Options");
  visible.add_options()
      ("db", po::value<std::string>()->default_value(default_db_path()), "incident database")
      ("job", po::value<std::string>()->default_value(""), "job name (default: the last ingested)")
      ("format", po::value<std::string>()->default_value("text"), "text, json or markdown")
      ("verbose,v", "text: show symptoms in full too");
  add_rules_option(visible);
  po::options_description hidden;
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "markdown")
    return usage_error("diagnose", "--format must be text, json or markdown, not " + util::quoted(format));

  auto rules = load_rules(vm);
  if (!rules) return static_cast<int>(ExitCode::kError);
  std::string db_path = vm["db"].as<std::string>();
  auto db = store::open_for_update(db_path);
  if (!db) {
    print_error(db.error());
    return static_cast<int>(ExitCode::kError);
  }
  auto diagnosed = diagnose_job(*db, vm["job"].as<std::string>(), *rules);
  if (const int* rc = std::get_if<int>(&diagnosed)) return *rc;
  diagnose::Diagnosis& d = std::get<diagnose::Diagnosis>(diagnosed);
  const std::string& job = d.job;
  auto stored = diagnose::store_findings_if_writable(*db, d);
  if (!stored) {
    print_error(stored.error());
    return static_cast<int>(ExitCode::kError);
  }
  if (!*stored)
    print_warning(Error::plain("the database is read-only: the findings are shown, not stored",
                               "replay takes the collective as spelled out below; copy the database to store them"));
  report::RenderOptions o{db_path, vm.count("verbose") != 0};
  if (format == "json") std::cout << report::render_json(d, o);
  else if (format == "markdown") std::cout << report::render_markdown(d, o);
  else std::cout << report::render_text(d, o) << "\n" << html_report_hint(job, db_path) << "\n";
  return 0;
}

}  // namespace ncclpm::cli
