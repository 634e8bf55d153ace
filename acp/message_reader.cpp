// Incremental JSON-RPC message parsing: Boost.JSON's basic_parser with a value builder of our
// own, which appends string pieces straight into the final string (the stock parser collects a
// long string in a temporary buffer and copies it at the end) and notes the top-level id.
#include "acp/message_reader.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>
#include <optional>
#include <vector>

namespace acp {

namespace json = boost::json;

namespace {

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::size_t first_non_space(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_json_space(s[i])) ++i;
  return i;
}

// `id` when JSON-RPC allows it as an id (a string or an integer), else null.
json::value valid_id(const json::value& id) {
  return id.is_string() || id.is_int64() || id.is_uint64() ? id : json::value(nullptr);
}

// A long string being read, in parts of their own pages, joined once into a string of its exact
// size when it ends. A json::string grown by doubling holds its old and new buffers at once at
// each growth (a refused 300 MiB line peaked at 503 MiB, twice the limit), and a part of its own
// pages goes back to the system as soon as it is copied, which memory from malloc's heap need not.
class LongString {
 public:
  LongString() = default;
  LongString(const LongString&) = delete;
  LongString& operator=(const LongString&) = delete;
  ~LongString() { clear(); }

  bool empty() const { return parts_.empty(); }
  std::size_t size() const {
    std::size_t n = 0;
    for (const auto& p : parts_) n += p.size;
    return n;
  }
  void append(json::string_view s) {
    while (!s.empty()) {
      if (parts_.empty() || parts_.back().size == kPartBytes) parts_.push_back(Part{new_part(), 0});
      Part& last = parts_.back();
      const std::size_t n = std::min(s.size(), kPartBytes - last.size);
      std::memcpy(last.data + last.size, s.data(), n);
      last.size += n;
      s.remove_prefix(n);
    }
  }
  // Appends the whole to `out` (reserved to its final size by the caller), freeing each part once copied.
  void move_into(json::string& out) {
    for (auto& p : parts_) {
      out.append(json::string_view(p.data, p.size));
      ::munmap(p.data, kPartBytes);
      p.data = nullptr;
    }
    parts_.clear();
  }
  void clear() {
    for (auto& p : parts_)
      if (p.data) ::munmap(p.data, kPartBytes);
    parts_.clear();
  }

 private:
  static constexpr std::size_t kPartBytes = 1u << 20;
  struct Part {
    char* data;
    std::size_t size;
  };
  static char* new_part() {
    void* p = ::mmap(nullptr, kPartBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<char*>(p);
  }
  std::vector<Part> parts_;
};

// The basic_parser handler: builds the json::value of one document.
class ValueBuilder {
 public:
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code&) { return open(json::array()); }
  bool on_array_end(std::size_t, json::error_code&) { return close(); }
  bool on_object_begin(json::error_code&) { return open(json::object()); }
  bool on_object_end(std::size_t, json::error_code&) { return close(); }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    append_text(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    append_text(s);
    return add(json::value(take_text()));
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    key_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    key_.append(s.data(), s.size());
    // Noted at the key: a response broken inside its result is still a response.
    if (frames_.size() == 1 && (key_ == "result" || key_ == "error")) is_response_ = true;
    frames_.back().key = std::move(key_);
    key_.clear();
    return true;
  }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) { return add(i); }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) { return add(u); }
  bool on_double(double d, json::string_view, json::error_code&) { return add(d); }
  bool on_bool(bool b, json::error_code&) { return add(b); }
  bool on_null(json::error_code&) { return add(nullptr); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

  json::value take_root() { return std::move(root_); }
  // The top-level "id" when it may be answered: read, and the message is not a response (a
  // response's id is one of ours; answering it would look like the reply to our own call).
  // Only an id JSON-RPC allows (a string or an integer): found by the fuzzer, an id of 4e99999
  // (a double, infinite) was echoed back as a number no peer can parse.
  json::value reply_id() const { return id_seen_ && !is_response_ ? valid_id(id_) : json::value(nullptr); }
  // The top-level "id" of a response, when read: the call it answers.
  json::value response_id() const { return id_seen_ && is_response_ ? valid_id(id_) : json::value(nullptr); }
  bool is_response() const { return is_response_; }

  void reset() {
    frames_.clear();
    string_ = json::string();
    long_.clear();
    key_.clear();
    root_ = nullptr;
    id_ = nullptr;
    id_seen_ = is_response_ = false;
  }

 private:
  struct Frame {
    json::value container;
    std::string key;  // of the member being read, in an object
  };

  // Up to kShortString bytes a string grows in place; past that in LongString's parts.
  static constexpr std::size_t kShortString = 1u << 20;
  void append_text(json::string_view s) {
    if (long_.empty() && string_.size() + s.size() <= kShortString) string_.append(s);
    else long_.append(s);
  }
  json::string take_text() {
    if (long_.empty()) return std::exchange(string_, json::string());
    json::string out;
    out.reserve(string_.size() + long_.size());  // exact on an empty string: one buffer, filled once
    out.append(string_);
    string_ = json::string();
    long_.move_into(out);
    return out;
  }

  bool open(json::value container) {
    frames_.push_back(Frame{std::move(container), {}});
    return true;
  }
  bool close() {
    json::value done = std::move(frames_.back().container);
    frames_.pop_back();
    return add(std::move(done));
  }
  bool add(json::value v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Frame& top = frames_.back();
    if (auto* array = top.container.if_array()) {
      array->push_back(std::move(v));
      return true;
    }
    if (frames_.size() == 1 && top.key == "id") {
      id_ = v;
      id_seen_ = true;
    }
    top.container.get_object().insert_or_assign(top.key, std::move(v));
    return true;
  }
  std::vector<Frame> frames_;
  json::string string_;
  LongString long_;
  std::string key_;
  json::value root_;
  json::value id_;
  bool id_seen_ = false;
  bool is_response_ = false;
};

