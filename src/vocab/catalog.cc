// src/vocab/catalog.cc
#include "ncclpm/vocab/catalog.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "ncclpm/vocab/categories.h"
#include "ncclpm/util/text.h"

namespace fs = std::filesystem;

namespace ncclpm::vocab {
namespace {

// Formats with less literal text than this must match at the start of a
// line's message: "%s: %s" found anywhere would claim half the log. (A format
// that starts with a conversion gains little from the anchor: its %s matches
// any start.)
constexpr size_t kMinUnanchoredLiteral = 12;
// Below this a format says nothing recognizable and is not matched at all.
constexpr size_t kMinLiteral = 4;
// A format with at least half as much again literal text is also matched by
// its head (the start up to this much literal text) when a line was cut short
// (a paste wrapped at 80 columns keeps about 50 characters of an NCCL WARN).
constexpr size_t kHeadLiteral = 32;
constexpr size_t kLiteralForAHead = kHeadLiteral * 3 / 2;
constexpr size_t kMaxMatchedBytes = 4096;

const std::set<std::string> kSeverities = {"critical", "error", "warning", "notice"};
const std::set<std::string> kRoles = {"cause", "consequence", "either"};
const char* const kHeader = "format\tcategory\tseverity\trole\tversions\tsource";

// Length of the printf conversion that starts at s[0] == '%', or 0.
size_t conversion_length(std::string_view s) {
  size_t i = 1;
  while (i < s.size() && std::string_view("-+ #0'").find(s[i]) != std::string_view::npos) ++i;
  while (i < s.size() && (isdigit(static_cast<unsigned char>(s[i])) || s[i] == '*')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && (isdigit(static_cast<unsigned char>(s[i])) || s[i] == '*')) ++i;
  }
  while (i < s.size() && std::string_view("hlLzjtq").find(s[i]) != std::string_view::npos) ++i;
  if (i < s.size() && std::string_view("diouxXeEfFgGaAcspnm%").find(s[i]) != std::string_view::npos) return i + 1;
  return 0;
}

const char* class_of(char conversion) {
  switch (conversion) {
    case 'd': case 'i': return "-?\\d+";
    case 'u': return "\\d+";
    case 'o': return "[0-7]+";
    case 'x': case 'X': return "(?:0[xX])?[0-9a-fA-F]+";
    case 'p': return "(?:0x[0-9a-fA-F]+|\\(nil\\)|0)";
    case 'c': return ".";
    case 'n': return "";
    case '%': return "%";
    case 's': case 'm': return ".*?";  // %m: glibc's strerror(errno)
    default: return "[-+]?(?:\\d+\\.?\\d*(?:[eE][-+]?\\d+)?|inf|nan)";  // e f g a
  }
}

// The catalogue escapes tab, newline and backslash; a message is matched on
// its first line, as logs show it.
std::string unescape_first_line(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char c = s[++i];
    if (c == 'n') break;
    out += c == 't' ? '\t' : c;
  }
  return std::string(util::trim(out));
}

void load_file(const fs::path& file, std::vector<CatalogEntry>& out, std::vector<Error>& problems) {
  std::ifstream in(file);
  if (!in) {
    problems.push_back(Error::at(file.string(), "cannot read the catalogue"));
    return;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) {
      if (line != kHeader)
        problems.push_back(Error::at_line(file.string(), 1, "catalogue header must be '" + std::string(kHeader) + "'"));
      continue;
    }
    if (line.empty()) continue;
    auto cols = util::split(line, '\t');
    if (cols.size() != 6) {
      problems.push_back(Error::at_line(file.string(), n, "expected 6 tab-separated columns, found " +
                                                              std::to_string(cols.size())));
      continue;
    }
    CatalogEntry e{unescape_first_line(cols[0]), std::string(cols[1]), std::string(cols[2]), std::string(cols[3]),
                   std::string(cols[4]), std::string(cols[5]), file.string(), n};
    if (!is_category(e.category))
      problems.push_back(Error::at_line(file.string(), n, "unknown category " + util::quoted(e.category)));
    if (!kSeverities.count(e.severity))
      problems.push_back(Error::at_line(file.string(), n, "severity " + util::quoted(e.severity) +
                                                              " is not critical, error, warning or notice"));
    if (!kRoles.count(e.role))
      problems.push_back(
          Error::at_line(file.string(), n, "role " + util::quoted(e.role) + " is not cause, consequence or either"));
    out.push_back(std::move(e));
  }
  if (n == 0) problems.push_back(Error::at(file.string(), "empty catalogue: the header line is missing"));
}

