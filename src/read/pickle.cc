// src/read/pickle.cc
//
// A pickle machine for plain data: the opcodes that build dicts, lists,
// tuples, strings and numbers, with the memo and marks they use; everything
// else (objects, persistent ids) is refused or read as null. Values are nodes
// referred to by pointer, because a memoised dict may be filled after it was
// stored, and a list may even contain itself; an arena owns them all, so a
// cycle or a million-deep nesting is freed in one flat pass.
#include "ncclpm/read/pickle.h"

#include <bit>
#include <cstring>
#include <cstdio>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ncclpm/util/json_writer.h"

namespace ncclpm::read {
namespace {

struct Node;
using Ref = Node*;  // owned by the machine's arena: pickles may hold cycles

struct Node {
  enum Kind { kNone, kBool, kInt, kFloat, kString, kList, kDict, kGlobal } kind = kNone;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;  ///< a string, or a global's "module name"
  std::vector<Ref> items;
  std::vector<std::pair<Ref, Ref>> entries;
};

constexpr size_t kMaxStack = 1 << 22;
constexpr size_t kMaxMemo = 1 << 22;
constexpr int kMaxDepth = 200;
constexpr size_t kMaxJsonBytes = size_t{1} << 30;

// torch's C++ pickler wraps typed lists and dicts in these; their argument is the data.
bool is_data_wrapper(const std::string& global) {
  return global.starts_with("torch.jit._pickle build_") || global == "torch.jit._pickle restore_type_tag";
}

class Machine {
 public:
  explicit Machine(std::string_view data) : data_(data) {}

  Result<Ref> run() {
    while (pos_ < data_.size()) {
      op_at_ = pos_;
      op_ = static_cast<uint8_t>(data_[pos_++]);
      if (op_ == '.') {
        if (stack_.size() != 1 || !marks_.empty()) return fail("STOP with " + std::to_string(stack_.size()) + " values left");
        return stack_.back();
      }
      if (auto e = step()) return *e;
    }
    return fail("the stream ends before its STOP opcode");
  }

 private:
  std::optional<Error> step() {
    switch (op_) {
      case 0x80: return skip(1);  // PROTO
      case 0x95: return skip(8);  // FRAME
      case '(': marks_.push_back(stack_.size()); return std::nullopt;
      case 'N': return push(make(Node::kNone));
      case 0x88: case 0x89: {
        Ref n = make(Node::kBool);
        n->b = op_ == 0x88;
        return push(n);
      }
      case 'J': return fixed_int(4, true);
      case 'K': return fixed_int(1, false);
      case 'M': return fixed_int(2, false);
      case 0x8a: return long_int(1);
      case 0x8b: return long_int(4);
      case 'G': return binfloat();
      case 'I': case 'L': case 'F': return text_number();
      case 'X': case 'T': case 'B': return sized_string(4);
      case 0x8c: case 'U': case 'C': return sized_string(1);
      case 0x8d: case 0x8e: return sized_string(8);
      case '}': return push(make(Node::kDict));
      case ']': case ')': case 0x8f: return push(make(Node::kList));
      case 'd': return collect(Node::kDict);
      case 'l': case 't': case 0x91: return collect(Node::kList);
      case 0x85: case 0x86: case 0x87: return small_tuple(op_ - 0x84);
      case 'a': return append();
      case 'e': case 0x90: return append_marked();
      case 's': return set_item();
      case 'u': return set_items();
      case 'q': return put(read_uint(1));
      case 'r': return put(read_uint(4));
      case 0x94: return put(memo_.size());
      case 'h': return get(read_uint(1));
      case 'j': return get(read_uint(4));
      case '0': return pop_into(nullptr);
      case '1': return pop_mark(nullptr);
      case '2': return stack_.empty() ? fail("DUP on an empty stack") : push(stack_.back());
      case 'c': return global_from_lines();
      case 0x93: return stack_global();
      case 'R': return reduce();
      case 'b': return build();
      case 0x81: return new_object(2);
      case 0x92: return new_object(3);
      default: break;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", op_);
    return fail(std::string("unsupported opcode ") + hex + " (only plain data is read)");
  }

  Ref make(Node::Kind k) {
    arena_.push_back(std::make_unique<Node>());
    arena_.back()->kind = k;
    return arena_.back().get();
  }

  Ref make_int(int64_t v) {
    Ref n = make(Node::kInt);
    n->i = v;
    return n;
  }

  Ref make_string(std::string s) {
    Ref n = make(Node::kString);
    n->s = std::move(s);
    return n;
  }

  Error fail(const std::string& what) const {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", op_);
    return Error::plain("pickle byte " + std::to_string(op_at_) + " (opcode " + hex + "): " + what);
  }

  bool have(size_t n) const { return data_.size() - pos_ >= n; }

  std::optional<Error> skip(size_t n) {
    if (!have(n)) return fail("truncated");
    pos_ += n;
    return std::nullopt;
  }

  // Little-endian unsigned of n bytes; callers check have(n) through uint_or_fail.
  uint64_t read_uint(size_t n) {
    if (!have(n)) {
      truncated_ = true;
      pos_ = data_.size();
      return 0;
    }
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + k])) << (8 * k);
    pos_ += n;
    return v;
  }