json::parse_options options_with_depth(std::size_t max_depth) {
  json::parse_options opt;
  opt.max_depth = max_depth;
  return opt;
}

// The rest of a line after the parser refused a value as too deep. Only nesting and strings are
// tracked (no recursion, no allocation beyond a short key), so that a top-level "id" written
// after the deep part is still found and the sender is answered under its own id.
class TailScanner {
 public:
  // `open`: the containers open where the scan starts (the top-level object is the first).
  explicit TailScanner(std::size_t open) : depth_(open) {}

  void feed(std::string_view s) {
    for (char c : s) step(c);
  }
  // Whether an "id" was found after the deep part.
  bool found_id() const { return id_done_; }
  bool is_response() const { return response_; }
  json::value id() const {
    json::error_code ec;
    auto v = json::parse(id_raw_, ec);
    return ec ? json::value(nullptr) : v;
  }

 private:
  // Ids longer than this are no id anyone uses; a key longer than "result" is none we look for.
  static constexpr std::size_t kMaxId = 256;
  static constexpr std::size_t kMaxKey = 8;

  void step(char c) {
    const bool top = depth_ == 1;
    if (in_string_) {
      if (top && reading_id_ && id_raw_.size() < kMaxId) id_raw_ += c;
      if (top && in_key_ && key_.size() <= kMaxKey && !(c == '"' && !escaped_)) key_ += c;
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = in_key_ = false;
      return;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        if (top && expect_key_) {
          in_key_ = true;
          key_.clear();
        } else if (top && reading_id_) {
          id_raw_ += c;
        }
        return;
      case '{':
      case '[':
        if (top) {  // a container is no id
          reading_id_ = false;
          id_raw_.clear();
        }
        ++depth_;
        return;
      case '}':
      case ']':
        if (top) end_member();
        if (depth_ > 0) --depth_;
        return;
      case ':':
        if (top) {
          expect_key_ = false;
          if (key_ == "result" || key_ == "error") response_ = true;
          reading_id_ = key_ == "id";
          if (reading_id_) id_raw_.clear();
        }
        return;
      case ',':
        if (top) {
          end_member();
          expect_key_ = true;
        }
        return;
      default:
        if (top && reading_id_ && !is_json_space(c) && id_raw_.size() < kMaxId) id_raw_ += c;
    }
  }
  void end_member() {
    if (reading_id_ && !id_raw_.empty()) id_done_ = true;
    reading_id_ = false;
  }

  std::size_t depth_;
  bool in_string_ = false, escaped_ = false, in_key_ = false;
  bool expect_key_ = false;  // the scan starts inside a value, never at a key
  bool reading_id_ = false, id_done_ = false, response_ = false;
  std::string key_, id_raw_;
};

}  // namespace

// The state of the line being read.
class MessageReader::LineParser {
 public:
  LineParser(std::size_t max_bytes, std::size_t max_depth)
      : max_bytes_(max_bytes), max_depth_(max_depth), parser_(options_with_depth(max_depth)) {}

  void feed(std::string_view s) {
    // Only what fits in the limit reaches the parser: the value being built (a long string, most
    // often) never grows past it, so a refused line costs the limit at most, not its own size.
    const std::size_t room = bytes_ < max_bytes_ ? max_bytes_ - bytes_ : 0;
    bytes_ += s.size();
    if (tail_) tail_->feed(s);
    if (result_.problem == IncomingMessage::Problem::None) parse(s.substr(0, room), s.substr(std::min(room, s.size())));
    if (bytes_ > max_bytes_) overflow();
  }