// Walks `format` counting its literal (non-space) characters, stopping once
// `stop_at` are counted; returns the count, and in `end` where it stopped.
size_t count_literal(std::string_view format, size_t stop_at, size_t* end) {
  size_t literal = 0, i = 0;
  while (i < format.size() && literal < stop_at) {
    size_t n = format[i] == '%' ? conversion_length(format.substr(i)) : 0;
    if (n == 0) {
      literal += format[i++] == ' ' ? 0 : 1;
    } else {
      i += n;
    }
  }
  if (end != nullptr) *end = i;
  return literal;
}

// The start of a long format, up to kHeadLiteral literal characters and cut
// before a conversion; empty for formats too short to need one.
std::string_view head_of(std::string_view format) {
  if (Catalog::literal_length(format) < kLiteralForAHead) return {};
  size_t end = 0;
  count_literal(format, kHeadLiteral, &end);
  return format.substr(0, end);
}

// Whether `line` could be `format` printed and then cut short: each literal
// piece follows in order, values stand where conversions are, and the line
// may end anywhere. (A head match alone would take "Stack trace of the
// failed collective not found, so ..." for another message sharing its start.)
bool cut_from(std::string_view format, std::string_view line) {
  size_t at = 0;  // in line
  for (size_t i = 0; i < format.size();) {
    if (at >= line.size()) return true;
    size_t n = format[i] == '%' ? conversion_length(format.substr(i)) : 0;
    if (n == 0) {
      if (line[at] != format[i]) return false;
      ++at;
      ++i;
      continue;
    }
    // A value: up to where the next literal piece starts (or the line ends).
    i += n;
    size_t next = i;
    while (next < format.size() && format[next] != '%') ++next;
    std::string_view piece = format.substr(i, next - i);
    if (piece.empty()) continue;
    size_t found = line.find(piece, at);
    if (found == std::string_view::npos) return true;  // cut inside the value, or inside the piece after it
    at = found;
  }
  return at >= line.size();
}

}  // namespace

// One RE2::Set and, for each of its patterns, the entry it stands for.
struct Catalog::PatternSet {
  std::unique_ptr<RE2::Set> set;
  std::vector<size_t> entry_of;  // set index -> entries_ index
};

struct Catalog::Compiled {
  PatternSet whole;  // every format
  PatternSet heads;  // the start of each long format: a line cut short (a paste, a clipped field)
  std::vector<size_t> literal;  // entries_ index -> literal_length of its format, for ranking matches
};

Catalog::Catalog() = default;
Catalog::Catalog(Catalog&&) noexcept = default;
Catalog& Catalog::operator=(Catalog&&) noexcept = default;
Catalog::~Catalog() = default;

std::string Catalog::pattern_of(std::string_view format) {
  std::string out;
  // "%s: message": a program's or host's name in front, which a framer may
  // already have peeled off as a launcher prefix (mpirun's, srun's).
  if (format.starts_with("%s: ")) {
    out = "(?:.*?: )?";
    format.remove_prefix(4);
  }
  for (size_t i = 0; i < format.size();) {
    size_t n = format[i] == '%' ? conversion_length(format.substr(i)) : 0;
    if (n == 0) {
      out += RE2::QuoteMeta(std::string(1, format[i]));
      ++i;
      continue;
    }
    out += class_of(format[i + n - 1]);
    i += n;
  }
  return out;
}

size_t Catalog::literal_length(std::string_view format) {
  return count_literal(format, std::string_view::npos, nullptr);
}