  std::optional<Error> push(Ref r) {
    if (stack_.size() >= kMaxStack) return fail("stack deeper than " + std::to_string(kMaxStack));
    stack_.push_back(r);
    return std::nullopt;
  }

  std::optional<Error> pop_into(Ref* out) {
    if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size())) return fail("pop from an empty stack");
    if (out != nullptr) *out = std::move(stack_.back());
    stack_.pop_back();
    return std::nullopt;
  }

  // The values above the last mark, which is dropped.
  std::optional<Error> pop_mark(std::vector<Ref>* out) {
    if (marks_.empty()) return fail("no mark to pop to");
    size_t at = marks_.back();
    marks_.pop_back();
    if (out != nullptr) out->assign(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(at)),
                                    std::make_move_iterator(stack_.end()));
    stack_.resize(at);
    return std::nullopt;
  }

  std::optional<Error> fixed_int(size_t n, bool is_signed) {
    uint64_t v = read_uint(n);
    if (truncated_) return fail("truncated");
    int64_t i = is_signed ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))) : static_cast<int64_t>(v);
    return push(make_int(i));
  }

  // Two's complement little-endian of any length; beyond 64 bits it reads as null.
  std::optional<Error> long_int(size_t length_bytes) {
    uint64_t n = read_uint(length_bytes);
    if (truncated_ || !have(n)) return fail("truncated");
    if (n > 8) {
      pos_ += n;
      return push(make(Node::kNone));
    }
    uint64_t v = read_uint(n);
    if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    return push(make_int(static_cast<int64_t>(v)));
  }

  std::optional<Error> binfloat() {
    if (!have(8)) return fail("truncated");
    uint64_t bits = 0;
    for (size_t k = 0; k < 8; ++k) bits = (bits << 8) | static_cast<uint8_t>(data_[pos_ + k]);  // big-endian
    pos_ += 8;
    Ref n = make(Node::kFloat);
    n->d = std::bit_cast<double>(bits);
    return push(n);
  }

  std::optional<std::string_view> line() {
    size_t end = data_.find('\n', pos_);
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view l = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return l;
  }

  // Protocol 0's INT, LONG and FLOAT: the number as text ("I01" is True).
  std::optional<Error> text_number() {
    auto l = line();
    if (!l) return fail("truncated");
    std::string t(*l);
    if (!t.empty() && t.back() == 'L') t.pop_back();
    if (op_ == 'I' && (t == "00" || t == "01")) {
      Ref n = make(Node::kBool);
      n->b = t == "01";
      return push(n);
    }
    char* end = nullptr;
    if (op_ == 'F') {
      Ref n = make(Node::kFloat);
      n->d = std::strtod(t.c_str(), &end);
      return end == t.c_str() ? fail("not a number: " + t) : push(n);
    }
    long long v = std::strtoll(t.c_str(), &end, 10);
    return end == t.c_str() ? fail("not a number: " + t) : push(make_int(v));
  }

  std::optional<Error> sized_string(size_t length_bytes) {
    uint64_t n = read_uint(length_bytes);
    if (truncated_ || !have(n)) return fail("truncated: a string of " + std::to_string(n) + " bytes");
    std::string s(data_.substr(pos_, n));
    pos_ += n;
    return push(make_string(std::move(s)));
  }

  std::optional<Error> collect(Node::Kind kind) {
    std::vector<Ref> values;
    if (auto e = pop_mark(&values)) return e;
    Ref n = make(kind);
    if (kind == Node::kDict) {
      if (values.size() % 2 != 0) return fail("a dict of an odd number of values");
      for (size_t k = 0; k < values.size(); k += 2) n->entries.emplace_back(values[k], values[k + 1]);
    } else {
      n->items = std::move(values);
    }
    return push(n);
  }

  std::optional<Error> small_tuple(size_t count) {
    if (stack_.size() < count + (marks_.empty() ? 0 : marks_.back())) return fail("tuple of missing values");
    Ref n = make(Node::kList);
    n->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(count), stack_.end());
    stack_.resize(stack_.size() - count);
    return push(n);
  }

  std::optional<Error> append() {
    Ref value;
    if (auto e = pop_into(&value)) return e;
    if (stack_.empty() || stack_.back()->kind != Node::kList) return fail("APPEND to something not a list");
    stack_.back()->items.push_back(std::move(value));
    return std::nullopt;
  }

  std::optional<Error> append_marked() {
    std::vector<Ref> values;
    if (auto e = pop_mark(&values)) return e;
    if (stack_.empty() || stack_.back()->kind != Node::kList) return fail("APPENDS to something not a list");
    for (Ref& v : values) stack_.back()->items.push_back(std::move(v));
    return std::nullopt;
  }

  std::optional<Error> set_item() {
    Ref key, value;
    if (auto e = pop_into(&value)) return e;
    if (auto e = pop_into(&key)) return e;
    if (stack_.empty() || stack_.back()->kind != Node::kDict) return fail("SETITEM on something not a dict");
    stack_.back()->entries.emplace_back(std::move(key), std::move(value));
    return std::nullopt;
  }

  std::optional<Error> set_items() {
    std::vector<Ref> values;
    if (auto e = pop_mark(&values)) return e;
    if (values.size() % 2 != 0) return fail("SETITEMS with an odd number of values");
    if (stack_.empty() || stack_.back()->kind != Node::kDict) return fail("SETITEMS on something not a dict");
    for (size_t k = 0; k < values.size(); k += 2) stack_.back()->entries.emplace_back(values[k], values[k + 1]);
    return std::nullopt;
  }

  std::optional<Error> put(uint64_t key) {
    if (truncated_) return fail("truncated");
    if (stack_.empty()) return fail("memoise from an empty stack");
    if (memo_.size() >= kMaxMemo && memo_.count(key) == 0) return fail("memo larger than " + std::to_string(kMaxMemo));
    memo_[key] = stack_.back();
    return std::nullopt;
  }

  std::optional<Error> get(uint64_t key) {
    if (truncated_) return fail("truncated");
    auto it = memo_.find(key);
    if (it == memo_.end()) return fail("memo key " + std::to_string(key) + " was never stored");
    return push(it->second);
  }

  std::optional<Error> global_from_lines() {
    auto module = line();
    auto name = module ? line() : std::nullopt;
    if (!name) return fail("truncated");
    Ref n = make(Node::kGlobal);
    n->s = std::string(*module) + " " + std::string(*name);
    return push(n);
  }

  std::optional<Error> stack_global() {
    Ref module, name;
    if (auto e = pop_into(&name)) return e;
    if (auto e = pop_into(&module)) return e;
    Ref n = make(Node::kGlobal);
    n->s = module->s + " " + name->s;
    return push(n);
  }

  // A call: the data wrappers give back their data; anything else is not
  // constructed and reads as null.
  std::optional<Error> reduce() {
    Ref args, callable;
    if (auto e = pop_into(&args)) return e;
    if (auto e = pop_into(&callable)) return e;
    if (callable->kind == Node::kGlobal && is_data_wrapper(callable->s) && args->kind == Node::kList &&
        !args->items.empty())
      return push(args->items.front());
    return push(make(Node::kNone));
  }

  std::optional<Error> build() {
    Ref state;
    if (auto e = pop_into(&state)) return e;
    if (stack_.empty()) return fail("BUILD without an object");
    return std::nullopt;
  }

  std::optional<Error> new_object(int operands) {
    for (int k = 0; k < operands; ++k)
      if (auto e = pop_into(nullptr)) return e;
    return push(make(Node::kNone));
  }

  std::string_view data_;
  size_t pos_ = 0, op_at_ = 0;
  uint8_t op_ = 0;
  bool truncated_ = false;
  std::vector<Ref> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Ref> memo_;
  std::vector<std::unique_ptr<Node>> arena_;
};

