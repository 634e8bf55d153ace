#include "runtime/tools/apply_patch.hpp"

#include <algorithm>
#include <cstdint>
#include <regex>
#include <set>
#include <tuple>

namespace runtime::tools {

namespace {

constexpr std::string_view kBegin = "*** Begin Patch";
constexpr std::string_view kEnd = "*** End Patch";
constexpr std::string_view kAdd = "*** Add File:";
constexpr std::string_view kDelete = "*** Delete File:";
constexpr std::string_view kUpdate = "*** Update File:";
constexpr std::string_view kMove = "*** Move to:";
constexpr std::string_view kEof = "*** End of File";

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = trim_right(s);
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

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

    std::optional<PatchChunk> chunk;  // the chunk being filled
    std::size_t chunk_line = 0;       // where it started (for "no lines" errors)
    std::size_t pending_blank = 0;    // empty patch lines not yet known to be inside the chunk

    auto chunk_has_lines = [&] {
      return chunk && (!chunk->old_lines.empty() || !chunk->new_lines.empty() || pending_blank > 0);
    };
    // Closes the current chunk. Empty lines right before the next `@@`, `***` marker or the end
    // of the patch separate chunks rather than being context (Codex writes them that way).
    auto close_chunk = [&]() -> std::optional<PatchError> {
      if (!chunk) return std::nullopt;
      pending_blank = 0;
      if (chunk->old_lines.empty() && chunk->new_lines.empty()) {
        return parse_error(chunk_line, "chunk of " + quoted(op.path) + " has no lines");
      }
      op.chunks.push_back(std::move(*chunk));
      chunk.reset();
      return std::nullopt;
    };
    auto flush_blank = [&] {
      for (; pending_blank > 0; --pending_blank) {
        chunk->old_lines.emplace_back();
        chunk->new_lines.emplace_back();
      }
    };

    while (i_ <= last_) {
      const Line& line = lines_[i_];
      std::string_view raw = line.text;
      auto t = trim(raw);
      if (starts_with(t, "***")) {
        if (t == kEof) {
          if (!chunk_has_lines()) {
            return parse_error(line.number, quoted(kEof) + " must follow the lines of a chunk");
          }
          flush_blank();
          chunk->is_end_of_file = true;
          if (auto e = close_chunk()) return e;
          ++i_;
          continue;
        }
        break;  // the next file operation or the end of the patch
      }
      if (is_chunk_header(raw)) {
        auto ctx = context_from_header(trim_right(raw).substr(2));
        if (chunk && !chunk_has_lines()) {
          // Several `@@` lines in a row narrow the position step by step.
          if (ctx) chunk->context_headers.push_back(*ctx);
        } else {
          if (auto e = close_chunk()) return e;
          chunk.emplace();
          chunk_line = line.number;
          if (ctx) chunk->context_headers.push_back(*ctx);
        }
        ++i_;
        continue;
      }
      if (raw.empty() || raw.front() == ' ' || raw.front() == '+' || raw.front() == '-' ||
          trim(raw).empty()) {
        if (!chunk) {
          if (trim(raw).empty()) {  // blank lines between chunks
            ++i_;
            continue;
          }
          if (!op.chunks.empty()) {
            return parse_error(line.number, "expected '@@' before the next chunk of " + quoted(op.path) +
                                                ", got " + quoted(raw));
          }
          chunk.emplace();  // the first chunk may omit `@@`
          chunk_line = line.number;
        }
        if (raw.empty() || (raw.front() != ' ' && raw.front() != '+' && raw.front() != '-')) {
          ++pending_blank;  // an empty (or whitespace-only) line: empty context, unless trailing
          ++i_;
          continue;
        }
        flush_blank();
        std::string text(raw.substr(1));
        if (raw.front() == ' ') {
          chunk->old_lines.push_back(text);
          chunk->new_lines.push_back(std::move(text));
        } else if (raw.front() == '-') {
          chunk->old_lines.push_back(std::move(text));
        } else {
          chunk->new_lines.push_back(std::move(text));
        }
        ++i_;
        continue;
      }
      return parse_error(line.number, "expected a chunk line starting with ' ', '+' or '-', '@@' or " +
                                          quoted(kEof) + " in the update of " + quoted(op.path) +
                                          ", got " + quoted(raw));
    }
    if (auto e = close_chunk()) return e;
    if (op.chunks.empty() && !op.move_to) {
      return parse_error(update_line, quoted(std::string(kUpdate) + " " + op.path) + " has no changes");
    }
    patch.ops.push_back(std::move(op));
    return std::nullopt;
  }

