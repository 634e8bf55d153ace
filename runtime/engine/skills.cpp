// SKILL.md parsing and the recursive skill search.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include <algorithm>
#include <set>

#include "runtime/engine/loaders.hpp"
#include "runtime/engine/names.hpp"
#include "runtime/engine/skill_search.hpp"
#include "support/text.hpp"

namespace runtime::engine::detail {

namespace {

bool is_fence(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return line == "---";
}

bool plain_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

FrontmatterError split_frontmatter(std::string_view text, FrontmatterSplit& out) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  auto first_nl = text.find('\n');
  if (first_nl == std::string_view::npos || !is_fence(text.substr(0, first_nl))) return FrontmatterError::Missing;
  std::size_t pos = first_nl + 1;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    auto line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (is_fence(line)) {
      out.yaml = std::string(text.substr(first_nl + 1, pos - (first_nl + 1)));
      out.yaml_first_line = 2;
      return FrontmatterError::None;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return FrontmatterError::Unclosed;
}

std::optional<std::map<std::string, FastField>> fast_frontmatter(std::string_view yaml) {
  std::map<std::string, FastField> out;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < yaml.size()) {
    ++line_no;
    auto nl = yaml.find('\n', pos);
    std::string_view line = yaml.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? yaml.size() : nl + 1;
    // CRLF ends a line; a lone CR (YAML keeps one at the very end) sends the text to YAML below.
    if (nl != std::string_view::npos && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Only ASCII-printable lines: anything else (tabs, control characters, non-ASCII) goes to YAML.
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return std::nullopt;
    if (line.find_first_not_of(' ') == std::string_view::npos) {
      if (!line.empty()) return std::nullopt;
      continue;
    }
    if (line[0] == '#') continue;  // a comment line
    std::size_t k = 0;
    while (k < line.size() && plain_key_char(line[k])) ++k;
    if (k == 0 || k >= line.size() || line[k] != ':') return std::nullopt;
    if (line[0] == '-') return std::nullopt;
    std::string key(line.substr(0, k));
    // YAML reads these keys as null, not as the text (found by engine_fuzz): let YAML decide.
    if (key == "null" || key == "Null" || key == "NULL") return std::nullopt;
    std::string_view rest = line.substr(k + 1);
    if (!rest.empty() && rest[0] != ' ') return std::nullopt;
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
    FastField f;
    f.line = line_no;
    if (rest.empty()) {
      // `key:` alone: null unless a nested block follows (which the next line would show).
      f.null = true;
    } else {
      static constexpr std::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@`";
      if (kIndicators.find(rest.front()) != std::string_view::npos) return std::nullopt;
      if (rest.find(": ") != std::string_view::npos || rest.find(" #") != std::string_view::npos ||
          rest.back() == ':')
        return std::nullopt;
      if (rest == "~" || rest == "null" || rest == "Null" || rest == "NULL") return std::nullopt;
      f.value = std::string(rest);
    }
    if (!out.emplace(std::move(key), std::move(f)).second) return std::nullopt;  // duplicate key
  }
  // A `key:` followed by an indented line was rejected above (indented lines are not keys).
  // With no key at all (blank lines, comments, stray control characters), YAML decides.
  if (out.empty()) return std::nullopt;
  return out;
}

namespace {

struct SkillProblem {
  int line;
  std::string message;
};

// The fields of frontmatter the fast reader took (`off`: the file line before the YAML's first).
void fields_from_fast(const std::map<std::string, FastField>& fast, int off, SkillFields& fields) {
  if (auto it = fast.find("name"); it != fast.end() && !it->second.null) {
    fields.name = it->second.value;
    fields.name_line = it->second.line + off;
  }
  if (auto it = fast.find("description"); it != fast.end()) {
    fields.description_line = it->second.line + off;
    if (!it->second.null) fields.description = it->second.value;
  }
  if (auto it = fast.find("argument-hint"); it != fast.end() && !it->second.null) fields.argument_hint = it->second.value;
}

// Optional and only shown to the user. The usual `argument-hint: [issue-number]` is a YAML
// list; it is shown as written. Anything else that is not text is left out, not an error.
std::string argument_hint_of(const YAML::Node& n) {
  if (n && n.IsScalar()) return n.Scalar();
  if (!n || !n.IsSequence()) return {};
  std::string shown;
  bool all_text = true;
  for (const auto& item : n) {
    if (!item.IsScalar()) all_text = false;
    else shown += (shown.empty() ? "" : ", ") + item.Scalar();
  }
  return all_text ? "[" + shown + "]" : std::string();
}

// The fields of frontmatter YAML proper parsed; the first problem, if any.
std::optional<SkillProblem> fields_from_yaml(const YAML::Node& root, int off, SkillFields& fields) {
  const int first_line = off + 1;
  if (!root.IsNull() && !root.IsMap()) return SkillProblem{first_line, "the frontmatter must be a mapping of keys to values"};
  if (!root.IsMap()) return std::nullopt;
  try {
    if (auto n = root["name"]; n && !n.IsNull()) {
      if (!n.IsScalar()) return SkillProblem{config::YamlReader::line_of(n) + off, "'name' must be a string"};
      fields.name = n.Scalar();
      fields.name_line = config::YamlReader::line_of(n) + off;
    }
    if (auto n = root["description"]; n) {
      fields.description_line = config::YamlReader::line_of(n) + off;
      if (!n.IsNull()) {
        if (!n.IsScalar()) return SkillProblem{fields.description_line, "'description' must be a string"};
        fields.description = n.Scalar();
      }
    }
    fields.argument_hint = argument_hint_of(root["argument-hint"]);
  } catch (const YAML::Exception& e) {
    return SkillProblem{first_line, std::string("invalid frontmatter: ") + e.what()};
  }
  return std::nullopt;
}

}  // namespace

std::optional<SkillFields> parse_skill_text(std::string_view text, const fs::path& file, Diagnostic::Severity severity,
                                            Diagnostics& diags) {
  auto fail = [&](int line, const std::string& message) -> std::optional<SkillFields> {
    diags.push_back({severity, file.string(), line, message + " (skill skipped)"});
    return std::nullopt;
  };
  FrontmatterSplit split;
  switch (split_frontmatter(text, split)) {
    case FrontmatterError::Missing:
      return fail(1, "SKILL.md must start with YAML frontmatter: a '---' line, then 'name:' and 'description:', then '---'");
    case FrontmatterError::Unclosed:
      return fail(1, "the YAML frontmatter is not closed by a '---' line");
    case FrontmatterError::None:
      break;
  }
  const int off = split.yaml_first_line - 1;
  SkillFields fields;
  if (auto fast = fast_frontmatter(split.yaml)) {
    fields_from_fast(*fast, off, fields);
  } else {
    Diagnostics yaml_diags;
    config::YamlReader r(file, yaml_diags);
    auto root = r.load_string(split.yaml, off);
    if (!root) {
      for (auto& d : yaml_diags) {
        d.severity = severity;
        d.message += " (skill skipped)";
        diags.push_back(std::move(d));
      }
      return std::nullopt;
    }
    if (auto problem = fields_from_yaml(*root, off, fields)) return fail(problem->line, problem->message);
  }
  if (!fields.description || support::trim(*fields.description).empty())
    return fail(fields.description_line ? fields.description_line : 1,
                "'description' is required: say when the agent should use this skill");
  if (fields.name && !is_kebab_name(*fields.name))
    return fail(fields.name_line, "name '" + *fields.name +
                                      "' is invalid: use lowercase letters, digits and single hyphens (like release-notes)");
  return fields;
}

namespace {

// Reads SKILL.md from an open descriptor of a regular file whose fstat is `st` (the caller has
// it already: one fstat per skill); closes it. nullopt with a diagnostic on a problem.
std::optional<std::string> read_skill_fd(int fd, const struct stat& st, const fs::path& file,
                                         Diagnostic::Severity severity, Diagnostics& diags) {
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size > kMaxSkillFileBytes) {
    ::close(fd);
    diags.push_back({severity, file.string(), 0,
                     "the file is " + std::to_string(size) +
                         " bytes; SKILL.md files over 1 MB (1048576 bytes) are not read (skill skipped)"});
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

std::optional<Skill> skill_from_text(const fs::path& dir, const fs::path& file, const std::string& text,
                                     SkillSource source, const std::string& plugin, Diagnostic::Severity severity,
                                     Diagnostics& diags) {
  auto fields = parse_skill_text(text, file, severity, diags);
  if (!fields) return std::nullopt;
  std::string name = fields->name.value_or(dir.filename().string());
  if (!fields->name && !is_kebab_name(name)) {
    diags.push_back({severity, file.string(), 1,
                     "the folder name '" + name +
                         "' is not a valid skill name and 'name' is not set: use lowercase letters, digits and single "
                         "hyphens (skill skipped)"});
    return std::nullopt;
  }
  Skill s;
  s.name = plugin.empty() ? std::move(name) : plugin + ":" + name;
  s.description = support::trim(*fields->description);
  s.argument_hint = support::trim(fields->argument_hint);
  s.file = file;
  s.source = source;
  s.plugin = plugin;
  return s;
}

}  // namespace

std::optional<Skill> load_skill(const fs::path& dir, SkillSource source, const std::string& plugin,
                                Diagnostic::Severity severity, Diagnostics& diags) {
  fs::path file = dir / "SKILL.md";
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    diags.push_back({severity, file.string(), 0, "cannot be read (skill skipped)"});
    return std::nullopt;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    diags.push_back({severity, file.string(), 0, "cannot be read (skill skipped)"});
    return std::nullopt;
  }
  auto text = read_skill_fd(fd, st, file, severity, diags);
  if (!text) return std::nullopt;
  return skill_from_text(dir, file, *text, source, plugin, severity, diags);
}

namespace {

struct Walker {
  SkillSource source;
  const std::string& plugin;
  Diagnostic::Severity severity;
  std::vector<Skill>* out;    // the skills found; or
  SkillPlace* place;          // every folder entered, with its skill
  std::vector<SkillFolder>* folders;  // place's, while being filled
  Diagnostics& diags;
  std::set<std::pair<dev_t, ino_t>> visited;

  void walk(const fs::path& dir, int depth) {
    struct stat st{};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
    if (!visited.insert({st.st_dev, st.st_ino}).second) return;  // a loop or a second link
    if (depth > 32) return;
    std::optional<Skill> skill;
    FileStamp stamp;
    const bool holds_skill_file = read_skill_folder(dir, source, plugin, severity, skill, diags, &stamp);
    const std::size_t at = folders ? folders->size() : 0;
    if (place) {
      folders->push_back({dir, holds_skill_file, stamp, 0});
      place->skills.push_back(skill ? std::make_shared<const Skill>(std::move(*skill)) : nullptr);
    } else if (skill) {
      out->push_back(std::move(*skill));
    }
    if (holds_skill_file) return;
    const std::vector<fs::path> children = skill_search_subfolders(dir);
    if (folders) (*folders)[at].subfolders = children.size();
    for (const auto& c : children) walk(c, depth + 1);
  }
};

}  // namespace

bool read_skill_folder(const fs::path& dir, SkillSource source, const std::string& plugin, Diagnostic::Severity severity,
                       std::optional<Skill>& skill, Diagnostics& diags, FileStamp* stamp) {
  fs::path file = dir / "SKILL.md";
  // O_NONBLOCK: a FIFO named SKILL.md must not hang the load (it is not a regular file: skipped).
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  if (stamp) *stamp = stamp_of(st, wall_clock_ns());
  if (auto text = read_skill_fd(fd, st, file, severity, diags))
    skill = skill_from_text(dir, file, *text, source, plugin, severity, diags);
  return true;
}

void find_skills(const fs::path& root, SkillSource source, const std::string& plugin, Diagnostic::Severity severity,
                 std::vector<Skill>& out, Diagnostics& diags) {
  Walker w{source, plugin, severity, &out, nullptr, nullptr, diags, {}};
  w.walk(root, 0);
}

SkillPlace scan_skill_place(const fs::path& root, SkillSource source, Diagnostic::Severity severity, Diagnostics& diags) {
  SkillPlace place;
  place.source = source;
  place.root = root;
  auto folders = std::make_shared<std::vector<SkillFolder>>();
  const std::string no_plugin;
  Walker w{source, no_plugin, severity, nullptr, &place, folders.get(), diags, {}};
  w.walk(root, 0);
  place.folders = std::move(folders);
  return place;
}

}  // namespace runtime::engine::detail

namespace runtime::engine::detail {

void find_skills_in(const std::map<fs::path, std::string>& files, const fs::path& root, SkillSource source,
                    Diagnostic::Severity severity, std::vector<Skill>& out, Diagnostics& diags) {
  // A path's folders compare part by part, so the map's order is the walk's sorted order, and
  // everything under `root` follows it.
  for (auto it = files.lower_bound(root); it != files.end(); ++it) {
    const fs::path rel = it->first.lexically_relative(root);
    if (rel.empty() || *rel.begin() == "..") break;
    if (it->first.filename() != "SKILL.md") continue;
    const fs::path dir = it->first.parent_path();
    bool skip = false;
    fs::path above = root;
    for (const auto& part : rel.parent_path()) {
      // The walk stops at a folder with a SKILL.md and never enters hidden folders.
      skip = skip || files.count(above / "SKILL.md") || part.string().empty() || part.string()[0] == '.';
      above /= part;
    }
    if (skip) continue;
    const std::string plugin;
    if (auto s = skill_from_text(dir, it->first, it->second, source, plugin, severity, diags)) {
      s->text = std::make_shared<const std::string>(it->second);
      out.push_back(std::move(*s));
    }
  }
}

}  // namespace runtime::engine::detail

namespace runtime::engine {

std::vector<fs::path> skill_search_subfolders(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code ec2;
    if (it->is_directory(ec2)) children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  return children;
}

std::int64_t wall_clock_ns() {
  struct timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {
// Far more than any file system's timestamp tick (a jiffy, at most 10 ms): re-reading one
// SKILL.md costs microseconds, missing a write leaves a skill stale until its next edit.
constexpr std::int64_t kRacyWindowNs = 100'000'000;

std::int64_t modified_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}
}  // namespace

FileStamp stamp_of(const struct stat& st, std::int64_t now_ns) {
  const std::int64_t mtime = modified_ns(st);
  return {mtime, static_cast<std::int64_t>(st.st_size), now_ns - mtime < kRacyWindowNs};
}

bool changed_since(const FileStamp& seen, const struct stat& st) {
  return seen.racy || modified_ns(st) != seen.mtime_ns || static_cast<std::int64_t>(st.st_size) != seen.size;
}

}  // namespace runtime::engine