// A dict key as JSON wants it: a string.
std::string key_text(const Node& n) {
  switch (n.kind) {
    case Node::kString: return n.s;
    case Node::kInt: return std::to_string(n.i);
    case Node::kBool: return n.b ? "True" : "False";
    case Node::kFloat: return std::to_string(n.d);
    case Node::kNone: return "None";
    default: return "?";
  }
}

std::optional<Error> write(util::JsonWriter& w, const Node& n, int depth) {
  if (depth > kMaxDepth) return Error::plain("pickle nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (w.str().size() > kMaxJsonBytes) return Error::plain("pickle expands to more than 1 GiB of data");
  switch (n.kind) {
    case Node::kNone: case Node::kGlobal: w.null(); break;
    case Node::kBool: w.value(n.b); break;
    case Node::kInt: w.value(n.i); break;
    case Node::kFloat: w.value(n.d); break;
    case Node::kString: w.value(n.s); break;
    case Node::kList:
      w.begin_array();
      for (const Ref& item : n.items)
        if (auto e = write(w, *item, depth + 1)) return e;
      w.end_array();
      break;
    case Node::kDict:
      w.begin_object();
      for (const auto& [k, v] : n.entries) {
        w.key(key_text(*k));
        if (auto e = write(w, *v, depth + 1)) return e;
      }
      w.end_object();
      break;
  }
  return std::nullopt;
}

}  // namespace

bool looks_like_pickle(std::string_view head) {
  return head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5;
}

Result<std::string> pickle_to_json(std::string_view data) {
  Machine m(data);
  auto root = m.run();
  if (!root) return root.take_error();
  util::JsonWriter w(false);
  if (auto e = write(w, **root, 0)) return *e;
  return w.str();
}

}  // namespace ncclpm::read