Result<Catalog, std::vector<Error>> Catalog::load(const std::vector<fs::path>& rule_dirs) {
  std::vector<Error> problems;
  Catalog c;
  for (const fs::path& dir : rule_dirs) {
    std::error_code ec;
    fs::path cat = fs::is_directory(dir, ec) ? dir / "catalog" : fs::path();
    if (cat.empty() || !fs::is_directory(cat, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(cat, ec))
      if (e.path().extension() == ".tsv") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) load_file(f, c.entries_, problems);
  }
  c.compiled_ = std::make_unique<Compiled>();
  for (const CatalogEntry& e : c.entries_) c.compiled_->literal.push_back(literal_length(e.format));
  auto build = [&](PatternSet& ps, auto pattern_for) {
    RE2::Options opts;
    opts.set_log_errors(false);
    opts.set_max_mem(256 << 20);
    ps.set = std::make_unique<RE2::Set>(opts, RE2::UNANCHORED);
    for (size_t i = 0; i < c.entries_.size(); ++i) {
      std::string p = pattern_for(c.entries_[i]);
      if (p.empty()) continue;
      std::string why;
      if (ps.set->Add(p, &why) < 0) {
        problems.push_back(Error::at_line(c.entries_[i].catalog, c.entries_[i].line, "format does not compile: " + why));
        continue;
      }
      ps.entry_of.push_back(i);
    }
    if (!ps.set->Compile())
      problems.push_back(Error::plain("the catalogue patterns do not fit in the matcher's memory together"));
  };
  build(c.compiled_->whole, [](const CatalogEntry& e) {
    size_t literal = literal_length(e.format);
    if (literal < kMinLiteral) return std::string();
    return (literal < kMinUnanchoredLiteral ? "^" : "") + pattern_of(e.format);
  });
  build(c.compiled_->heads, [](const CatalogEntry& e) {
    std::string_view head = head_of(e.format);
    // Anchored, so that a head is not taken from the middle of other text;
    // an exception's type may stand before it ("RuntimeError: The server ...").
    return head.empty() ? std::string() : "^(?:[\\w.]+: )?" + pattern_of(head);
  });
  if (!problems.empty()) return problems;
  // While loading, `catalog` held the file's path so that errors name it.
  for (CatalogEntry& e : c.entries_) e.catalog = fs::path(e.catalog).stem().string();
  return c;
}

const CatalogEntry* Catalog::best_match(const PatternSet& ps, std::string_view text) const {
  // Messages are short; a 4 MiB line would only cost the set's DFA its memory
  // (and a failed match would read as "no match").
  text = text.substr(0, kMaxMatchedBytes);
  std::vector<int> hits;
  if (ps.entry_of.empty() || !ps.set->Match(re2::StringPiece(text.data(), text.size()), &hits)) return nullptr;
  size_t best = 0, best_literal = 0;
  bool found = false;
  for (int h : hits) {
    size_t index = ps.entry_of[static_cast<size_t>(h)];
    size_t literal = compiled_->literal[index];
    // The most literal text wins; among equals, the first loaded (catalogues
    // in name order, rows in file order).
    if (!found || literal > best_literal || (literal == best_literal && index < best)) {
      best = index;
      best_literal = literal;
      found = true;
    }
  }
  return found ? &entries_[best] : nullptr;
}

const CatalogEntry* Catalog::classify(std::string_view text) const {
  if (!compiled_) return nullptr;
  if (const CatalogEntry* e = best_match(compiled_->whole, text)) return e;
  // A long message cut short still starts as its format does, and goes on as
  // it would until the cut.
  if (text.size() < kHeadLiteral) return nullptr;
  const CatalogEntry* e = best_match(compiled_->heads, text);
  if (e == nullptr) return nullptr;
  // The message may follow words of its own line ("RuntimeError: " before
  // PyTorch's text): the cut is checked from where the format's text begins.
  std::string_view line = util::trim(text);
  std::string_view lead = std::string_view(e->format).substr(0, std::min(e->format.find('%'), kHeadLiteral));
  if (size_t at = lead.empty() ? 0 : line.find(lead); at != std::string_view::npos) line.remove_prefix(at);
  return cut_from(e->format, line) ? e : nullptr;
}

}  // namespace ncclpm::vocab
