#include "runtime/agent/approval.hpp"

#include <algorithm>

namespace runtime::approval {

using tools::Permission;

Verdict decide(const Request& r) {
  using containment::Place;
  if (r.place == Place::Credentials) return Verdict::Forbid;
  if (r.permission == Permission::None) return Verdict::Allow;
  if (r.permission == Permission::Read && r.place == Place::Inside) return Verdict::Allow;
  switch (r.mode) {
    case Mode::ReadOnly:
      if (r.permission != Permission::Read) return Verdict::Reject;
      break;
    case Mode::FullAuto: return Verdict::Allow;
    case Mode::AcceptEdits:
      if (r.permission == Permission::Edit && r.place == Place::Inside) return Verdict::Allow;
      break;
    case Mode::Default: break;
  }
  if (r.hook_allowed) return Verdict::Allow;
  if (r.remembered == std::optional<bool>(false)) return Verdict::Reject;  // a refusal holds everywhere
  // "Always allow" covers the roots only, never the config root (its hooks run code) or an edit
  // outside them (DESIGN §11); a read outside is remembered by its folder, so its key is the place.
  if (r.remembered && r.place == Place::Inside) return Verdict::Allow;
  if (r.remembered && r.permission == Permission::Read && r.place == Place::Outside) return Verdict::Allow;
  return Verdict::Ask;
}

namespace {
void add_key(Memory& m, std::string key, const std::string& named) {
  if (std::find(m.keys.begin(), m.keys.end(), key) != m.keys.end()) return;
  m.keys.push_back(std::move(key));
  m.label += (m.label.empty() ? "" : ", ") + named;
}

Memory read_memory(const std::vector<std::filesystem::path>& resolved) {
  Memory m;
  for (const auto& path : resolved) add_key(m, "read:" + path.parent_path().string(), path.parent_path().string());
  if (!m.keys.empty()) m.label = "reads in " + m.label;
  return m;
}

Memory edit_memory(const std::vector<std::filesystem::path>& paths, const std::vector<std::filesystem::path>& roots) {
  Memory m;
  for (const auto& path : paths) {
    const auto root = std::find_if(roots.begin(), roots.end(), [&](const auto& r) {
      const auto rel = path.lexically_relative(r);
      return !rel.empty() && *rel.begin() != "..";
    });
    if (root == roots.end()) return {};  // (a resolved path under a symlinked root: asked again)
    add_key(m, "edit:" + root->lexically_normal().string(), root == roots.begin() ? "this workspace" : root->string());
  }
  if (!m.keys.empty()) m.label = "edits in " + m.label;
  return m;
}
}  // namespace

Memory memory_of(const tools::ApprovalRequest& request, containment::Place place,
                 const std::vector<std::filesystem::path>& roots, const std::vector<std::filesystem::path>& resolved) {
  if (request.permission == Permission::Execute) return {request.keys, request.keys_label};
  if (request.permission == Permission::Read && place == containment::Place::Outside) return read_memory(resolved);
  if (request.permission != Permission::Edit || place != containment::Place::Inside) return {};
  return edit_memory(request.paths, roots);
}

std::optional<bool> remembered(const std::map<std::string, bool>& answers, const std::vector<std::string>& keys) {
  if (keys.empty()) return std::nullopt;
  bool all = true;
  for (const auto& key : keys) {
    auto it = answers.find(key);
    if (it == answers.end()) all = false;
    else if (!it->second) return false;  // a refusal of one part refuses the call
  }
  return all ? std::optional<bool>(true) : std::nullopt;
}

Answer interpret(PermissionAnswer answer) {
  switch (answer) {
    case PermissionAnswer::AllowOnce: return {Verdict::Allow, std::nullopt};
    case PermissionAnswer::AllowAlways: return {Verdict::Allow, true};
    case PermissionAnswer::RejectOnce: return {Verdict::Reject, std::nullopt};
    case PermissionAnswer::RejectAlways: return {Verdict::Reject, false};
    case PermissionAnswer::Cancelled: return {Verdict::Cancelled, std::nullopt};
  }
  return {Verdict::Cancelled, std::nullopt};
}

}  // namespace runtime::approval
