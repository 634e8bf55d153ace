#include "runtime/tools/command_keys.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace runtime::tools {

namespace {

// Programs whose first argument names what they do: their key holds it.
const std::set<std::string, std::less<>> kSubcommandPrograms = {
    "apt",    "apt-get", "brew",  "bun",   "bundle", "cargo", "composer", "deno",   "docker", "dotnet", "gem",
    "gh",     "git",     "go",    "gradle", "helm",  "kubectl", "make",   "mvn",    "npm",    "npx",    "pip",
    "pip3",   "pnpm",    "poetry", "rustup", "swift", "systemctl", "terraform", "uv", "yarn"};

// Programs that run another command (or any code) given as arguments: never keyed.
const std::set<std::string, std::less<>> kRunsOthers = {
    "sudo", "doas", "env",  "xargs", "exec",  "eval", "source", ".",      "nohup", "time", "timeout", "watch",
    "nice", "bash", "sh",   "zsh",   "dash",  "fish", "command", "builtin", "su",  "ssh",  "parallel", "find",
    "awk",  "perl", "ruby", "python", "python3", "node", "busybox", "strace", "chroot", "unshare", "setsid"};

const std::set<std::string, std::less<>> kKeywords = {"if",   "then", "else", "elif", "fi",       "for",  "while",
                                                      "until", "do",  "done", "case", "esac",     "function",
                                                      "select", "{",  "}",    "!",    "[[",       "]]", "coproc"};

struct Word {
  std::string text;
  bool plain = true;  // no quotes and no expansion: its text is what runs
  bool fd = false;    // the number before a redirection (`2>&1`), not an argument
};

// A tokenizer for the part of the shell a key needs; `ok` false for what it does not follow.
class Splitter {
 public:
  explicit Splitter(std::string_view s) : s_(s) {}

  bool run() {
    std::vector<Word> command;
    while (ok_ && i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t') {
        ++i_;
      } else if (c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')') {
        if (c == '&' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') return fail();  // &> file
        ++i_;
        finish(command);
      } else if (c == '>' || c == '<') {
        redirection();
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        Word w = word();
        if (ok_) command.push_back(std::move(w));
      }
    }
    finish(command);
    return ok_;
  }

  std::vector<std::string> keys;

 private:
  bool fail() { return ok_ = false; }

  // `2>&1`, `>&2`, `> /dev/null`, `<(…)` are harmless; a redirection to or from a file is not keyed.
  void redirection() {
    if (s_[i_] == '<' && i_ + 1 < s_.size() && s_[i_ + 1] == '(') {
      i_ += 2;
      substitution(')');
      return;
    }
    if (s_.compare(i_, 2, "<<") == 0) { fail(); return; }  // here-document
    ++i_;
    if (i_ < s_.size() && s_[i_] == '>') ++i_;  // >>
    if (i_ < s_.size() && s_[i_] == '&') {
      ++i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-')) ++i_;
      return;
    }
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    Word target = word();
    if (!ok_ || !target.plain || target.text != "/dev/null") fail();
  }

  // Runs to the end of a word, following quotes and substitutions; a redirection's fd digits
  // before `>` stay in the word they end (`2>` → "2", then the redirection).
  Word word() {
    Word w;
    while (ok_ && i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')' ||
          c == '<' || c == '>') {
        if ((c == '>' || c == '<') && !w.text.empty() &&
            std::all_of(w.text.begin(), w.text.end(), [](char d) { return std::isdigit(static_cast<unsigned char>(d)); })) {
          w.fd = true;
        }
        break;
      }
      if (c == '\\') {
        if (i_ + 1 >= s_.size()) return fail(), w;
        w.text += s_[i_ + 1];
        i_ += 2;
      } else if (c == '\'') {
        const auto end = s_.find('\'', i_ + 1);
        if (end == std::string_view::npos) return fail(), w;
        w.text.append(s_.substr(i_ + 1, end - i_ - 1));
        w.plain = false;
        i_ = end + 1;
      } else if (c == '"') {
        double_quoted(w);
      } else if (c == '`') {
        ++i_;
        substitution('`');
        w.plain = false;
      } else if (c == '$') {
        dollar(w);
      } else {
        w.text += c;
        ++i_;
      }
    }
    return w;
  }

  void double_quoted(Word& w) {
    w.plain = false;
    ++i_;
    while (ok_) {
      if (i_ >= s_.size()) { fail(); return; }
      const char c = s_[i_];
      if (c == '"') { ++i_; return; }
      if (c == '\\' && i_ + 1 < s_.size()) {
        w.text += s_[i_ + 1];
        i_ += 2;
      } else if (c == '`') {
        ++i_;
        substitution('`');
      } else if (c == '$') {
        dollar(w);
      } else {
        w.text += c;
        ++i_;
      }
    }
  }

  // $(…) is a command of its own; $((…)), ${…} and $name expand (the word is no longer plain).
  void dollar(Word& w) {
    w.plain = false;
    ++i_;
    if (s_.compare(i_, 2, "((") == 0) {
      const auto end = s_.find("))", i_);
      if (end == std::string_view::npos) { fail(); return; }
      i_ = end + 2;
    } else if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      substitution(')');
    } else if (i_ < s_.size() && s_[i_] == '{') {
      const auto end = s_.find('}', i_);
      if (end == std::string_view::npos) { fail(); return; }
      i_ = end + 1;
    } else {
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    }
  }

  // The commands inside a substitution, keyed as parts of their own.
  void substitution(char close) {
    int depth = 1;
    const std::size_t start = i_;
    for (; i_ < s_.size(); ++i_) {
      const char c = s_[i_];
      if (c == '\\') { ++i_; continue; }
      if (close == ')' && c == '(') ++depth;
      if (c == close && --depth == 0) break;
    }
    if (i_ >= s_.size()) { fail(); return; }
    Splitter inner(s_.substr(start, i_ - start));
    if (!inner.run()) { fail(); return; }
    for (auto& k : inner.keys) add(std::move(k));
    ++i_;
  }

  // A simple command: its variable assignments skipped, its program and maybe subcommand keyed.
  void finish(std::vector<Word>& command) {
    std::size_t at = 0;
    while (at < command.size() && command[at].plain && is_assignment(command[at].text)) ++at;
    std::vector<Word> words(command.begin() + static_cast<std::ptrdiff_t>(at), command.end());
    command.clear();
    std::erase_if(words, [](const Word& w) { return w.fd; });
    if (words.empty()) return;
    const Word& program = words[0];
    if (!program.plain) { fail(); return; }  // `$tool`, "$(which x)": what runs is not known here
    if (kKeywords.count(program.text) || kRunsOthers.count(program.text)) { fail(); return; }
    std::string key = program.text;
    if (kSubcommandPrograms.count(program.text) && words.size() > 1 && words[1].plain && !words[1].text.empty() &&
        words[1].text[0] != '-')
      key += " " + words[1].text;
    add(std::move(key));
  }

  static bool is_assignment(const std::string& w) {
    const auto eq = w.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }

  void add(std::string key) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }

  std::string_view s_;
  std::size_t i_ = 0;
  bool ok_ = true;
};

}  // namespace

std::optional<std::vector<std::string>> command_keys(std::string_view command) {
  Splitter splitter(command);
  if (!splitter.run() || splitter.keys.empty()) return std::nullopt;
  return std::move(splitter.keys);
}

}  // namespace runtime::tools
