// tests/store/line_blocks_test.cc
//
// The compact store of the lines no parser typed: blocks decode to exactly the
// lines that were encoded, runs carry each line's attribution, damage is
// reported instead of decoded, and the virtual table `unparsed_lines` gives
// back every unparsed line of a real ingest, with the year and rank the job
// inferred for it.
#include "ncclpm/store/line_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include <zstd.h>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::store {
namespace {

using recognize::UnparsedLine;
using testing::TempDir;

// Lines shaped like a console's, with the awkward values mixed in: no time,
// falling times and line numbers, invalid UTF-8, NUL bytes, empty text, and
// attribution that changes every few lines.
std::vector<UnparsedLine> varied_lines(size_t n) {
  std::mt19937_64 rng(7);
  std::vector<UnparsedLine> lines;
  int64_t line = 1, offset = 0, ts = 1700000000000000;
  for (size_t i = 0; i < n; ++i) {
    UnparsedLine u;
    line += static_cast<int64_t>(rng() % 3) + 1;
    u.line_no = i % 500 == 499 ? line - 40 : line;
    u.byte_offset = offset;
    offset += 80;
    ts += static_cast<int64_t>(rng() % 5000) - (i % 97 == 0 ? 100000 : 0);
    u.ts_us = i % 7 == 0 ? 0 : ts;
    u.ts_has_year = (i / 300) % 2 == 0;
    u.host = (i / 50) % 3 == 0 ? "" : "hgx-00" + std::to_string((i / 50) % 3);
    u.pid = (i / 20) % 4 == 0 ? -1 : 4000 + static_cast<int64_t>((i / 20) % 4);
    u.rank = (i / 10) % 5 == 0 ? -1 : static_cast<int>((i / 10) % 5);
    u.local_rank = (i / 30) % 2 == 0 ? -1 : 3;
    u.producer = i % 11 == 0 ? "python_logging" : "plain";
    u.severity = i % 11 == 0 ? 'W' : 0;
    u.text = i % 250 == 3   ? std::string("bad\xff\xfe bytes")
             : i % 250 == 4 ? std::string("nul\0here", 8)
                            : "step " + std::to_string(i) + " of the loop, loss " + std::to_string(rng() % 1000);
    lines.push_back(std::move(u));
  }
  return lines;
}

std::string cleaned(const std::string& text) {
  if (text == "bad\xff\xfe bytes") return "bad\xEF\xBF\xBD\xEF\xBF\xBD bytes";
  if (text == std::string("nul\0here", 8)) return "nul\xEF\xBF\xBDhere";
  return text;
}

recognize::TrainingProgress bar(int64_t step) {
  recognize::TrainingProgress p;
  p.source = "tqdm";
  p.label = step % 2 == 0 ? "Epoch 1" : "";
  p.unit = "it";
  p.step = step;
  p.total = 1000;
  p.seconds_per_step = step % 3 == 0 ? -1 : 1.25;
  p.loss = 0.5;
  return p;
}

// A log can say any number: a tqdm total of 10^60 saturates to INT64_MAX,
// and consecutive lines may jump from one end of the range to the other. The
// differences wrap instead of overflowing, and every value comes back.
TEST(LineBlocks, ExtremeNumbersSurviveTheRoundTrip) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kEarliest = -(int64_t{1} << 60);  // times span any 4-digit year and more
  constexpr int64_t kLatest = int64_t{1} << 60;
  const std::vector<std::pair<int64_t, int64_t>> steps_and_totals = {
      {kMax, kMax}, {-1, -1}, {0, kMax}, {kMax - 1, 0}, {-7, kMax}};
  LineEncoder enc;
  for (size_t i = 0; i < steps_and_totals.size(); ++i) {
    UnparsedLine u;
    u.line_no = i % 2 == 0 ? kMax - static_cast<int64_t>(i) : 1;
    u.byte_offset = i % 2 == 0 ? 0 : kMax;
    u.ts_us = i % 2 == 0 ? kEarliest : kLatest;
    u.text = "bar " + std::to_string(i);
    auto p = bar(0);
    p.step = steps_and_totals[i].first;
    p.total = steps_and_totals[i].second;
    enc.add(u, LineKind::kProgress, &p);
  }
  EncodedLines e = enc.take();
  ASSERT_EQ(e.blocks.size(), 1u);
  LineBlockReader reader(e.blocks[0].data);
  size_t i = 0;
  for (BlockLine l; reader.next(l); ++i) {
    SCOPED_TRACE("line " + std::to_string(i));
    EXPECT_EQ(l.line_no, i % 2 == 0 ? kMax - static_cast<int64_t>(i) : 1);
    EXPECT_EQ(l.byte_offset, i % 2 == 0 ? 0 : kMax);
    EXPECT_EQ(l.ts_us, i % 2 == 0 ? kEarliest : kLatest);
    EXPECT_EQ(l.progress.step, std::max<int64_t>(steps_and_totals[i].first, -1));
    EXPECT_EQ(l.progress.total, std::max<int64_t>(steps_and_totals[i].second, -1));
  }
  EXPECT_TRUE(reader.error().empty()) << reader.error();
  EXPECT_EQ(i, steps_and_totals.size());
}

