// update_plan: the model's step list for a longer task, shown by the editor as the session's
// plan (ACP `plan` update; Zed and VS Code show it above the input). The same shape as Codex's
// tool, so models trained on it use it as they already do. Offered to top-level turns only: a
// sub-agent's steps would replace the plan the user is following.
#include "support/json_read.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime::tools {

namespace json = boost::json;

namespace {

class UpdatePlanTool : public Tool {
 public:
  std::string name() const override { return "update_plan"; }

  ToolSpec spec() const override {
    json::object step{
        {"type", "object"},
        {"properties",
         json::object{{"step", json::object{{"type", "string"}, {"description", "What this step does, in a few words"}}},
                      {"status", json::object{{"type", "string"}, {"enum", json::array{"pending", "in_progress", "completed"}}}}}},
        {"required", json::array{"step", "status"}}};
    return {name(),
            "Keep the user informed of your plan for a task with several steps. Send the whole list every time "
            "(it replaces the previous one), with at most one step in_progress; mark steps completed as you "
            "finish them. Skip it for simple tasks.",
            json::object{{"type", "object"},
                         {"properties",
                          json::object{{"explanation", json::object{{"type", "string"}, {"description", "Why the plan changed (optional)"}}},
                                       {"plan", json::object{{"type", "array"}, {"items", std::move(step)}}}}},
                         {"required", json::array{"plan"}}}};
  }

  ToolDescription describe(const json::object&, const ToolEnv&) const override {
    ToolDescription d;
    d.title = "Update plan";
    d.kind = ToolKind::Think;
    return d;
  }

  // A plan that is not well formed ends the call before it is marked in progress.
  boost::asio::awaitable<ApprovalRequest> approval(ToolContext& ctx, const json::object& args) override {
    ApprovalRequest request;
    std::vector<PlanEntry> entries;
    if (auto error = parse_plan(args, entries)) request.refusal = error_result(std::move(*error));
    else ctx.prepared() = std::move(entries);
    co_return request;
  }

  boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const json::object&) override {
    auto entries = std::any_cast<std::vector<PlanEntry>>(std::move(ctx.prepared()));
    const std::size_t count = entries.size();
    ctx.show_plan(std::move(entries));
    co_return ToolResult{"Plan updated (" + std::to_string(count) + " steps).", false, {}, nullptr};
  }

 private:
  // The steps of `plan`, or what is wrong with them.
  static std::optional<std::string> parse_plan(const json::object& args, std::vector<PlanEntry>& entries) {
    const json::array* plan = support::arr_at(args, "plan");
    if (!plan) return "update_plan needs 'plan': a list of {step, status}.";
    int in_progress = 0;
    for (std::size_t i = 0; i < plan->size(); ++i) {
      const std::string where = "plan[" + std::to_string(i) + "]";
      const json::object* item = (*plan)[i].if_object();
      if (!item) return where + " must be an object {step, status}.";
      const std::string step(support::str_at(*item, "step"));
      const std::string status(support::str_at(*item, "status"));
      if (step.empty()) return where + ".step must be a non-empty string.";
      if (status != "pending" && status != "in_progress" && status != "completed")
        return where + ".status must be pending, in_progress or completed, not '" + status + "'.";
      in_progress += status == "in_progress";
      entries.push_back(PlanEntry{step, status});
    }
    if (in_progress > 1) return "At most one step may be in_progress; " + std::to_string(in_progress) + " are.";
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Tool> make_update_plan_tool() { return std::make_unique<UpdatePlanTool>(); }

}  // namespace runtime::tools
