// tests/rules/catalog_test.cc
//
// The message catalogues (rules/catalog/*.tsv): formats become patterns, the
// loader names the file and line of a bad row, and every catalogued message,
// rendered with plausible values into a log line as its producer prints it,
// is framed, stored and classified back to its own category.
#include <gtest/gtest.h>

#include <map>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/rules/catalog.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using rules::Catalog;

TEST(Catalog, FormatsBecomePatterns) {
  EXPECT_EQ(Catalog::pattern_of("Call to %s failed : %d"), "Call\\ to\\ .*?\\ failed\\ \\:\\ -?\\d+");
  EXPECT_EQ(Catalog::pattern_of("100%% of %lu"), "100%\\ of\\ \\d+");
  EXPECT_EQ(Catalog::pattern_of("dev %016lx"), "dev\\ (?:0[xX])?[0-9a-fA-F]+");
  EXPECT_EQ(Catalog::pattern_of("%.*s at %p"), ".*?\\ at\\ (?:0x[0-9a-fA-F]+|\\(nil\\)|0)");
  EXPECT_EQ(Catalog::literal_length("Call to %s failed"), 12u);
}

TEST(Catalog, TheMostSpecificFormatWins) {
  testing::TempDir t;
  testing::write_file(t / "catalog/x.tsv",
                      "format\tcategory\tseverity\trole\tversions\tsource\n"
                      "Call to %s failed : %s\tnetwork_socket\terror\tcause\t\ta.cc\n"
                      "Call to ibv_create_qp failed : %s\tnetwork_ib\terror\tcause\t\tb.cc\n"
                      "%s\tnccl_setup_error\terror\tcause\t\tc.cc\n");
  auto c = Catalog::load({t.path()});
  ASSERT_TRUE(c);
  const rules::CatalogEntry* e = c->classify("Call to ibv_create_qp failed : No such device");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->category, "network_ib");
  e = c->classify("Call to connect failed : Connection refused");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->category, "network_socket");
  EXPECT_EQ(c->classify("Init COMPLETE"), nullptr) << "a format without literal text matches nothing";
}

TEST(Catalog, BadRowsAreReportedWithFileAndLine) {
  testing::TempDir t;
  testing::write_file(t / "catalog/bad.tsv",
                      "format\tcategory\tseverity\trole\tversions\tsource\n"
                      "ok line %d\tcuda_error\terror\tcause\t\ta.cc\n"
                      "too few columns\tcuda_error\n"
                      "a message\tno_such_category\terror\tcause\t\ta.cc\n"
                      "a message\tcuda_error\tloud\tcause\t\ta.cc\n");
  auto c = Catalog::load({t.path()});
  ASSERT_FALSE(c);
  std::vector<std::string> got;
  for (const Error& e : c.error()) got.push_back(e.to_string());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NE(got[0].find("bad.tsv:3: expected 6 tab-separated columns, found 2"), std::string::npos) << got[0];
  EXPECT_NE(got[1].find("bad.tsv:4: unknown category 'no_such_category'"), std::string::npos) << got[1];
  EXPECT_NE(got[2].find("bad.tsv:5: severity must be"), std::string::npos) << got[2];
}

// A plausible value for each conversion, as a producer would fill it.
std::string render(const std::string& format) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    size_t j = i + 1;
    while (j < format.size() && std::string("-+ #0'123456789.*hlLzjtq").find(format[j]) != std::string::npos) ++j;
    if (j == format.size()) break;
    switch (format[j]) {
      case 'd': case 'i': case 'u': out += "3"; break;
      case 'x': case 'X': out += "1f3a"; break;
      case 'p': out += "0x7f3a2c000000"; break;
      case 'c': out += "x"; break;
      case 's': out += "mlx5_0"; break;
      case 'm': out += "No such device"; break;
      case '%': out += "%"; break;
      case 'n': break;
      default: out += "1.5"; break;
    }
    i = j;
  }
  return out;
}

// The line as the producer prints it: NCCL's prefix, c10's, or the launcher's own.
std::string as_logged(const rules::CatalogEntry& e) {
  std::string msg = render(e.format);
  if (e.catalog == "nccl") {
    bool info = e.source.find("[INFO]") != std::string::npos;
    return "gpu-node07:1234:1240 [3] " + std::string(info ? "NCCL INFO " : "src/misc/x.cc:123 NCCL WARN ") + msg;
  }
  if (e.catalog == "pytorch") return "[rank3]:[E1123 10:11:12.123456789 ProcessGroupNCCL.cpp:1234] " + msg;
  return msg;
}

TEST(Catalog, EveryCataloguedMessageIsRecognizedAndClassified) {
  auto set = rules::RuleSet::load({rules::RuleSet::default_dir()});
  ASSERT_TRUE(set);
  const Catalog& catalog = set->catalog();
  ASSERT_GT(catalog.entries().size(), 500u) << "the NCCL catalogue alone has hundreds of formats";
  testing::TempDir t;
  std::string log;
  std::vector<const rules::CatalogEntry*> rendered;
  for (const rules::CatalogEntry& e : catalog.entries()) {
    if (Catalog::literal_length(e.format) < 4) continue;  // "%s": nothing to recognize it by
    log += as_logged(e) + "\n";
    rendered.push_back(&e);
  }
  testing::write_file(t / "logs/job.log", log);
  ingest::Options o;
  o.paths = {t / "logs"};
  o.db_path = t / "c.db";
  ASSERT_TRUE(ingest::run(o));
  auto db = store::open_for_reading(o.db_path);
  ASSERT_TRUE(db);
  auto stmt = db->prepare(
      "SELECT line_no, text FROM events UNION ALL SELECT line_no, text FROM unparsed_lines ORDER BY 1");
  ASSERT_TRUE(stmt);
  std::map<std::string, int> missed_by_catalog;
  size_t checked = 0;
  while (stmt->step()) {
    size_t line = static_cast<size_t>(stmt->column_int(0));
    ASSERT_LE(line, rendered.size());
    const rules::CatalogEntry& want = *rendered[line - 1];
    std::string text = stmt->column_text(1);
    const rules::CatalogEntry* got = catalog.classify(text.substr(0, text.find('\n')));
    ++checked;
    bool ok = got != nullptr && got->category == want.category;
    if (!ok) ++missed_by_catalog[want.catalog];
    EXPECT_TRUE(ok) << want.catalog << ".tsv:" << want.line << " '" << want.format << "' stored as '" << text
                    << "' classified " << (got ? got->category + " by line " + std::to_string(got->line) : "as nothing")
                    << ", want " << want.category;
  }
  EXPECT_EQ(checked, rendered.size()) << "every rendered line is stored once";
}

}  // namespace
}  // namespace ncclpm