// A progress line's numbers are stored as decimals: every double comes back
// bit for bit, the awkward ones and a million random ones included.
TEST(LineBlocks, ProgressNumbersComeBackBitForBit) {
  std::vector<double> values = {-1.0, 0.0, -0.0, 1.920999, 2.48, 0.1 + 0.2, 1.0 / 3, -2.5, 1e22, 1e-300,
                                std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::lowest(), 123456789012345678.0, 9007199254740993.0,
                                std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(), 158.06, 1e-5};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1'000'000; ++i) {
    uint64_t bits = rng();
    double v = std::bit_cast<double>(bits);
    values.push_back(i % 2 == 0 ? v : static_cast<double>(static_cast<int64_t>(bits % 100000000)) / 1e6);
  }
  auto same = [](double a, double b) {
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b) || (std::isnan(a) && std::isnan(b));
  };
  for (size_t start = 0; start < values.size(); start += 3 * 4000) {
    LineEncoder enc;
    size_t end = std::min(values.size(), start + 3 * 4000);
    for (size_t i = start; i + 2 < end; i += 3) {
      UnparsedLine u;
      u.line_no = static_cast<int64_t>(i);
      u.text = "bar";
      auto p = bar(1);
      p.seconds_per_step = values[i];
      p.epoch = values[i + 1];
      p.loss = values[i + 2];
      enc.add(u, LineKind::kProgress, &p);
    }
    size_t i = start;
    for (const LineBlock& b : enc.take().blocks) {
      LineBlockReader reader(b.data);
      for (BlockLine l; reader.next(l); i += 3) {
        ASSERT_TRUE(same(l.progress.seconds_per_step, values[i])) << values[i];
        ASSERT_TRUE(same(l.progress.epoch, values[i + 1])) << values[i + 1];
        ASSERT_TRUE(same(l.progress.loss, values[i + 2])) << values[i + 2];
      }
      ASSERT_TRUE(reader.error().empty()) << reader.error();
    }
    EXPECT_EQ(i, start + (end - start) / 3 * 3);
  }
}

