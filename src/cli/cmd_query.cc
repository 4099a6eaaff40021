// src/cli/cmd_query.cc
//
// `ncclpm query SQL [--db FILE] [--format table|csv|json] [--timeout S]`:
// one read-only statement, stoppable with Ctrl-C.
#include <cmath>
#include <iostream>

#include "cli.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/store/user_query.h"
#include "ncclpm/util/json_writer.h"
#include "ncclpm/util/text.h"
#include "options.h"

namespace ncclpm::cli {
namespace {

std::string cell_text(const store::Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", *d);
    return buf;
  }
  return std::get<std::string>(v);
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string json_value(const store::Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "null";
  if (std::holds_alternative<std::string>(v)) return util::JsonWriter::escape(std::get<std::string>(v));
  // JSON has no infinity or NaN: such a value is written as null.
  if (const auto* d = std::get_if<double>(&v); d != nullptr && !std::isfinite(*d)) return "null";
  return cell_text(v);
}

void print_table(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(names.size());
  for (size_t c = 0; c < names.size(); ++c) width[c] = names[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], std::min<size_t>(row[c].size(), 60));
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string cell = cells[c];
      for (char& ch : cell)
        if (ch == '\n' || ch == '\t') ch = ' ';
      if (cell.size() > 60 && c + 1 < cells.size()) cell = cell.substr(0, 57) + "...";
      std::cout << cell;
      if (c + 1 < cells.size()) std::cout << std::string(width[c] - std::min(width[c], cell.size()) + 2, ' ');
    }
    std::cout << "\n";
  };
  line(names);
  std::vector<std::string> rule;
  for (size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : rows) line(row);
}

}  // namespace

int cmd_query(const Args& args) {
  static const CommandHelp help{
      "query", "ncclpm query SQL [--db FILE] [--format table|csv|json] [--timeout SECONDS]",
      "Runs one SQL statement on the incident database, read-only: writes, ATTACH,\n"
      "pragmas that set something and extension loading are refused. Ctrl-C stops a\n"
      "long query (exit 130); --timeout stops it after SECONDS (exit 3).\n"
      "`ncclpm schema` lists the tables; docs/schema.md explains every column.",
      "  ncclpm query \"SELECT rank, seq, op_type, numel_in, timeout_ms FROM watchdog_timeouts\"\n"
      "  ncclpm query \"SELECT rel_path, lines_read, lines_unparsed FROM files\" --format csv\n"};
  po::options_description visible("Options");
  visible.add_options()
      ("db", po::value<std::string>()->default_value(default_db_path()), "incident database to read")
      ("format", po::value<std::string>()->default_value("table"), "table, csv or json")
      ("timeout", po::value<double>(), "stop the query after this many seconds (exit 3)");
  po::options_description hidden;
  hidden.add_options()("sql", po::value<std::vector<std::string>>(), "SQL");
  po::positional_options_description pos;
  pos.add("sql", -1);
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  if (vm.count("sql") == 0) return usage_error("query", "give the SQL to run");
  std::string sql;
  for (const auto& part : vm["sql"].as<std::vector<std::string>>()) sql += (sql.empty() ? "" : " ") + part;
  std::string format = vm["format"].as<std::string>();
  if (format != "table" && format != "csv" && format != "json")
    return usage_error("query", "--format must be table, csv or json, not " + util::quoted(format));

  std::optional<std::chrono::milliseconds> timeout;
  if (vm.count("timeout") != 0) {
    double seconds = vm["timeout"].as<double>();
    if (!(seconds > 0) || seconds > 1e6)
      return usage_error("query", "--timeout takes a number of seconds above 0, not " + std::to_string(seconds));
    timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }

  auto db = store::open_for_reading(vm["db"].as<std::string>());
  if (!db) {
    print_error(db.error());
    return static_cast<int>(ExitCode::kError);
  }
  store::UserQuery query(*db, &g_interrupted, timeout);
  if (Status s = query.prepare(sql); !s) {
    print_error(s.error());
    return static_cast<int>(ExitCode::kError);
  }
  store::Statement* stmt = &query.statement();
  std::vector<std::string> names;
  for (int c = 0; c < stmt->columns(); ++c) names.push_back(stmt->column_name(c));
  std::vector<std::vector<std::string>> rows;
  std::optional<Error> err;
  bool first = true;
  if (format == "json") std::cout << "[";
  if (format == "csv") {
    for (size_t c = 0; c < names.size(); ++c) std::cout << (c ? "," : "") << csv_quote(names[c]);
    std::cout << "\n";
  }
  while (query.step(&err)) {
    if (format == "json") {
      std::cout << (first ? "\n  {" : ",\n  {");
      for (int c = 0; c < stmt->columns(); ++c)
        std::cout << (c ? ", " : "") << util::JsonWriter::escape(names[static_cast<size_t>(c)]) << ": "
                  << json_value(stmt->column(c));
      std::cout << "}";
    } else {
      std::vector<std::string> row;
      for (int c = 0; c < stmt->columns(); ++c) row.push_back(cell_text(stmt->column(c)));
      if (format == "csv") {
        for (size_t c = 0; c < row.size(); ++c) std::cout << (c ? "," : "") << csv_quote(row[c]);
        std::cout << "\n";
      } else {
        rows.push_back(std::move(row));
      }
    }
    first = false;
  }
  if (format == "json") std::cout << (first ? "]\n" : "\n]\n");
  if (format == "table" && !names.empty()) print_table(names, rows);
  if (query.stopped() == store::QueryStop::kCancelled) {
    print_error(Error::plain("query interrupted; the rows above are the ones read before it stopped"));
    return static_cast<int>(ExitCode::kInterrupted);
  }
  if (query.stopped() == store::QueryStop::kTimedOut) {
    print_error(Error::plain("query stopped at --timeout; the rows above are the ones read before it",
                             "narrow the query (WHERE, LIMIT) or give it more time"));
    return static_cast<int>(ExitCode::kTimedOut);
  }
  if (err) {
    print_error(Error::plain("SQL: " + err->message));
    return static_cast<int>(ExitCode::kError);
  }
  return 0;
}

}  // namespace ncclpm::cli
