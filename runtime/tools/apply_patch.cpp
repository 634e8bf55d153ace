// Applying a parsed patch to file contents: finding each hunk (ever looser comparisons, as Codex
// does), and the new text of every file the patch touches, all or nothing.
#include <algorithm>
#include <cstdint>
#include <tuple>

#include "runtime/tools/apply_patch.hpp"
#include "runtime/tools/apply_patch_detail.hpp"

namespace runtime::tools {

namespace {

using patch_detail::trim;
using patch_detail::trim_right;

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