void every_line_survives_the_round_trip(BlockLayout layout) {
  auto lines = varied_lines(static_cast<size_t>(2 * kLineBlockRows + 77));
  LineEncoder enc(nullptr, layout);
  std::vector<LineRef> refs;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto p = bar(static_cast<int64_t>(i));
    refs.push_back(i % 5 == 0 ? enc.add(lines[i], LineKind::kProgress, &p) : enc.add(lines[i], LineKind::kUnparsed));
  }
  EXPECT_EQ(enc.pending_rows(), static_cast<int64_t>(lines.size()));
  EncodedLines e = enc.take();
  EXPECT_EQ(enc.pending_rows(), 0);
  ASSERT_EQ(e.blocks.size(), 3u);
  EXPECT_EQ(e.blocks[0].rows, kLineBlockRows);
  EXPECT_EQ(e.blocks[2].rows, 77);
  size_t i = 0;
  for (const LineBlock& b : e.blocks) {
    LineBlockReader reader(b.data);
    ASSERT_TRUE(reader.error().empty()) << reader.error();
    ASSERT_EQ(reader.rows(), b.rows);
    std::vector<int64_t> rows_of_group(b.groups.size());
    for (BlockLine l; reader.next(l); ++i) {
      const UnparsedLine& u = lines[i];
      SCOPED_TRACE("line " + std::to_string(i));
      ASSERT_LT(static_cast<size_t>(l.group), b.groups.size());
      const LineGroup& g = b.groups[static_cast<size_t>(l.group)];
      ++rows_of_group[static_cast<size_t>(l.group)];
      ASSERT_EQ(refs[i].block_seq, b.seq);
      ASSERT_EQ(refs[i].group, l.group);
      ASSERT_EQ(l.line_no, u.line_no);
      ASSERT_EQ(l.byte_offset, u.byte_offset);
      ASSERT_EQ(l.ts_us, u.ts_us);
      ASSERT_EQ(std::string(l.text), cleaned(u.text));
      ASSERT_EQ(g.kind, i % 5 == 0 ? LineKind::kProgress : LineKind::kUnparsed);
      ASSERT_EQ(g.host, u.host);
      ASSERT_EQ(g.pid, u.pid);
      ASSERT_EQ(g.rank, u.rank);
      ASSERT_EQ(g.local_rank, u.local_rank);
      ASSERT_EQ(g.producer, u.producer);
      ASSERT_EQ(g.severity, u.severity);
      if (u.ts_us != 0) {
        ASSERT_EQ(g.ts_has_year, u.ts_has_year ? 1 : 0);
        ASSERT_LE(g.min_ts_us, u.ts_us);
        ASSERT_GE(g.max_ts_us, u.ts_us);
      }
      ASSERT_LE(g.first_line, u.line_no);
      ASSERT_GE(g.last_line, u.line_no);
      ASSERT_EQ(l.has_progress, i % 5 == 0);
      if (l.has_progress) {
        auto p = bar(static_cast<int64_t>(i));
        ASSERT_EQ(l.progress.source, p.source);
        ASSERT_EQ(l.progress.label, p.label);
        ASSERT_EQ(l.progress.unit, p.unit);
        ASSERT_EQ(l.progress.step, p.step);
        ASSERT_EQ(l.progress.total, p.total);
        ASSERT_EQ(l.progress.seconds_per_step, p.seconds_per_step);
        ASSERT_EQ(l.progress.epoch, -1);
        ASSERT_EQ(l.progress.loss, 0.5);
      }
    }
    ASSERT_TRUE(reader.error().empty()) << reader.error();
    for (size_t g = 0; g < b.groups.size(); ++g) ASSERT_EQ(rows_of_group[g], b.groups[g].rows);
  }
  EXPECT_EQ(i, lines.size());
}

// Either layout: the other kinds' blocks of rows, the progress lines' of columns.
TEST(LineBlocks, EveryLineAndItsAttributionSurvivesTheRoundTripInRows) {
  every_line_survives_the_round_trip(BlockLayout::kRows);
}

TEST(LineBlocks, EveryLineAndItsAttributionSurvivesTheRoundTripInColumns) {
  every_line_survives_the_round_trip(BlockLayout::kColumns);
}

TEST(LineBlocks, AGroupGathersAStreamsLinesWhereverTheyAreInTheBlock) {
  LineEncoder enc;
  auto line = [](int64_t n, int rank, int64_t ts, bool year = true) {
    UnparsedLine u;
    u.line_no = n;
    u.rank = rank;
    u.ts_us = ts;
    u.ts_has_year = year;
    u.producer = "plain";
    u.text = "x";
    return u;
  };
  // Three ranks interleaved in one console, as a tee'd node log has them.
  for (int n = 1; n <= 30; ++n) enc.add(line(n, n % 3, 100 + n), LineKind::kUnparsed);
  enc.add(line(31, 0, 0), LineKind::kUnparsed);           // no time: joins rank 0's
  enc.add(line(32, 0, 500, false), LineKind::kUnparsed);  // a time without a year: a group of its own
  EncodedLines e = enc.take();
  ASSERT_EQ(e.blocks.size(), 1u);
  const auto& groups = e.blocks[0].groups;
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].rank, 1);
  EXPECT_EQ(groups[0].rows, 10);
  EXPECT_EQ(groups[0].first_line, 1);
  EXPECT_EQ(groups[0].last_line, 28);
  EXPECT_EQ(groups[0].min_ts_us, 101);
  EXPECT_EQ(groups[0].max_ts_us, 128);
  EXPECT_EQ(groups[2].rank, 0);
  EXPECT_EQ(groups[2].rows, 11);
  EXPECT_EQ(groups[3].ts_has_year, 0);
}

