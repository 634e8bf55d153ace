// Parsing the Codex patch envelope (`*** Begin Patch` ... `*** End Patch`) into ops and hunks,
// with errors that name the line.
#include <regex>
#include <set>

#include "runtime/tools/apply_patch.hpp"
#include "runtime/tools/apply_patch_detail.hpp"

namespace runtime::tools {

namespace {

using patch_detail::trim;
using patch_detail::trim_right;

constexpr std::string_view kBegin = "*** Begin Patch";
constexpr std::string_view kEnd = "*** End Patch";
constexpr std::string_view kAdd = "*** Add File:";
constexpr std::string_view kDelete = "*** Delete File:";
constexpr std::string_view kUpdate = "*** Update File:";
constexpr std::string_view kMove = "*** Move to:";
constexpr std::string_view kEof = "*** End of File";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A patch line with its 1-based line number in the text given to parse_patch.
struct Line {
  std::string_view text;  // without the line terminator (and without a trailing '\r')
  std::size_t number;
};

std::vector<Line> split_patch_lines(std::string_view text) {
  std::vector<Line> out;
  std::size_t number = 1;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = nl == std::string_view::npos ? text : text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back({line, number++});
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

PatchError parse_error(std::size_t line, const std::string& what) {
  return PatchError{"line " + std::to_string(line) + ": " + what};
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// `@@ -12,7 +12,8 @@ rest` (a unified-diff hunk header) carries no usable line numbers for us;
// keep only the text after the second `@@`, which git puts there as a context hint.
std::optional<std::string> context_from_header(std::string_view rest) {
  static const std::regex unified(R"(^-\d+(,\d+)? \+\d+(,\d+)? @@(.*)$)");
  std::string r(trim(rest));
  std::smatch m;
  if (std::regex_match(r, m, unified)) r = std::string(trim(std::string_view(m[3].str())));
  if (r.empty()) return std::nullopt;
  return r;
}

bool is_chunk_header(std::string_view raw) {
  auto t = trim_right(raw);
  return t == "@@" || starts_with(t, "@@ ");
}

// The chunks of one `*** Update File:`, filled line by line.
struct UpdateChunks {
  UpdateFileOp& op;
  std::optional<PatchChunk> chunk;  // the chunk being filled
  std::size_t chunk_line = 0;       // where it started (for "no lines" errors)
  std::size_t pending_blank = 0;    // empty patch lines not yet known to be inside the chunk

  bool has_lines() const {
    return chunk && (!chunk->old_lines.empty() || !chunk->new_lines.empty() || pending_blank > 0);
  }
  void open(std::size_t line) {
    chunk.emplace();
    chunk_line = line;
  }
  // Closes the current chunk. Empty lines right before the next `@@`, `***` marker or the end
  // of the patch separate chunks rather than being context (Codex writes them that way).
  std::optional<PatchError> close() {
    if (!chunk) return std::nullopt;
    pending_blank = 0;
    if (chunk->old_lines.empty() && chunk->new_lines.empty())
      return parse_error(chunk_line, "chunk of " + quoted(op.path) + " has no lines");
    op.chunks.push_back(std::move(*chunk));
    chunk.reset();
    return std::nullopt;
  }
  void flush_blank() {
    for (; pending_blank > 0; --pending_blank) {
      chunk->old_lines.emplace_back();
      chunk->new_lines.emplace_back();
    }
  }
  std::optional<PatchError> end_of_file(std::size_t line) {
    if (!has_lines()) return parse_error(line, quoted(kEof) + " must follow the lines of a chunk");
    flush_blank();
    chunk->is_end_of_file = true;
    return close();
  }
  std::optional<PatchError> header(std::optional<std::string> context, std::size_t line) {
    if (!chunk || has_lines()) {
      if (auto e = close()) return e;
      open(line);
    }  // else several `@@` lines in a row narrow the position step by step
    if (context) chunk->context_headers.push_back(std::move(*context));
    return std::nullopt;
  }
  // A ' ', '+' or '-' line, or an empty (or whitespace-only) one.
  std::optional<PatchError> line(std::string_view raw, std::size_t number) {
    if (!chunk) {
      if (trim(raw).empty()) return std::nullopt;  // blank lines between chunks
      if (!op.chunks.empty())
        return parse_error(number, "expected '@@' before the next chunk of " + quoted(op.path) + ", got " + quoted(raw));
      open(number);  // the first chunk may omit `@@`
    }
    if (raw.empty() || (raw.front() != ' ' && raw.front() != '+' && raw.front() != '-')) {
      ++pending_blank;  // empty context, unless trailing
      return std::nullopt;
    }
    flush_blank();
    std::string text(raw.substr(1));
    if (raw.front() != '+') chunk->old_lines.push_back(text);
    if (raw.front() != '-') chunk->new_lines.push_back(std::move(text));
    return std::nullopt;
  }
};

class Parser {
 public:
  Parser(std::vector<Line> lines, std::size_t first, std::size_t last, std::size_t end_number)
      : lines_(std::move(lines)), i_(first), last_(last), end_number_(end_number) {}

  std::variant<Patch, PatchError> run() {
    Patch patch;
    while (true) {
      skip_blank();
      if (i_ > last_) {
        return parse_error(end_number_, "expected " + quoted(kEnd) + ", got end of input");
      }
      const Line& line = lines_[i_];
      auto t = trim(line.text);
      if (t == kEnd) {
        ++i_;
        skip_blank();
        if (i_ <= last_) {
          return parse_error(lines_[i_].number,
                             "unexpected text after " + quoted(kEnd) + ": " + quoted(lines_[i_].text));
        }
        break;
      }
      std::optional<PatchError> err;
      if (starts_with(t, kAdd)) {
        err = parse_add(patch);
      } else if (starts_with(t, kDelete)) {
        err = parse_delete(patch);
      } else if (starts_with(t, kUpdate)) {
        err = parse_update(patch);
      } else {
        return parse_error(line.number, "expected " + quoted(kAdd) + ", " + quoted(kDelete) + " or " +
                                            quoted(kUpdate) + ", got " + quoted(line.text));
      }
      if (err) return *err;
    }
    if (patch.ops.empty()) {
      return PatchError{"empty patch: no file operations between " + quoted(kBegin) + " and " +
                        quoted(kEnd)};
    }
    return patch;
  }

 private:
  void skip_blank() {
    while (i_ <= last_ && trim(lines_[i_].text).empty()) ++i_;
  }

  // The path after a `*** Xxx File:` marker; an error when it is missing.
  std::variant<std::string, PatchError> marker_path(std::string_view marker) {
    const Line& line = lines_[i_];
    auto path = trim(trim(line.text).substr(marker.size()));
    if (path.empty()) return parse_error(line.number, quoted(marker) + " needs a file path");
    return std::string(path);
  }

  std::optional<PatchError> parse_add(Patch& patch) {
    auto path = marker_path(kAdd);
    if (auto* e = std::get_if<PatchError>(&path)) return *e;
    ++i_;
    std::string contents;
    while (i_ <= last_ && starts_with(lines_[i_].text, "+")) {
      contents.append(lines_[i_].text.substr(1));
      contents.push_back('\n');
      ++i_;
    }
    patch.ops.push_back(AddFileOp{std::get<std::string>(path), std::move(contents)});
    return std::nullopt;
  }

  std::optional<PatchError> parse_delete(Patch& patch) {
    auto path = marker_path(kDelete);
    if (auto* e = std::get_if<PatchError>(&path)) return *e;
    ++i_;
    patch.ops.push_back(DeleteFileOp{std::get<std::string>(path)});
    return std::nullopt;
  }

  std::optional<PatchError> parse_update(Patch& patch) {
    auto path_or = marker_path(kUpdate);
    if (auto* e = std::get_if<PatchError>(&path_or)) return *e;
    UpdateFileOp op;
    op.path = std::get<std::string>(path_or);
    const std::size_t update_line = lines_[i_].number;
    ++i_;
    if (i_ <= last_ && starts_with(trim(lines_[i_].text), kMove)) {
      auto to = marker_path(kMove);
      if (auto* e = std::get_if<PatchError>(&to)) return *e;
      op.move_to = std::get<std::string>(to);
      ++i_;
    }
    UpdateChunks chunks{op};
    for (bool done = false; !done && i_ <= last_;)
      if (auto e = read_update_line(chunks, done)) return e;
    if (auto e = chunks.close()) return e;
    if (op.chunks.empty() && !op.move_to) {
      return parse_error(update_line, quoted(std::string(kUpdate) + " " + op.path) + " has no changes");
    }
    patch.ops.push_back(std::move(op));
    return std::nullopt;
  }

  // One line of an update's body: read (i_ moves on), the end of the update (`done`), or an error.
  std::optional<PatchError> read_update_line(UpdateChunks& chunks, bool& done) {
    const Line& line = lines_[i_];
    const std::string_view raw = line.text;
    const auto t = trim(raw);
    if (starts_with(t, "***")) {
      if (t != kEof) {
        done = true;  // the next file operation or the end of the patch
        return std::nullopt;
      }
      ++i_;
      return chunks.end_of_file(line.number);
    }
    if (is_chunk_header(raw)) {
      ++i_;
      return chunks.header(context_from_header(trim_right(raw).substr(2)), line.number);
    }
    if (raw.empty() || raw.front() == ' ' || raw.front() == '+' || raw.front() == '-' || t.empty()) {
      ++i_;
      return chunks.line(raw, line.number);
    }
    return parse_error(line.number, "expected a chunk line starting with ' ', '+' or '-', '@@' or " + quoted(kEof) +
                                        " in the update of " + quoted(chunks.op.path) + ", got " + quoted(raw));
  }

  std::vector<Line> lines_;
  std::size_t i_;
  std::size_t last_;
  std::size_t end_number_;
};

}  // namespace

std::variant<Patch, PatchError> parse_patch(std::string_view text) {
  std::vector<Line> lines = split_patch_lines(text);
  const std::size_t end_number = lines.size() + 1;
  std::size_t first = 0;
  std::size_t last = lines.size();  // one past
  auto blank = [&](std::size_t i) { return trim(lines[i].text).empty(); };
  while (first < last && blank(first)) ++first;
  while (last > first && blank(last - 1)) --last;
  if (first == last) return PatchError{"empty patch: expected " + quoted(kBegin)};

  // Lenient mode: a heredoc wrapper (`<<'EOF'` ... `EOF`) that reached us verbatim.
  auto head = trim(lines[first].text);
  if (head == "<<EOF" || head == "<<'EOF'" || head == "<<\"EOF\"") {
    ++first;
    if (last > first && trim(lines[last - 1].text) == "EOF") --last;
    while (first < last && blank(first)) ++first;
    while (last > first && blank(last - 1)) --last;
    if (first == last) return PatchError{"empty patch: expected " + quoted(kBegin)};
  }
  if (trim(lines[first].text) != kBegin) {
    return parse_error(lines[first].number,
                       "expected " + quoted(kBegin) + ", got " + quoted(lines[first].text));
  }
  Parser parser(std::move(lines), first + 1, last - 1, end_number);
  return parser.run();
}

std::vector<std::string> paths_to_read(const Patch& patch) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& p) {
    if (seen.insert(p).second) out.push_back(p);
  };
  for (const auto& op : patch.ops) {
    std::visit([&](const auto& o) { add(o.path); }, op);
  }
  return out;
}

}  // namespace runtime::tools
