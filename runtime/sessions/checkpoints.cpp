// File checkpoints of a session: an index of events and a folder of contents (checkpoints.hpp).
#include "runtime/sessions/checkpoints.hpp"

#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <system_error>

#include "support/file_io.hpp"

namespace runtime::sessions {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {
constexpr const char* kIndex = "index.jsonl";
constexpr const char* kBlobs = "blobs";
}  // namespace

CheckpointStore::CheckpointStore(fs::path dir, std::uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  load();
}

std::string CheckpointStore::hash_of(const std::optional<std::string>& content) {
  if (!content) return "absent";
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: a change by hand, not an adversary, is what it detects
  for (unsigned char ch : *content) h = (h ^ ch) * 1099511628211ull;
  char out[40];
  std::snprintf(out, sizeof out, "%016llx:%zu", static_cast<unsigned long long>(h), content->size());
  return out;
}

// The index read back; a line that does not parse (a crash mid-append) is skipped.
void CheckpointStore::load() {
  std::ifstream in(dir_ / kIndex);
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    if (ec || !v.is_object()) continue;
    const auto& o = v.get_object();
    const auto* k = o.if_contains("k");
    if (!k || !k->is_string()) continue;
    const std::string kind(k->get_string());
    auto str = [&](const char* key) { const auto* x = o.if_contains(key); return x && x->is_string() ? std::string(x->get_string()) : std::string(); };
    if (kind == "m") {
      messages_.push_back(str("id"));
    } else if (kind == "b" && !messages_.empty()) {
      Change c{messages_.size() - 1, str("path"), std::nullopt, 0, false};
      if (const auto* b = o.if_contains("blob"); b && b->is_number()) c.blob = b->to_number<std::uint64_t>();
      if (const auto* s = o.if_contains("size"); s && s->is_number()) c.size = s->to_number<std::uint64_t>();
      if (c.blob) next_blob_ = std::max(next_blob_, *c.blob + 1);
      const auto* d = o.if_contains("dropped");
      c.dropped = d && d->is_bool() && d->get_bool();
      if (c.dropped) ++dropped_;
      else bytes_ += c.size;
      changes_.push_back(std::move(c));
    } else if (kind == "c" && !messages_.empty()) {
      unkept_commands_.emplace_back(messages_.size() - 1, str("executor"));
    } else if (kind == "a") {
      last_write_[str("path")] = str("hash");
    } else if (kind == "d") {
      const auto* b = o.if_contains("blob");
      for (auto& c : changes_)
        if (b && b->is_number() && c.blob == b->to_number<std::uint64_t>() && !c.dropped) {
          c.dropped = true;
          bytes_ -= c.size;
          ++dropped_;
        }
    }
  }
  written_marks_ = messages_.size();
}

void CheckpointStore::append(const std::string& line) {
  fs::create_directories(dir_);
  std::ofstream out(dir_ / kIndex, std::ios::binary | std::ios::app);
  out << line << '\n';
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + (dir_ / kIndex).string());
}

void CheckpointStore::flush_marks() {
  for (; written_marks_ < messages_.size(); ++written_marks_)
    append(json::serialize(json::object{{"k", "m"}, {"id", messages_[written_marks_]}}));
}

void CheckpointStore::begin_message(const std::string& message_id) { messages_.push_back(message_id); }

// The oldest contents go until `size` more fit within the bound.
void CheckpointStore::make_room(std::uint64_t size) {
  for (auto& c : changes_) {
    if (bytes_ + size <= max_bytes_) return;
    if (c.dropped || !c.blob) continue;
    std::error_code ec;
    fs::remove(dir_ / kBlobs / std::to_string(*c.blob), ec);
    c.dropped = true;
    bytes_ -= c.size;
    ++dropped_;
    append(json::serialize(json::object{{"k", "d"}, {"blob", *c.blob}}));
  }
}

// Whether the turn of the last begun message changed `path` already.
bool CheckpointStore::seen_in_turn(const fs::path& path) const {
  const std::size_t message = messages_.size() - 1;
  for (auto it = changes_.rbegin(); it != changes_.rend() && it->message == message; ++it)
    if (it->path == path) return true;
  return false;
}

void CheckpointStore::add(Change c, json::object line) {
  flush_marks();
  append(json::serialize(line));
  changes_.push_back(std::move(c));
}