TEST(LineBlocks, DamageIsReportedNotDecoded) {
  LineEncoder enc;
  for (const auto& u : varied_lines(100)) enc.add(u, LineKind::kUnparsed);
  const std::string good = enc.take().blocks.at(0).data;
  EXPECT_TRUE(LineBlockReader(good).error().empty());
  EXPECT_EQ(LineBlockReader("").error(), "not a compressed line block");
  EXPECT_EQ(LineBlockReader("plain text, not zstd").error(), "not a compressed line block");
  std::string cut = good.substr(0, good.size() - 5);
  EXPECT_NE(LineBlockReader(cut).error().find("does not decompress"), std::string::npos)
      << LineBlockReader(cut).error();
}

// A varint as the block format writes it (LEB128), for bodies built by hand.
void varint(std::string& out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>(v | 0x80));
  out.push_back(static_cast<char>(v));
}

std::string zstd_frame(const std::string& body) {
  std::string out(ZSTD_compressBound(body.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), body.data(), body.size(), 3));
  return out;
}

// A progress line whose text gives back its fields stores only the text; one
// whose fields its text does not give (cut short when stored, or read from
// more than this line) keeps them: either way they come back as read.
TEST(LineBlocks, ProgressFieldsComeFromTheTextOnlyWhereItGivesThemBack) {
  const std::string tqdm = "Epoch 0:  40%|####      | 120/300 [04:48<07:12,  2.40s/it, loss=1.93, v_num=0]";
  const std::string megatron =
      " [2025-06-12 09:16:02] iteration       12/     300 | consumed samples:         6144 | elapsed time per"
      " iteration (ms): 2423.7 | learning rate: 1.996667E-05 | lm loss: 1.946389E+00 |";
  const std::string trainer = "{'loss': 1.942, 'grad_norm': 0.374, 'learning_rate': 1.99e-05, 'epoch': 0.25}";
  std::vector<std::pair<std::string, recognize::TrainingProgress>> lines;
  for (const std::string& text : {tqdm, megatron, trainer}) {
    auto p = recognize::parse_training_progress(text);
    ASSERT_TRUE(p) << text;
    lines.emplace_back(text, *p);
  }
  auto cut = lines[0];
  cut.first = cut.first.substr(0, 30);  // the fields were read from the whole line
  lines.push_back(cut);
  LineEncoder enc;
  for (size_t i = 0; i < lines.size(); ++i) {
    UnparsedLine u;
    u.line_no = static_cast<int64_t>(i + 1);
    u.text = lines[i].first;
    enc.add(u, LineKind::kProgress, &lines[i].second);
  }
  LineBlockReader reader(enc.take().blocks.at(0).data);
  size_t i = 0;
  for (BlockLine l; reader.next(l); ++i) {
    SCOPED_TRACE(lines[i].first);
    ASSERT_TRUE(l.has_progress);
    EXPECT_EQ(l.progress_in_text, i < 3);
    recognize::TrainingProgress storage;
    BlockProgress p = progress_of(l, storage);
    const recognize::TrainingProgress& want = lines[i].second;
    EXPECT_EQ(p.source, want.source);
    EXPECT_EQ(p.label, want.label);
    EXPECT_EQ(p.unit, want.unit);
    EXPECT_EQ(p.step, want.step);
    EXPECT_EQ(p.total, want.total);
    EXPECT_EQ(p.seconds_per_step, want.seconds_per_step);
    EXPECT_EQ(p.epoch, want.epoch);
    EXPECT_EQ(p.loss, want.loss);
  }
  EXPECT_TRUE(reader.error().empty()) << reader.error();
  EXPECT_EQ(i, lines.size());
}

