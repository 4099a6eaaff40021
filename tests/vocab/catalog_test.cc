// tests/vocab/catalog_test.cc
//
// The message catalogues (rules/catalog/*.tsv): formats become patterns, the
// loader names the file and line of a bad row, and every catalogued message,
// rendered with plausible values into a log line as its producer prints it,
// is framed, stored and classified back to its own category.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/vocab/catalog.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using vocab::Catalog;

constexpr size_t kLeastLiteralText = 4;  // the catalogue's own floor (catalog.cc kMinLiteral)

TEST(Catalog, FormatsBecomePatterns) {
  EXPECT_EQ(Catalog::pattern_of("Call to %s failed : %d"), "Call\\ to\\ .*?\\ failed\\ \\:\\ -?\\d+");
  EXPECT_EQ(Catalog::pattern_of("100%% of %lu"), "100%\\ of\\ \\d+");
  EXPECT_EQ(Catalog::pattern_of("dev %016lx"), "dev\\ (?:0[xX])?[0-9a-fA-F]+");
  EXPECT_EQ(Catalog::pattern_of("%.*s at %p"), ".*?\\ at\\ (?:0x[0-9a-fA-F]+|\\(nil\\)|0)");
  EXPECT_EQ(Catalog::literal_length("Call to %s failed"), 12u);
  EXPECT_EQ(Catalog::pattern_of("%s: noticed %d"), "(?:.*?: )?noticed\\ -?\\d+") << "a peeled program name";
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
  const vocab::CatalogEntry* e = c->classify("Call to ibv_create_qp failed : No such device");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->category, "network_ib");
  e = c->classify("Call to connect failed : Connection refused");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->category, "network_socket");
  EXPECT_EQ(c->classify("Init COMPLETE"), nullptr) << "a format without literal text matches nothing";
}

TEST(Catalog, ALongMessageCutShortIsStillKnownByItsStart) {
  testing::TempDir t;
  testing::write_file(t / "catalog/x.tsv",
                      "format\tcategory\tseverity\trole\tversions\tsource\n"
                      "Stack trace of the failed collective not found, potentially because FlightRecorder is "
                      "disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value."
                      "\tcollective_timeout\tnotice\tconsequence\t\ta.cpp\n"
                      "Call to %s failed : %s\tnetwork_socket\terror\tcause\t\tb.cc\n");
  auto c = Catalog::load({t.path()});
  ASSERT_TRUE(c);
  const vocab::CatalogEntry* e = c->classify(
      "Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can "
      "enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero valu");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->severity, "notice");
  EXPECT_EQ(c->classify("Call to connect failed"), nullptr) << "a format short enough to print whole needs all of it";
  EXPECT_EQ(c->classify("Stack trace of the failed collective not found, so this is some other message"), nullptr)
      << "a cut line must match the format's head, not just its first words";
  e = c->classify("RuntimeError: Stack trace of the failed collective not found, potentially because FlightRecorder");
  ASSERT_NE(e, nullptr) << "the exception's type before a cut message";
  EXPECT_EQ(e->severity, "notice");
  EXPECT_EQ(c->classify("step 12: Stack trace of the failed collective not found, potentially because Flight"), nullptr)
      << "only a type-like word may stand before the head";
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
  EXPECT_NE(got[2].find("bad.tsv:5: severity 'loud' is not critical"), std::string::npos) << got[2];
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
std::string as_logged(const vocab::CatalogEntry& e) {
  std::string msg = render(e.format);
  if (e.catalog == "nccl") {
    bool info = e.source.find("[INFO]") != std::string::npos;
    return "gpu-node07:1234:1240 [3] " + std::string(info ? "NCCL INFO " : "src/misc/x.cc:123 NCCL WARN ") + msg;
  }
  // A network plugin's WARN: NCCL prints the plugin's function and line.
  if (e.printed_by_nccl()) return "gpu-node07:1234:1240 [3] nccl_net_ofi_rdma_init:7978 NCCL WARN " + msg;
  bool python = e.source.find(".py") != std::string::npos;  // elastic, torchrun: Python prints them
  if (e.catalog == "pytorch" && !python) return "[rank3]:[E1123 10:11:12.123456789 ProcessGroupNCCL.cpp:1234] " + msg;
  return msg;
}

TEST(Catalog, EveryCataloguedMessageIsRecognizedAndClassified) {
  auto set = rules::RuleSet::load({rules::RuleSet::default_dir()});
  ASSERT_TRUE(set);
  const Catalog& catalog = set->catalog();
  ASSERT_GT(catalog.entries().size(), 500u) << "the NCCL catalogue alone has hundreds of formats";
  testing::TempDir t;
  std::vector<const vocab::CatalogEntry*> rendered;
  // One file per message: each is read as the first line of a log, with no
  // neighbour it could be joined to as a detail line.
  for (const vocab::CatalogEntry& e : catalog.entries()) {
    // "%s" and the like: nothing to recognize them by; the catalogue never matches them.
    if (Catalog::literal_length(e.format) < kLeastLiteralText) continue;
    testing::write_file(t / ("logs/m" + std::to_string(rendered.size()) + ".log"), as_logged(e) + "\n");
    rendered.push_back(&e);
  }
  ingest::Options o;
  o.paths = {t / "logs"};
  o.db_path = t / "c.db";
  ASSERT_TRUE(ingest::run(o));
  auto db = store::open_for_reading(o.db_path);
  ASSERT_TRUE(db);
  auto stmt = db->prepare(
      "SELECT f.rel_path, e.text FROM events e JOIN files f USING (file_id) WHERE e.line_no = 1"
      " UNION ALL SELECT f.rel_path, u.text FROM unparsed_lines u JOIN files f USING (file_id) WHERE u.line_no = 1"
      " UNION ALL SELECT f.rel_path, c.text FROM nccl_channel_lines c JOIN files f USING (file_id) WHERE c.line_no = 1"
      " UNION ALL SELECT f.rel_path, n.text FROM nccl_network_lines n JOIN files f USING (file_id) WHERE n.line_no = 1");
  ASSERT_TRUE(stmt);
  std::set<size_t> seen;
  while (stmt->step()) {
    std::string file = stmt->column_text(0);
    size_t index = std::stoul(file.substr(1, file.find('.') - 1));
    ASSERT_LT(index, rendered.size());
    const vocab::CatalogEntry& want = *rendered[index];
    std::string text = stmt->column_text(1);
    std::string line = text.substr(0, text.find('\n'));
    const vocab::CatalogEntry* got = catalog.classify(line);
    seen.insert(index);
    EXPECT_TRUE(got != nullptr && got->category == want.category)
        << want.catalog << ".tsv:" << want.line << " '" << want.format << "' stored as '" << line << "' classified "
        << (got ? got->category + " by " + got->catalog + ".tsv:" + std::to_string(got->line) : "as nothing")
        << ", want " << want.category;
  }
  size_t checked = seen.size();
  for (size_t i = 0; i < rendered.size(); ++i)
    EXPECT_TRUE(seen.count(i)) << "'" << as_logged(*rendered[i]) << "' was not stored";
  EXPECT_EQ(checked, rendered.size()) << "every rendered line is stored once";
}

}  // namespace
}  // namespace ncclpm