  std::vector<Line> lines_;
  std::size_t i_;
  std::size_t last_;
  std::size_t end_number_;
};

// ---- matching --------------------------------------------------------------------------------

// Decodes one UTF-8 code point at s[i]; returns it and advances i. Invalid bytes decode as
// themselves (as code points 0x80..0xFF) so nothing is lost.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  auto b0 = static_cast<unsigned char>(s[i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len <= 1 || i + len > s.size()) {
    ++i;
    return b0;
  }
  char32_t cp = b0 & (0xFF >> (len + 1));
  for (int k = 1; k < len; ++k) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += len;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Typographic punctuation and exotic spaces mapped to ASCII, then trimmed (Codex's normalise).
std::string normalise(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t start = i;
    char32_t cp = next_code_point(s, i);
    if ((cp >= 0x2010 && cp <= 0x2015) || cp == 0x2212) {
      out.push_back('-');
    } else if (cp == 0x2018 || cp == 0x2019 || cp == 0x201A || cp == 0x201B) {
      out.push_back('\'');
    } else if (cp == 0x201C || cp == 0x201D || cp == 0x201E || cp == 0x201F) {
      out.push_back('"');
    } else if (cp == 0x00A0 || (cp >= 0x2002 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F ||
               cp == 0x3000) {
      out.push_back(' ');
    } else if (cp >= 0x80 && i - start == 1) {
      out.push_back(s[start]);  // an invalid byte, kept as is
    } else {
      append_utf8(out, cp);
    }
  }
  return std::string(trim(out));
}

// Where `pattern` occurs in `lines` at or after `start` (only at the very end when `eof`),
// trying ever looser comparisons: exact, trailing whitespace ignored, surrounding whitespace
// ignored, then typographic punctuation normalised.
std::optional<std::size_t> seek_sequence(const std::vector<std::string>& lines,
                                         const std::vector<std::string>& pattern, std::size_t start,
                                         bool eof) {
  if (pattern.empty()) return start;
  if (pattern.size() > lines.size()) return std::nullopt;
  const std::size_t last_start = lines.size() - pattern.size();
  const std::size_t from = eof ? last_start : start;
  if (from > last_start) return std::nullopt;

  auto search = [&](auto&& eq) -> std::optional<std::size_t> {
    for (std::size_t i = from; i <= last_start; ++i) {
      bool ok = true;
      for (std::size_t k = 0; k < pattern.size() && ok; ++k) ok = eq(lines[i + k], pattern[k]);
      if (ok) return i;
    }
    return std::nullopt;
  };
  if (auto r = search([](const std::string& a, const std::string& b) { return a == b; })) return r;
  if (auto r = search([](const std::string& a, const std::string& b) {
        return trim_right(a) == trim_right(b);
      }))
    return r;
  if (auto r = search([](const std::string& a, const std::string& b) { return trim(a) == trim(b); }))
    return r;
  return search([](const std::string& a, const std::string& b) { return normalise(a) == normalise(b); });
}

struct SplitText {
  std::vector<std::string> lines;
  bool crlf = false;              // every line ended with "\r\n"
  bool final_newline = true;      // the text ended with a line terminator (or was empty)
};

SplitText split_file(std::string_view text) {
  SplitText out;
  std::size_t lf = std::count(text.begin(), text.end(), '\n');
  std::size_t crlf = 0;
  for (std::size_t i = 1; i < text.size(); ++i)
    if (text[i] == '\n' && text[i - 1] == '\r') ++crlf;
  out.crlf = lf > 0 && crlf == lf;
  out.final_newline = text.empty() || text.back() == '\n';
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = nl == std::string_view::npos ? text : text.substr(0, nl);
    if (out.crlf && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.lines.emplace_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines, bool crlf, bool final_newline) {
  const char* sep = crlf ? "\r\n" : "\n";
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += sep;
    out += lines[i];
  }
  if (!lines.empty() && final_newline) out += sep;
  return out;
}

std::string indent_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    out += lines[i];
  }
  return out;
}