// Databases written before the columnar format (version 3) hold blocks of
// version 2, each row's values one after another: they still read.
TEST(LineBlocks, ARowWiseBlockOfVersion2StillReads) {
  std::string body;
  for (uint64_t v : {2, 2}) varint(body, v);  // version, rows
  // Row 1: group 0, line 5, offset 100, no time, "abc", no progress.
  for (uint64_t v : {0, 10, 200, 0, 3}) varint(body, v);
  body += "abc";
  varint(body, 0);
  // Row 2: group 1, line 6, offset 90, time 1000, "de", a bar: tqdm, "Epoch
  // 0", "it", step 7, total 9, 2.5 s/it, no epoch, loss -0.25.
  for (uint64_t v : {1, 2, 19, 2000 << 1 | 1, 2}) varint(body, v);
  body += "de";
  varint(body, 1);
  for (std::string_view text : {"tqdm", "Epoch 0", "it"}) {
    varint(body, text.size());
    body += text;
  }
  for (uint64_t v : {8, 10}) varint(body, v);
  // Decimals: head 2 + (zigzag(exponent) << 1 | sign), digits; zigzag(-1) = 1, zigzag(-2) = 3.
  for (uint64_t v : {2 + (1 << 1 | 0), 25, 0, 2 + (3 << 1 | 1), 25}) varint(body, v);  // 25e-1; -1; -25e-2
  LineBlockReader reader(zstd_frame(body));
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  BlockLine a, b, none;
  ASSERT_TRUE(reader.next(a));
  ASSERT_TRUE(reader.next(b));
  EXPECT_FALSE(reader.next(none));
  EXPECT_TRUE(reader.error().empty()) << reader.error();
  EXPECT_EQ(a.group, 0);
  EXPECT_EQ(a.line_no, 5);
  EXPECT_EQ(a.byte_offset, 100);
  EXPECT_EQ(a.ts_us, 0);
  EXPECT_EQ(a.text, "abc");
  EXPECT_FALSE(a.has_progress);
  EXPECT_EQ(b.group, 1);
  EXPECT_EQ(b.line_no, 6);
  EXPECT_EQ(b.byte_offset, 90);
  EXPECT_EQ(b.ts_us, 1000);
  EXPECT_EQ(b.text, "de");
  ASSERT_TRUE(b.has_progress);
  EXPECT_EQ(b.progress.source, "tqdm");
  EXPECT_EQ(b.progress.label, "Epoch 0");
  EXPECT_EQ(b.progress.unit, "it");
  EXPECT_EQ(b.progress.step, 7);
  EXPECT_EQ(b.progress.total, 9);
  EXPECT_EQ(b.progress.seconds_per_step, 2.5);
  EXPECT_EQ(b.progress.epoch, -1);
  EXPECT_EQ(b.progress.loss, -0.25);
}

// A block whose column sizes do not add up to its body, or that has neither
// one column (rows) nor seven, is damage.
TEST(LineBlocks, ColumnSizesThatDoNotAddUpAreDamage) {
  std::string body;
  for (uint64_t v : {3, 1, 7}) varint(body, v);            // version, rows, columns
  for (uint64_t v : {1, 1, 1, 1, 1, 3, 1}) varint(body, v);  // the seven columns' sizes
  for (uint64_t v : {0, 2, 0, 0, 3}) varint(body, v);
  body += "abc";
  varint(body, 0);
  LineBlockReader good(zstd_frame(body));
  ASSERT_TRUE(good.error().empty()) << good.error();
  BlockLine line;
  ASSERT_TRUE(good.next(line));
  EXPECT_EQ(line.text, "abc");
  EXPECT_EQ(line.line_no, 1);
  std::string five_columns = body;
  five_columns[2] = 5;  // the column count
  for (std::string damaged : {body + "x", body.substr(0, body.size() - 1), five_columns}) {
    LineBlockReader reader(zstd_frame(damaged));
    EXPECT_EQ(reader.error(), "the column sizes do not add up to the block");
    EXPECT_FALSE(reader.next(line));
  }
}

