// src/cli/cmd_report.cc
//
// `ncclpm report --html FILE [--db FILE] [--job NAME]`: the diagnosis as one
// self-contained HTML page. The database is only read: an archived incident
// on a read-only share can be reported on.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/report/html_report.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"
#include "diagnose_job.h"
#include "rules_option.h"

namespace ncclpm::cli {
namespace {

namespace fs = std::filesystem;

// Written beside the target and renamed over it: a reader never sees half a page.
Status write_whole(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error::plain("cannot write " + util::quoted(path.string()) + ": " + std::strerror(errno),
                                  "check that the directory exists and is writable");
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      return Error::plain("writing " + util::quoted(path.string()) + " failed: " + std::strerror(errno),
                          "is the disk full?");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Error::plain("cannot write " + util::quoted(path.string()) + ": " + ec.message());
  }
  return Ok{};
}

}  // namespace

int cmd_report(const Args& args) {
  static const CommandHelp help{
      "report", "ncclpm report --html FILE [--db FILE] [--job NAME]",
      "Writes the diagnosis of a job as one self-contained HTML page: the findings with\n"
      "their evidence and advice, a per-rank timeline (per host above 256 ranks, with\n"
      "the odd ranks drawn apart), the collective each rank got to, and the hosts.\n"
      "Nothing is fetched when the page opens: mail it or attach it to a ticket.",
      "  ncclpm report --html postmortem.html\n"
      "  ncclpm report --db /archive/run-4412.db --job run-4412 --html run-4412.html\n"};
  po::options_description visible("Options");
  visible.add_options()
      ("html", po::value<std::string>(), "the page to write")
      ("db", po::value<std::string>()->default_value(default_db_path()), "incident database (only read)")
      ("job", po::value<std::string>()->default_value(""), "job name (default: the last ingested)");
  add_rules_option(visible);
  po::options_description hidden;
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  if (!vm.count("html")) return usage_error("report", "--html FILE is required (the page to write)");

  auto rules = load_rules(vm);
  if (!rules) return static_cast<int>(ExitCode::kError);
  std::string db_path = vm["db"].as<std::string>();
  auto db = store::open_for_reading(db_path);
  if (!db) {
    print_error(db.error());
    return static_cast<int>(ExitCode::kError);
  }
  auto diagnosed = diagnose_job(*db, vm["job"].as<std::string>(), *rules);
  if (const int* rc = std::get_if<int>(&diagnosed)) return *rc;
  diagnose::Diagnosis& d = std::get<diagnose::Diagnosis>(diagnosed);
  auto timeline = report::load_timeline(*db, d);
  if (!timeline) {
    print_error(timeline.error());
    return static_cast<int>(ExitCode::kError);
  }
  std::string page = report::render_html(d, *timeline, report::RenderOptions{db_path, false});
  std::string out = vm["html"].as<std::string>();
  if (Status s = write_whole(out, page); !s) {
    print_error(s.error());
    return static_cast<int>(ExitCode::kError);
  }
  std::cerr << "wrote " << out << " (" << timeline->lanes.size() << " lanes, " << d.findings.size() << " findings, "
            << (page.size() + 1023) / 1024 << " KiB)\n";
  return 0;
}

}  // namespace ncclpm::cli