  // Ends the line; nullopt for a blank one.
  std::optional<IncomingMessage> finish() {
    if (result_.problem == IncomingMessage::Problem::None) {
      if (!started_) return std::nullopt;
      if (!parser_.done()) {
        json::error_code ec;
        parser_.write_some(false, "", 0, ec);
        if (ec) fail(ec);
      }
      if (result_.problem == IncomingMessage::Problem::None) result_.value = parser_.handler().take_root();
    }
    if (tail_ && result_.reply_id.is_null() && result_.response_id.is_null() && tail_->found_id()) {
      // A response's id, if a "result" or "error" came before the deep part or after it.
      auto& id = response_seen_ || tail_->is_response() ? result_.response_id : result_.reply_id;
      id = valid_id(tail_->id());
    }
    IncomingMessage out = std::move(result_);
    out.bytes = bytes_;
    restart();
    return out;
  }

 private:
  // `s` goes to the parser; `past_limit`, the rest of the read, only to a too-deep value's scan.
  void parse(std::string_view s, std::string_view past_limit) {
    if (!started_) {
      s.remove_prefix(first_non_space(s));
      if (s.empty()) return;
      started_ = true;
    }
    if (parser_.done()) {
      if (first_non_space(s) < s.size()) fail(json::make_error_code(json::error::extra_data));
      return;
    }
    json::error_code ec;
    const std::size_t used = parser_.write_some(true, s.data(), s.size(), ec);
    if (ec == json::error::too_deep) {
      // Open where the parser stopped: the containers it held, at the bracket it refused.
      tail_.emplace(max_depth_);
      tail_->feed(s.substr(used));
      tail_->feed(past_limit);
    }
    if (ec) fail(ec);
    else if (used < s.size() && first_non_space(s.substr(used)) < s.size() - used)
      fail(json::make_error_code(json::error::extra_data));
  }

  // The line is too long: its id (if read) is kept, the rest dropped.
  void overflow() {
    if (result_.problem != IncomingMessage::Problem::None) return;
    result_.problem = IncomingMessage::Problem::TooLarge;
    note_ids();
    result_.error = "Message too large: over the limit of " + std::to_string(max_bytes_) + " bytes";
    drop_partial_value();
  }

  void fail(json::error_code ec) {
    const bool too_deep = ec == json::error::too_deep;
    response_seen_ = parser_.handler().is_response();
    result_.problem = too_deep ? IncomingMessage::Problem::TooDeep : IncomingMessage::Problem::Syntax;
    result_.error = too_deep ? "nested deeper than " + std::to_string(max_depth_) + " levels" : ec.message();
    note_ids();
    drop_partial_value();
  }
  void note_ids() {
    result_.reply_id = parser_.handler().reply_id();
    result_.response_id = parser_.handler().response_id();
  }
  void drop_partial_value() {
    parser_.reset();
    parser_.handler().reset();
  }
  void restart() {
    drop_partial_value();
    tail_.reset();
    response_seen_ = false;
    result_ = IncomingMessage{};
    started_ = false;
    bytes_ = 0;
  }

  std::size_t max_bytes_;
  std::size_t max_depth_;
  json::basic_parser<ValueBuilder> parser_;
  IncomingMessage result_;
  std::optional<TailScanner> tail_;  // after a too-deep value: looks for the id further on
  bool response_seen_ = false;       // before the too-deep value
  bool started_ = false;
  std::size_t bytes_ = 0;
};

MessageReader::MessageReader(Sink& sink, std::size_t max_line_bytes, std::size_t max_depth)
    : sink_(sink), line_(std::make_unique<LineParser>(max_line_bytes, max_depth)) {}

MessageReader::~MessageReader() = default;

void MessageReader::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    const std::size_t take = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - bytes.data()) : bytes.size();
    line_->feed(bytes.substr(0, take));
    if (!nl) return;
    bytes.remove_prefix(take + 1);
    end_line();
  }
}

void MessageReader::end_line() {
  if (auto message = line_->finish()) sink_.on_message(std::move(*message));
}

void MessageReader::finish() { end_line(); }

IncomingMessage MessageReader::parse_line(std::string_view line, std::size_t max_depth) {
  LineParser parser(static_cast<std::size_t>(-1), max_depth);
  parser.feed(line);
  if (auto message = parser.finish()) return std::move(*message);
  IncomingMessage blank;
  blank.problem = IncomingMessage::Problem::Syntax;
  blank.error = "empty message";
  return blank;
}

}  // namespace acp