// The parsing thread's side: progress events and unparsed lines leave the
// rows for the blocks, in line order, and each stream's tally is kept.
TEST(LineSink, EncodesEachKindInItsOwnBlocksAndTalliesTheStreams) {
  recognize::Rows rows;
  auto unparsed = [](int64_t n) {
    UnparsedLine u;
    u.line_no = n;
    u.rank = 2;
    u.producer = "plain";
    u.text = "print " + std::to_string(n);
    return u;
  };
  auto progress = [](int64_t n, int64_t step) {
    recognize::Event e;
    e.kind = recognize::EventKind::kTrainingProgress;
    e.line_no = e.end_line = n;
    e.rank = -1;
    e.pg_rank = 2;  // [PG 0 Rank 2]: the default group's rank is the global one
    e.text = "bar " + std::to_string(step);
    e.detail = bar(step);
    return e;
  };
  recognize::Event other;
  other.kind = recognize::EventKind::kTraceback;
  other.line_no = 4;
  recognize::Event channel;
  channel.kind = recognize::EventKind::kNcclChannel;
  channel.line_no = channel.end_line = 7;
  channel.host = "node1";
  channel.pid = 77;
  channel.text = "Channel 00/02 :    0   1";
  recognize::Event network = channel;
  network.kind = recognize::EventKind::kNcclNetwork;
  network.line_no = network.end_line = 8;
  network.text = "Using network IB";
  rows.events = {progress(1, 10), progress(3, 11), other, progress(5, 12), channel, network};
  rows.unparsed = {unparsed(2), unparsed(6)};
  LineSink sink;
  sink.add(rows);
  ASSERT_EQ(rows.events.size(), 1u) << "the traceback stays an event";
  EXPECT_TRUE(rows.unparsed.empty());
  auto streams = sink.take_streams();
  EncodedLines e = sink.take_lines();
  // A block per kind, numbered apart, each in line order.
  ASSERT_EQ(e.blocks.size(), 4u);
  auto lines_of = [](const LineBlock& b) {
    LineBlockReader reader(b.data);
    std::vector<int64_t> order;
    for (BlockLine l; reader.next(l);) order.push_back(l.line_no);
    return order;
  };
  auto block_of = [&](LineKind kind) -> const LineBlock& {
    auto it = std::find_if(e.blocks.begin(), e.blocks.end(),
                           [&](const LineBlock& b) { return b.groups.at(0).kind == kind; });
    EXPECT_NE(it, e.blocks.end()) << line_kind_name(kind);
    return it == e.blocks.end() ? e.blocks[0] : *it;
  };
  const LineBlock& unparsed_block = block_of(LineKind::kUnparsed);
  const LineBlock& progress_block = block_of(LineKind::kProgress);
  const LineBlock& channel_block = block_of(LineKind::kNcclChannel);
  EXPECT_EQ(lines_of(unparsed_block), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(lines_of(progress_block), (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(lines_of(channel_block), (std::vector<int64_t>{7}));
  EXPECT_EQ(lines_of(block_of(LineKind::kNcclNetwork)), (std::vector<int64_t>{8}));
  EXPECT_EQ(channel_block.groups.at(0).host, "node1");
  EXPECT_EQ(channel_block.groups.at(0).pid, 77);
  EXPECT_NE(unparsed_block.seq, progress_block.seq);
  EXPECT_NE(channel_block.seq, progress_block.seq);
  EXPECT_NE(channel_block.seq, unparsed_block.seq);
  for (const ProgressStream& s : streams) EXPECT_EQ(s.last_bar.block_seq, progress_block.seq);
  // Two streams (bars with and without a label), both of rank 2.
  ASSERT_EQ(streams.size(), 2u);
  const ProgressStream& epoch = streams[0].label == "Epoch 1" ? streams[0] : streams[1];
  EXPECT_EQ(epoch.rank, 2);
  EXPECT_EQ(epoch.last_bar_line, 5);
  EXPECT_EQ(epoch.last_bar_step, 12);
  EXPECT_EQ(epoch.last_bar_text, "bar 12");
  EXPECT_EQ(epoch.timed_lines, 1) << "step 10 has a rate, step 12 none";
  const ProgressStream& plain = streams[0].label.empty() ? streams[0] : streams[1];
  EXPECT_EQ(plain.timed_lines, 1);
  EXPECT_EQ(plain.last_bar_line, 3);
}

// A setup-line sink handed a kind that is no setup line's keeps the line as a
// plain one: it is never dropped, nor filed with NCCL's transport lines.
TEST(LineSink, ALineOfNoSetupKindIsKeptAsAPlainLine) {
  UnparsedLine line;
  line.line_no = 3;
  line.producer = "nccl";
  line.text = "NCCL version 2.21.5+cuda12.4";
  LineSink sink;
  sink.add_setup_line(recognize::EventKind::kNcclVersion, line);
  EncodedLines e = sink.take_lines();
  ASSERT_EQ(e.blocks.size(), 1u);
  EXPECT_EQ(e.blocks[0].groups.at(0).kind, LineKind::kUnparsed);
  LineBlockReader reader(e.blocks[0].data);
  BlockLine l;
  ASSERT_TRUE(reader.next(l));
  EXPECT_EQ(l.line_no, 3);
  EXPECT_FALSE(reader.next(l));
}

// A real ingest: lines no parser knows, in a per-rank file and a console,
// with and without years.

class LineTable : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string rank3;
    for (int i = 1; i <= 5000; ++i) rank3 += "epoch 1 batch " + std::to_string(i) + " something the loop printed\n";
    testing::write_file(tmp_ / "logs/rank3.log", rank3);
    std::string bars;
    for (int i = 1; i <= 50; ++i)
      bars += "[rank5]: Epoch 2:  " + std::to_string(2 * i) + "%|#| " + std::to_string(i) + "/50 [00:10<00:20,  2.00s/it]\n";
    testing::write_file(tmp_ / "logs/trainer.log", bars + "[rank5]: done\n");
    testing::write_file(tmp_ / "logs/console.log",
                        "2024-03-05 10:00:00,123 - root - INFO - starting up\n"
                        "E0709 17:05:38.162814 123 trainer.cc:12] a glog line no parser knows\n"
                        "plain words\n");
    ingest::Options o;
    o.paths = {tmp_ / "logs"};
    o.db_path = tmp_ / "t.db";
    o.job_name = "lines";
    auto r = ingest::run(o);
    ASSERT_TRUE(r) << r.error().message;
    auto db = open_for_reading(tmp_ / "t.db");
    ASSERT_TRUE(db) << db.error().message;
    db_ = std::move(db).value();
  }
  int64_t count(const std::string& sql) {
    auto n = db_.scalar_int(sql);
    EXPECT_TRUE(n) << sql << ": " << (n ? "" : n.error().message);
    return n ? *n : -1;
  }
  std::string text(const std::string& sql) {
    auto st = db_.prepare(sql);
    EXPECT_TRUE(st) << sql;
    if (!st || !st->step()) return "<none>";
    return st->column_is_null(0) ? "<null>" : st->column_text(0);
  }
  TempDir tmp_;
  Connection db_;
};

TEST_F(LineTable, EveryLineComesBackWithItsNumberOffsetAndFileRank) {
  auto st = db_.prepare(
      "SELECT line_no, byte_offset, text, rank FROM unparsed_lines u JOIN files f USING (file_id)"
      " WHERE f.rel_path = 'rank3.log' ORDER BY line_no");
  ASSERT_TRUE(st);
  int64_t n = 0, offset = 0;
  while (st->step()) {
    ++n;
    std::string expected = "epoch 1 batch " + std::to_string(n) + " something the loop printed";
    ASSERT_EQ(st->column_int(0), n);
    ASSERT_EQ(st->column_int(1), offset);
    ASSERT_EQ(st->column_text(2), expected);
    ASSERT_EQ(st->column_int(3), 3);  // from the file's name
    offset += static_cast<int64_t>(expected.size()) + 1;
  }
  EXPECT_EQ(n, 5000);
  EXPECT_EQ(count("SELECT sum(lines_unparsed) FROM files"), count("SELECT count(*) FROM unparsed_lines"));
}

TEST_F(LineTable, AYearLessTimeTakesTheJobsYear) {
  EXPECT_EQ(text("SELECT strftime('%Y-%m-%d %H:%M:%S', ts_us / 1000000, 'unixepoch') || ' ' || ts_has_year"
                 " FROM unparsed_lines WHERE text LIKE '%glog line%'"),
            "2024-07-09 17:05:38 2");
  EXPECT_EQ(text("SELECT ts_has_year FROM unparsed_lines WHERE text = 'plain words'"), "<null>");
}

TEST_F(LineTable, ConstraintsSelectTheSameRowsAsAFullScan) {
  // `+col` keeps SQLite from handing the constraint to the table: the full scan.
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank = 3"),
            count("SELECT count(*) FROM unparsed_lines WHERE +rank = 3"));
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank = 3"), 5000);
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND line_no BETWEEN 100 AND 4100"),
            count("SELECT count(*) FROM unparsed_lines WHERE +file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND +line_no BETWEEN 100 AND 4100"));
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank IS NULL"),
            count("SELECT count(*) FROM unparsed_lines WHERE +rank IS NULL"));
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank IS NULL AND host IS NULL"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE producer = 'glog'"),
            count("SELECT count(*) FROM unparsed_lines WHERE +producer = 'glog'"));
  EXPECT_EQ(count("SELECT max(line_no) FROM unparsed_lines WHERE file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND line_no < 4000"),
            count("SELECT max(line_no) FROM unparsed_lines WHERE +file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND +line_no < 4000"));
  // The table skips lines outside the bounds itself: strict and inclusive,
  // whole, fractional and out-of-range bounds select what SQLite's own
  // comparison selects.
  for (const char* bounds : {"line_no > 100 AND line_no < 4100", "line_no >= 100 AND line_no <= 4100",
                             "line_no > 99.5 AND line_no < 4100.5",
                             "line_no > -1e300 AND line_no < 1e300", "line_no >= 9223372036854775807",
                             "line_no <= -9223372036854775808", "line_no > NULL"}) {
    SCOPED_TRACE(bounds);
    std::string pushed = std::string("SELECT count(*) || ' ' || coalesce(sum(line_no), 0) FROM unparsed_lines WHERE ") + bounds;
    std::string scanned = pushed;
    for (size_t at = scanned.find("line_no"); at != std::string::npos; at = scanned.find("line_no", at + 2))
      scanned.insert(at++, "+");
    EXPECT_EQ(text(pushed), text(scanned));
  }
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank = 3 AND line_no > 100 AND line_no < 4100"), 3999);
  // A bound given as text takes the column's integer affinity, as on a table.
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE line_no >= '100' AND line_no <= '4100'"),
            count("SELECT count(*) FROM unparsed_lines WHERE line_no >= 100 AND line_no <= 4100"));
}

