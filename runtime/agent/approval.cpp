#include "runtime/agent/approval.hpp"

namespace runtime::approval {

using tools::Authorization;
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
  if (r.remembered) return *r.remembered ? Verdict::Allow : Verdict::Reject;
  return Verdict::Ask;
}

Answer interpret(PermissionAnswer answer) {
  switch (answer) {
    case PermissionAnswer::AllowOnce: return {Authorization::Allowed, std::nullopt};
    case PermissionAnswer::AllowAlways: return {Authorization::Allowed, true};
    case PermissionAnswer::RejectOnce: return {Authorization::Rejected, std::nullopt};
    case PermissionAnswer::RejectAlways: return {Authorization::Rejected, false};
    case PermissionAnswer::Cancelled: return {Authorization::Cancelled, std::nullopt};
  }
  return {Authorization::Cancelled, std::nullopt};
}

}  // namespace runtime::approval