std::variant<std::string, PatchError> apply_chunks(const std::string& path, const std::string& old_text,
                                                   const std::vector<PatchChunk>& chunks) {
  SplitText file = split_file(old_text);
  const auto& lines = file.lines;
  // (start, how many old lines, replacement)
  std::vector<std::tuple<std::size_t, std::size_t, std::vector<std::string>>> replacements;
  std::size_t pos = 0;
  for (std::size_t n = 0; n < chunks.size(); ++n) {
    const PatchChunk& chunk = chunks[n];
    const std::string where = path + ": hunk " + std::to_string(n + 1) + " does not apply: ";
    for (const auto& header : chunk.context_headers) {
      auto idx = seek_sequence(lines, {header}, pos, false);
      if (!idx) return PatchError{where + "could not find the context line:\n" + header};
      pos = *idx + 1;
    }
    if (chunk.old_lines.empty()) {  // pure insertion: at the end of the file
      replacements.emplace_back(lines.size(), 0, chunk.new_lines);
      continue;
    }
    std::vector<std::string> pattern = chunk.old_lines;
    std::vector<std::string> replacement = chunk.new_lines;
    auto found = seek_sequence(lines, pattern, pos, chunk.is_end_of_file);
    if (!found && pattern.back().empty()) {
      // A trailing empty context line often stands for the file's final newline.
      pattern.pop_back();
      if (!replacement.empty() && replacement.back().empty()) replacement.pop_back();
      found = seek_sequence(lines, pattern, pos, chunk.is_end_of_file);
    }
    if (!found) {
      return PatchError{where + "could not find the lines" +
                        (chunk.is_end_of_file ? " at the end of the file" : "") + ":\n" +
                        indent_lines(chunk.old_lines)};
    }
    replacements.emplace_back(*found, pattern.size(), std::move(replacement));
    pos = *found + pattern.size();
  }
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<std::string> result = lines;
  for (auto it = replacements.rbegin(); it != replacements.rend(); ++it) {
    auto& [start, count, repl] = *it;
    result.erase(result.begin() + start, result.begin() + start + count);
    result.insert(result.begin() + start, repl.begin(), repl.end());
  }
  return join_lines(result, file.crlf, file.final_newline);
}

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

std::variant<std::vector<FileChange>, PatchError> compute_patch_changes(
    const Patch& patch, const std::map<std::string, std::string>& current) {
  // The state of every touched path as the ops run in order; nullopt = does not exist.
  std::map<std::string, std::optional<std::string>> state;
  auto lookup = [&](const std::string& path) -> std::optional<std::string> {
    if (auto it = state.find(path); it != state.end()) return it->second;
    if (auto it = current.find(path); it != current.end()) return it->second;
    return std::nullopt;
  };

  std::vector<FileChange> changes;
  for (const auto& op : patch.ops) {
    if (const auto* add = std::get_if<AddFileOp>(&op)) {
      if (lookup(add->path)) return PatchError{add->path + ": cannot add: the file already exists"};
      changes.push_back(FileChange{add->path, std::nullopt, std::nullopt, add->contents});
      state[add->path] = add->contents;
    } else if (const auto* del = std::get_if<DeleteFileOp>(&op)) {
      auto old = lookup(del->path);
      if (!old) return PatchError{del->path + ": cannot delete: the file does not exist"};
      changes.push_back(FileChange{del->path, std::nullopt, *old, std::nullopt});
      state[del->path] = std::nullopt;
    } else {
      const auto& upd = std::get<UpdateFileOp>(op);
      auto old = lookup(upd.path);
      if (!old) return PatchError{upd.path + ": cannot update: the file does not exist"};
      auto applied = apply_chunks(upd.path, *old, upd.chunks);
      if (auto* e = std::get_if<PatchError>(&applied)) return *e;
      std::string new_text = std::move(std::get<std::string>(applied));
      changes.push_back(FileChange{upd.path, upd.move_to, *old, new_text});
      if (upd.move_to && *upd.move_to != upd.path) {
        state[upd.path] = std::nullopt;
        state[*upd.move_to] = std::move(new_text);
      } else {
        state[upd.path] = std::move(new_text);
      }
    }
  }
  return changes;
}

}  // namespace runtime::tools