TEST_F(LineTable, ProgressLinesComeBackWithTheFieldsTheirParserRead) {
  EXPECT_EQ(count("SELECT count(*) FROM training_progress WHERE rank = 5 AND source = 'tqdm' AND label = 'Epoch 2'"
                  " AND unit = 'it' AND total = 50 AND seconds_per_step = 2.0"),
            50);
  EXPECT_EQ(count("SELECT sum(step) FROM training_progress"), 50 * 51 / 2);
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE text = 'done'"), 1);
  // Ingest kept the stream's last bar, and the inferred rank of its lines.
  EXPECT_EQ(text("SELECT rank || ' ' || last_bar_line || ' ' || last_bar_step || ' ' || timed_lines"
                 " FROM progress_streams"),
            "5 50 50 50");
}

TEST_F(LineTable, IsReadOnlyAndNamesADamagedOrMissingBlock) {
  db_ = Connection();  // the fixture's reader lets go of the file
  auto db = Connection::open(tmp_ / "t.db", false);
  ASSERT_TRUE(db);
  for (const char* table : {"unparsed_lines", "training_progress"}) {
    Status del = db->exec(std::string("DELETE FROM ") + table);
    ASSERT_FALSE(del) << table;
    EXPECT_NE(del.error().message.find(std::string(table) + " may not be modified"), std::string::npos)
        << del.error().message;
  }
  auto block = db->scalar_int("SELECT min(block_id) FROM line_blocks b WHERE EXISTS"
                              " (SELECT 1 FROM line_groups g WHERE g.block_id = b.block_id AND g.kind = 'unparsed')");
  ASSERT_TRUE(block);
  std::string id = std::to_string(*block);
  ASSERT_TRUE(db->exec("UPDATE line_blocks SET data = substr(data, 1, length(data) - 4) WHERE block_id = " + id));
  auto n = db->scalar_int("SELECT count(*) FROM unparsed_lines");
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("line block " + id + " of file"), std::string::npos) << n.error().message;
  EXPECT_NE(n.error().message.find("is damaged: does not decompress"), std::string::npos) << n.error().message;
  ASSERT_TRUE(db->exec("DELETE FROM line_blocks WHERE block_id = " + id));
  n = db->scalar_int("SELECT count(*) FROM unparsed_lines");
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("line block " + id + " of file"), std::string::npos) << n.error().message;
  EXPECT_NE(n.error().message.find("is missing"), std::string::npos) << n.error().message;
}

TEST_F(LineTable, FiveThousandLinesTakeLessRoomThanTheirText) {
  // 5,000 lines of about 45 bytes: 225 kB as rows; compressed, a few kB.
  EXPECT_LT(count("SELECT sum(length(data)) FROM line_blocks"), 40000);
  EXPECT_LE(count("SELECT count(*) FROM line_groups"), 10);
}

}  // namespace
}  // namespace ncclpm::store
