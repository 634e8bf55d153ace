#include "runtime/protocol/events.hpp"

#include <array>
#include <utility>

namespace runtime {

namespace {
constexpr std::array<std::pair<ToolKind, const char*>, 9> kKinds{{{ToolKind::Read, "read"},
                                                                   {ToolKind::Edit, "edit"},
                                                                   {ToolKind::Delete, "delete"},
                                                                   {ToolKind::Move, "move"},
                                                                   {ToolKind::Search, "search"},
                                                                   {ToolKind::Execute, "execute"},
                                                                   {ToolKind::Think, "think"},
                                                                   {ToolKind::Fetch, "fetch"},
                                                                   {ToolKind::Other, "other"}}};
constexpr std::array<std::pair<ToolStatus, const char*>, 4> kStatuses{{{ToolStatus::Pending, "pending"},
                                                                        {ToolStatus::InProgress, "in_progress"},
                                                                        {ToolStatus::Completed, "completed"},
                                                                        {ToolStatus::Failed, "failed"}}};
constexpr std::array<std::pair<NoticeSeverity, const char*>, 3> kSeverities{
    {{NoticeSeverity::Info, "info"}, {NoticeSeverity::Warning, "warning"}, {NoticeSeverity::Error, "error"}}};
constexpr std::array<std::pair<CompactionStatus, const char*>, 4> kCompactionStatuses{
    {{CompactionStatus::InProgress, "in_progress"},
     {CompactionStatus::Completed, "completed"},
     {CompactionStatus::Failed, "failed"},
     {CompactionStatus::Cancelled, "cancelled"}}};

template <class Table, class E>
const char* name_in(const Table& table, E value) {
  for (const auto& [v, n] : table)
    if (v == value) return n;
  return table.back().second;
}

template <class E, class Table>
std::optional<E> value_in(const Table& table, std::string_view name) {
  for (const auto& [v, n] : table)
    if (name == n) return v;
  return std::nullopt;
}
}  // namespace

const char* tool_kind_name(ToolKind k) { return name_in(kKinds, k); }
std::optional<ToolKind> tool_kind_from_name(std::string_view s) { return value_in<ToolKind>(kKinds, s); }
const char* tool_status_name(ToolStatus s) { return name_in(kStatuses, s); }
std::optional<ToolStatus> tool_status_from_name(std::string_view s) { return value_in<ToolStatus>(kStatuses, s); }

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::EndTurn: return "end_turn";
    case StopReason::MaxTokens: return "max_tokens";
    case StopReason::MaxTurnRequests: return "max_turn_requests";
    case StopReason::Refusal: return "refusal";
    case StopReason::Cancelled: return "cancelled";
  }
  return "end_turn";
}

const char* notice_severity_name(NoticeSeverity s) { return name_in(kSeverities, s); }
const char* compaction_status_name(CompactionStatus s) { return name_in(kCompactionStatuses, s); }

void ToolCallFields::merge(const ToolCallFields& u) {
  if (u.title) title = u.title;
  if (u.name) name = u.name;
  if (u.kind) kind = u.kind;
  if (u.status) status = u.status;
  if (u.locations) locations = u.locations;
  if (u.raw_input) raw_input = u.raw_input;
  if (u.raw_output) raw_output = u.raw_output;
  if (u.content) content = u.content;
}

}  // namespace runtime
