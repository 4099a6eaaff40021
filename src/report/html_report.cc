// src/report/html_report.cc
//
// Writes the page: static HTML for what must read without script (the
// verdict, the findings, the hosts), the timeline's data as inline JSON, and
// the inline script and style from src/report/assets/ (built into
// html_assets.cc by CMake) that draw the timeline and the alignment.
#include "ncclpm/report/html_report.h"

#include <algorithm>
#include <sstream>

#include "ncclpm/util/json_writer.h"
#include "ncclpm/util/text.h"

namespace ncclpm::report {

// src/report/assets/report.{css,js}, embedded at build time.
extern const char* const kReportCss;
extern const char* const kReportJs;

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// A time as the page shows it: without the year when the logs gave none.
std::string shown_time(int64_t ts_us, const Timeline& t) { return format_time(ts_us, t.years_known); }

std::string percent(double confidence) { return std::to_string(static_cast<int>(confidence * 100 + 0.5)) + "%"; }

std::string join_ints(const std::vector<int>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out;
}

std::string join_strings(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

std::string collective_words(const diagnose::CollectiveRef& c, const Timeline& t) {
  std::string s = c.op_type.empty() ? c.op : c.op_type;
  if (c.seq >= 0) s += " seq " + std::to_string(c.seq);
  if (!c.pg.empty()) s += " in process group " + c.pg;
  if (c.numel_in >= 0) s += ", " + std::to_string(c.numel_in) + " elements in";
  if (c.numel_out >= 0) s += ", " + std::to_string(c.numel_out) + " out";
  if (c.timeout_ms >= 0) s += ", timeout " + std::to_string(c.timeout_ms / 1000) + " s";
  if (c.hang_start_us != 0) s += ", hanging since " + shown_time(c.hang_start_us, t);
  return s;
}

void write_evidence(std::ostringstream& out, const std::vector<diagnose::Evidence>& evidence, const Timeline& t) {
  if (evidence.empty()) return;
  out << "<table class=\"evidence\"><thead><tr><th>where</th><th>rank</th><th>host</th><th>time</th><th>line</th>"
         "</tr></thead><tbody>\n";
  for (const diagnose::Evidence& e : evidence)
    out << "<tr><td class=\"where\">" << html_escape(e.file + ":" + std::to_string(e.line)) << "</td><td>"
        << (e.rank >= 0 ? std::to_string(e.rank) : "") << "</td><td>" << html_escape(e.host) << "</td><td>"
        << (e.ts_us ? shown_time(e.ts_us, t) : "") << "</td><td class=\"line\">"
        << html_escape(util::clip(e.text, 600)) << "</td></tr>\n";
  out << "</tbody></table>\n";
}

void write_finding(std::ostringstream& out, const diagnose::Finding& f, int index, const RenderOptions& o,
                   const Timeline& t) {
  out << "<article class=\"finding " << (f.root_cause ? "root" : "symptom") << "\" data-rule=\"" << html_escape(f.rule)
      << "\" data-category=\"" << html_escape(f.category) << "\" data-culprit-ranks=\"" << join_ints(f.culprit_ranks)
      << "\">\n<h3><span class=\"badge\">" << (f.root_cause ? "root cause" : "symptom") << "</span> [" << index << "] "
      << html_escape(f.title) << "</h3>\n<p class=\"meta\"><code>" << html_escape(f.category) << "</code> · rule <code>"
      << html_escape(f.rule) << "</code> · " << html_escape(f.severity) << " · confidence " << percent(f.confidence)
      << "</p>\n<p>" << html_escape(f.summary) << "</p>\n<dl>";
  if (!f.culprit_ranks.empty()) out << "<dt>culprit ranks</dt><dd>" << join_ints(f.culprit_ranks) << "</dd>";
  if (!f.culprit_hosts.empty()) out << "<dt>culprit hosts</dt><dd>" << html_escape(join_strings(f.culprit_hosts)) << "</dd>";
  if (f.collective) out << "<dt>collective</dt><dd>" << html_escape(collective_words(*f.collective, t)) << "</dd>";
  out << "</dl>\n";
  write_evidence(out, f.evidence, t);
  if (!f.advice.empty()) out << "<pre class=\"advice\">" << html_escape(f.advice) << "</pre>\n";
  if (f.replay) out << "<p class=\"replay\">test it: <code>" << html_escape(replay_command(f, o)) << "</code></p>\n";
  out << "</article>\n";
}

void write_verdict(std::ostringstream& out, const diagnose::Diagnosis& d) {
  const diagnose::Finding* top = nullptr;
  for (const diagnose::Finding& f : d.findings)
    if (f.root_cause) {
      top = &f;
      break;
    }
  out << "<section id=\"verdict\" class=\"" << (top ? "found" : "none") << "\">\n";
  if (top == nullptr) {
    out << "<p>No root cause found: no known failure signature fired, no rank fell behind the others, and no error "
           "line explains the job.</p>\n";
  } else {
    out << "<p class=\"headline\">" << html_escape(top->title) << "</p>\n<p>" << html_escape(top->summary) << "</p>\n";
    if (!top->culprit_ranks.empty() || !top->culprit_hosts.empty())
      out << "<p class=\"culprit\">culprit: "
          << html_escape(top->culprit_ranks.empty() ? "" : "rank " + join_ints(top->culprit_ranks))
          << html_escape(top->culprit_ranks.empty() || top->culprit_hosts.empty() ? "" : " on ")
          << html_escape(join_strings(top->culprit_hosts)) << "</p>\n";
  }
  out << "</section>\n";
}

void write_hosts(std::ostringstream& out, const Timeline& t) {
  out << "<section id=\"hosts\"><h2>Hosts</h2>\n";
  if (t.hosts.empty()) {
    out << "<p>No line names its host.</p>\n";
  } else {
    out << "<table class=\"hosts\"><thead><tr><th>host</th><th>ranks</th><th>error lines</th><th>first error</th>"
           "<th>NCCL</th></tr></thead><tbody>\n";
    for (const HostRow& h : t.hosts)
      out << "<tr" << (h.errors > 0 ? " class=\"has-errors\"" : "") << "><td>"
          << html_escape(h.host.empty() ? "(lines without a host)" : h.host) << "</td><td>" << h.ranks << "</td><td>"
          << h.errors << "</td><td>" << (h.first_error_us ? shown_time(h.first_error_us, t) : "") << "</td><td>"
          << html_escape(join_strings(h.nccl_versions)) << "</td></tr>\n";
    out << "</tbody></table>\n";
  }
  if (t.jobs_in_database > 1) {
    out << "<h3>Recurring culprit hosts</h3>\n";
    if (t.recurring_hosts.empty()) {
      out << "<p>No host was the culprit of a root cause in more than one of the database's " << t.jobs_in_database
          << " jobs (jobs not yet diagnosed are not counted; <code>ncclpm history</code> diagnoses them).</p>\n";
    } else {
      out << "<table class=\"recurring\"><thead><tr><th>host</th><th>jobs</th><th>which</th></tr></thead><tbody>\n";
      for (const RecurringHost& h : t.recurring_hosts)
        out << "<tr><td>" << html_escape(h.host) << "</td><td>" << h.jobs << "</td><td>" << html_escape(h.names)
            << "</td></tr>\n";
      out << "</tbody></table>\n";
    }
  }
  if (!t.nccl_settings.empty()) {
    out << "<h3>NCCL settings seen</h3><p class=\"settings\">";
    for (const auto& [name, value] : t.nccl_settings) out << "<code>" << html_escape(name + "=" + value) << "</code> ";
    out << "</p>\n";
  }
  out << "</section>\n";
}

// The timeline's data for the script. Inside <script>, "</script" or "<!--"
// in a log line would end or derail the element, so no '<' is written raw.
std::string timeline_json(const diagnose::Diagnosis& d, const Timeline& t) {
  util::JsonWriter w(false);
  w.begin_object();
  w.key("job").value(d.job);
  w.key("start_us").value(t.start_us).key("end_us").value(t.end_us).key("hang_start_us").value(t.hang_start_us);
  w.key("by_host").value(t.by_host).key("rank_count").value(t.rank_count).key("years_known").value(t.years_known);
  w.key("lanes").begin_array();
  for (const Lane& l : t.lanes) {
    w.begin_object().key("label").value(l.label).key("host").value(l.host);
    w.key("ranks").begin_array();
    for (int r : l.ranks) w.value(r);
    w.end_array();
    w.key("first").value(l.first_us).key("last").value(l.last_us).key("lines").value(l.lines);
    w.key("culprit").value(l.culprit).key("expanded").value(l.expanded);
    w.key("bands").begin_array();
    for (const Band& b : l.bands)
      w.begin_object().key("label").value(b.label).key("from").value(b.from_us).key("to").value(b.to_us).key(
          "why").value(b.why).end_object();
    w.end_array();
    w.key("marks").begin_array();
    for (const Mark& m : l.marks)
      w.begin_object().key("kind").value(m.kind).key("ts").value(m.ts_us).key("text").value(m.text).key("at").value(
          m.where).end_object();
    w.end_array().end_object();
  }
  w.end_array();
  w.key("phases").begin_array();
  for (const Band& b : t.job_phases)
    w.begin_object().key("label").value(b.label).key("from").value(b.from_us).key("to").value(b.to_us).key(
        "why").value(b.why).end_object();
  w.end_array();
  // [rank, last enqueued, last completed, timed out in]; -1 unknown
  w.key("progress").begin_array();
  for (const RankProgress& p : t.progress)
    w.begin_array().value(p.rank).value(p.last_enqueued).value(p.last_completed).value(p.stuck_seq).end_array();
  w.end_array();
  w.end_object();
  // '<' occurs only inside JSON strings, where \u003c reads the same.
  std::string safe;
  for (char c : w.str()) safe += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return safe;
}

}  // namespace

std::string render_html(const diagnose::Diagnosis& d, const Timeline& t, const RenderOptions& o) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>Postmortem: "
      << html_escape(d.job) << "</title>\n<style>\n" << kReportCss << "</style>\n</head>\n<body>\n";
  size_t hosts = std::count_if(t.hosts.begin(), t.hosts.end(), [](const HostRow& h) { return !h.host.empty(); });
  out << "<header><h1>Postmortem: " << html_escape(d.job) << "</h1>\n<p class=\"sub\">" << t.rank_count
      << (t.rank_count == 1 ? " rank" : " ranks");
  if (hosts > 0) out << " on " << hosts << (hosts == 1 ? " host" : " hosts");
  else out << " (no line names its host)";
  if (t.start_us)
    out << " · logs from " << shown_time(t.start_us, t) << " to " << shown_time(t.end_us, t)
        << (t.years_known ? "" : " (the lines give no year)");
  out << " · made by ncclpm " << NCCLPM_VERSION << "</p>\n";
  for (const auto& c : d.clock_skews) out << "<p class=\"clock\">" << html_escape(c.words()) << "</p>\n";
  out << "</header>\n";
  write_verdict(out, d);
  out << "<section id=\"timeline\"><h2>Timeline</h2>\n<div class=\"legend\"><span class=\"k error\">first error</span>"
         "<span class=\"k watchdog\">watchdog fired</span><span class=\"k exit\">exit</span>"
         "<span class=\"k signal\">signal sent</span><span class=\"k completed\">last collective completed (Flight Recorder)</span><span class=\"k hang\">hang began</span>"
         "<span class=\"k culprit\">culprit</span><span class=\"k startup\">start-up</span><span class=\"k band\">phase the culprit was in</span></div>\n"
         "<div id=\"timeline-view\"><p class=\"noscript\">The timeline is drawn by the page's script.</p></div>\n"
         "<p class=\"hint\">Scroll to zoom, drag to pan, double-click to reset; hover a mark for its line. Faded marks "
         "at a lane's start are lines without a time.</p>\n"
         "</section>\n";
  out << "<section id=\"alignment\"><h2>Collective alignment</h2>\n<div id=\"alignment-view\"></div></section>\n";
  out << "<section id=\"findings\"><h2>Findings</h2>\n";
  if (d.findings.empty()) out << "<p>No finding.</p>\n";
  int index = 1;
  for (const diagnose::Finding& f : d.findings) write_finding(out, f, index++, o, t);
  out << "</section>\n";
  write_hosts(out, t);
  out << "<script type=\"application/json\" id=\"ncclpm-data\">" << timeline_json(d, t) << "</script>\n<script>\n"
      << kReportJs << "</script>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace ncclpm::report
