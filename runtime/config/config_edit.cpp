// The one editor of config.yaml: in-place text edits checked against the parsed document.
#include "runtime/config/config_edit.hpp"
#include "runtime/config/paths.hpp"

#include <sys/stat.h>

#include <optional>
#include <sstream>
#include <stdexcept>

#include "support/file_io.hpp"

namespace runtime::config {

namespace fs = std::filesystem;

namespace {

using Lines = std::vector<std::string>;

Lines split_lines(const std::string& text) {
  Lines lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

std::string join_lines(const Lines& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

std::size_t indent_of(const std::string& l) {
  auto i = l.find_first_not_of(' ');
  return i == std::string::npos ? l.size() : i;
}

bool is_blank_or_comment(const std::string& l) {
  auto i = l.find_first_not_of(" \t\r");
  return i == std::string::npos || l[i] == '#';
}

bool is_sequence_item(const std::string& l) {
  auto i = indent_of(l);
  return i < l.size() && l[i] == '-' && (i + 1 == l.size() || l[i + 1] == ' ');
}

// For a line `key: value # comment` with the key at exactly `indent`: the value (trimmed, its
// comment cut off; empty when the value is a block on the following lines). nullopt for any
// other line.
std::optional<std::string> value_after_key(const std::string& l, std::size_t indent, const std::string& key) {
  if (indent_of(l) != indent || l.compare(indent, key.size(), key) != 0) return std::nullopt;
  const std::size_t colon = indent + key.size();
  if (colon >= l.size() || l[colon] != ':') return std::nullopt;
  std::string rest = l.substr(colon + 1);
  if (!rest.empty() && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r') return std::nullopt;
  if (auto hash = rest.find(" #"); hash != std::string::npos) rest.resize(hash);
  auto b = rest.find_first_not_of(" \t\r");
  return b == std::string::npos ? std::string() : rest.substr(b, rest.find_last_not_of(" \t\r") - b + 1);
}

// The first line in [from, to) that is neither blank nor a comment; `to` when there is none.
std::size_t first_content(const Lines& lines, std::size_t from, std::size_t to) {
  while (from < to && is_blank_or_comment(lines[from])) ++from;
  return from;
}

// One past the last line of the entry whose key is on line `key_line` (keys at `indent`): the
// deeper lines after it, and `- ` items at the key's own indent (a block sequence may sit
// there). Comments between those lines are inside the entry; comments after its last line are not.
std::size_t entry_end(const Lines& lines, std::size_t key_line, std::size_t end, std::size_t indent) {
  std::size_t last = key_line + 1;
  for (std::size_t j = key_line + 1; j < end; ++j) {
    if (is_blank_or_comment(lines[j])) continue;
    const std::size_t ind = indent_of(lines[j]);
    if (ind < indent || (ind == indent && !is_sequence_item(lines[j]))) break;
    last = j + 1;
  }
  return last;
}

// `key: value` as the emitter writes it, every line indented by `indent`.
Lines render_entry(const std::string& key, const YAML::Node& value, std::size_t indent) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << key << YAML::Value << value << YAML::EndMap;
  Lines out = split_lines(e.c_str());
  for (auto& l : out) l.insert(0, indent, ' ');
  return out;
}

// The node at the first `n` keys of `path` (all there).
YAML::Node node_at(const YAML::Node& root, const std::vector<std::string>& path, std::size_t n) {
  YAML::Node cur = root;
  for (std::size_t i = 0; i < n; ++i) {
    const YAML::Node& c = cur;
    cur.reset(c[path[i]]);
  }
  return cur;
}

void set_path(YAML::Node doc, const std::vector<std::string>& path, const YAML::Node& value) {
  YAML::Node cur = doc;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    YAML::Node next = cur[path[i]];
    if (!next.IsMap()) next = YAML::Node(YAML::NodeType::Map);
    cur.reset(next);
  }
  cur[path.back()] = value;
}

bool same_yaml(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!same_yaml(a[i], b[i])) return false;
      return true;
    case YAML::NodeType::Map:
      if (a.size() != b.size()) return false;
      for (const auto& kv : a) {
        if (!kv.first.IsScalar()) return false;
        const YAML::Node other = b[kv.first.Scalar()];
        if (!other.IsDefined() || !same_yaml(kv.second, other)) return false;
      }
      return true;
    default:
      return true;
  }
}

// Edits `lines` so that `path` holds its value in `expected`. Walks down the block mappings of
// the text; where the key is missing it inserts the entry (at the end of the file for a
// top-level key, before the first entry of a nested mapping), where the key is there with its
// value it replaces the entry (comment lines inside it stay).
void edit_in_place(Lines& lines, const std::vector<std::string>& path, const YAML::Node& expected) {
  std::size_t begin = 0, end = lines.size(), indent = 0;
  for (std::size_t d = 0; d < path.size(); ++d) {
    const std::string& key = path[d];
    std::size_t found = end;
    for (std::size_t j = begin; j < end && found == end; ++j)
      if (!is_blank_or_comment(lines[j]) && value_after_key(lines[j], indent, key)) found = j;
    const YAML::Node value = node_at(expected, path, d + 1);
    if (found == end) {
      Lines entry = render_entry(key, value, indent);
      const std::size_t at = d == 0 ? lines.size() : first_content(lines, begin, end);
      lines.insert(lines.begin() + static_cast<long>(at), entry.begin(), entry.end());
      return;
    }
    const std::size_t stop = entry_end(lines, found, end, indent);
    const std::size_t first = first_content(lines, found + 1, stop);
    const bool block_mapping =
        value_after_key(lines[found], indent, key)->empty() && (first == stop || !is_sequence_item(lines[first]));
    if (d + 1 == path.size() || !block_mapping) {
      Lines entry = render_entry(key, value, indent);
      for (std::size_t j = found + 1; j < stop; ++j)
        if (is_blank_or_comment(lines[j])) entry.push_back(lines[j]);
      lines.erase(lines.begin() + static_cast<long>(found), lines.begin() + static_cast<long>(stop));
      lines.insert(lines.begin() + static_cast<long>(found), entry.begin(), entry.end());
      return;
    }
    begin = found + 1;
    end = stop;
    indent = first == stop ? indent + 2 : indent_of(lines[first]);
  }
}

}  // namespace

EditedConfig edit_config_text(const std::string& text, const std::vector<ConfigSetting>& settings) {
  YAML::Node root;
  bool parsed = true;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    parsed = false;
  }
  if (parsed && !root.IsNull() && !root.IsMap()) throw std::runtime_error("config.yaml must be a mapping of keys to values");
  YAML::Node expected = parsed && root.IsMap() ? YAML::Clone(root) : YAML::Node(YAML::NodeType::Map);
  for (const auto& s : settings) set_path(expected, s.path, s.value);

  Lines lines = split_lines(text);
  for (const auto& s : settings) edit_in_place(lines, s.path, expected);
  EditedConfig out{join_lines(lines), false};
  if (!parsed) return out;
  try {
    if (same_yaml(YAML::Load(out.text), expected)) return out;
  } catch (const YAML::Exception&) {
  }
  out.text = emit(expected) + "\n";
  out.comments_lost = true;
  return out;
}

void write_config_file(const fs::path& file, const std::string& text) {
  std::error_code ec;
  if (file.has_parent_path()) create_private_directories(file.parent_path(), ec);
  mode_t mode = 0644;
  struct stat st{};
  if (::stat(file.c_str(), &st) == 0) mode = st.st_mode & 07777;  // a link's target's mode
  support::write_file_atomically(file, text, mode);
}

}  // namespace runtime::config