void CheckpointStore::before_change(const fs::path& path, const std::optional<std::string>& content) {
  if (messages_.empty() || seen_in_turn(path)) return;  // the turn's first change is what a restore needs
  Change c{messages_.size() - 1, path, std::nullopt, 0, false};
  json::object line{{"k", "b"}, {"path", path.string()}, {"blob", nullptr}};
  if (content) {
    c.blob = next_blob_++;
    c.size = content->size();
    line["blob"] = *c.blob;
    line["size"] = c.size;
    if (c.size <= max_bytes_) make_room(c.size);
    if (c.size > max_bytes_) {  // larger than the whole bound: not kept at all
      c.dropped = true;
      ++dropped_;
      line["dropped"] = true;
    } else {
      fs::create_directories(dir_ / kBlobs);
      support::write_file_atomically_unsynced(dir_ / kBlobs / std::to_string(*c.blob), *content, 0600);
      bytes_ += c.size;
    }
  }
  add(std::move(c), std::move(line));
}

void CheckpointStore::before_change_unkept(const fs::path& path) {
  if (messages_.empty() || seen_in_turn(path)) return;
  const std::uint64_t blob = next_blob_++;
  ++dropped_;
  add(Change{messages_.size() - 1, path, blob, 0, true},
      json::object{{"k", "b"}, {"path", path.string()}, {"blob", blob}, {"size", 0}, {"dropped", true}});
}

void CheckpointStore::commands_unkept(const std::string& executor) {
  if (messages_.empty()) return;
  const std::pair<std::size_t, std::string> entry{messages_.size() - 1, executor};
  if (std::find(unkept_commands_.begin(), unkept_commands_.end(), entry) != unkept_commands_.end()) return;
  flush_marks();
  append(json::serialize(json::object{{"k", "c"}, {"executor", executor}}));
  unkept_commands_.push_back(entry);
}

std::vector<std::string> CheckpointStore::unkept_commands_since(const std::string& message_id) const {
  std::set<std::string> out;
  if (const auto from = message_index(message_id))
    for (const auto& [message, executor] : unkept_commands_)
      if (message >= *from) out.insert(executor);
  return {out.begin(), out.end()};
}

void CheckpointStore::after_change(const fs::path& path, const std::optional<std::string>& content) {
  if (messages_.empty()) return;
  auto hash = hash_of(content);
  last_write_[path] = hash;
  flush_marks();
  append(json::serialize(json::object{{"k", "a"}, {"path", path.string()}, {"hash", hash}}));
}

std::optional<std::string> CheckpointStore::blob_content(const Change& c) const {
  if (!c.blob) return std::nullopt;
  auto content = support::read_file(dir_ / kBlobs / std::to_string(*c.blob));
  if (!content) throw std::runtime_error("checkpoint content " + std::to_string(*c.blob) + " cannot be read");
  return content;
}

std::optional<std::size_t> CheckpointStore::message_index(const std::string& message_id) const {
  for (std::size_t i = messages_.size(); i-- > 0;)
    if (messages_[i] == message_id) return i;
  return std::nullopt;
}

std::optional<std::vector<fs::path>> CheckpointStore::changed_since(const std::string& message_id) const {
  const auto from = message_index(message_id);
  if (!from) return std::nullopt;
  std::vector<fs::path> out;
  for (const auto& c : changes_)
    if (c.message >= *from && std::find(out.begin(), out.end(), c.path) == out.end()) out.push_back(c.path);
  return out;
}

std::optional<std::vector<CheckpointStore::FileBefore>> CheckpointStore::before(const std::string& message_id,
                                                                                const Contents& known_now) const {
  const auto from = message_index(message_id);
  if (!from) return std::nullopt;
  std::vector<FileBefore> out;
  std::map<fs::path, bool> seen;
  for (const auto& c : changes_) {
    if (c.message < *from || !seen.emplace(c.path, true).second) continue;
    FileBefore f{c.path, !c.dropped, std::nullopt, false};
    if (f.available) f.content = blob_content(c);
    auto last = last_write_.find(c.path);
    std::error_code ec;
    const auto known = known_now.find(c.path);
    const auto now = known != known_now.end() ? known->second
                     : fs::exists(c.path, ec) ? support::read_file(c.path)
                                              : std::optional<std::string>();
    const std::string hash_now = hash_of(now);
    f.unchanged = f.available && hash_now == hash_of(f.content);
    // No write of the agent recorded (the tool failed before it): anything but the old content is by hand.
    f.changed_by_hand = last != last_write_.end() ? last->second != hash_now : !f.unchanged;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace runtime::sessions
