// read_file: reads a text file through the call's executor (on local the editor's fs/read_text_file
// when it offers it: it sees unsaved buffers).
#include "support/json_read.hpp"
#include "runtime/tools/tool.hpp"
#include "runtime/tools/tool_paths.hpp"

namespace runtime::tools {

namespace json = boost::json;

namespace {

constexpr std::int64_t kDefaultLimit = 2000;
constexpr std::size_t kMaxBytes = 256 * 1024;
constexpr std::size_t kMaxShownBytes = 16 * 1024;

class ReadFileTool : public Tool {
 public:
  std::string name() const override { return "read_file"; }

  ToolSpec spec() const override {
    return {name(),
            "Read a text file. Returns its contents (at most 2000 lines unless `limit` says otherwise). "
            "Paths are absolute or relative to the working directory.",
            json::object{{"type", "object"},
                         {"properties",
                          json::object{{"path", json::object{{"type", "string"}, {"description", "File to read"}}},
                                       {"offset", json::object{{"type", "integer"}, {"description", "1-based first line"}}},
                                       {"limit", json::object{{"type", "integer"}, {"description", "Number of lines"}}},
                                       {"executor", executor_property()}}},
                         {"required", json::array{"path"}}}};
  }

  ToolDescription describe(const json::object& args, const ToolEnv& env) const override {
    ToolDescription d;
    d.kind = ToolKind::Read;
    auto path = std::string(support::str_at(args, "path"));
    if (path.empty()) {
      d.title = "Read file";
      return d;
    }
    const auto where = on_executor_suffix(args, env);
    if (!where.empty()) {  // not a file the editor could open
      d.title = "Read " + path + where;
      return d;
    }
    auto abs = resolve_path(env, path);
    d.title = "Read " + abs.lexically_relative(env.cwd).string();
    ToolLocation loc{abs.string(), std::nullopt};
    if (auto off = support::int_at(args, "offset"); off && *off > 0) loc.line = *off;
    d.locations.push_back(std::move(loc));
    return d;
  }

  bool runs_on_executor() const override { return true; }

  std::optional<std::string> file_read(const json::object& args) const override {
    auto path = support::str_at(args, "path");
    if (path.empty()) return std::nullopt;
    return std::string(path);
  }

  // The path judged is the path opened: resolved here, the editor gets it resolved (DESIGN §11).
  boost::asio::awaitable<ApprovalRequest> approval(ToolContext& ctx, const json::object& args) override {
    ApprovalRequest request;
    auto path_arg = std::string(support::str_at(args, "path"));
    if (path_arg.empty()) {
      request.refusal = error_result("read_file needs a 'path'.");
      co_return request;
    }
    auto opened = co_await path_to_open(ctx, path_arg, ctx.executor().opens_elsewhere(false));
    if (!opened) {
      request.refusal = process_file_result(path_arg);
      co_return request;
    }
    request.permission = Permission::Read;
    request.paths.push_back(*opened);
    request.refused_text = "The user did not allow reading " + opened->string() +
                           " (outside the session's folders). Do not retry it; ask the user how to proceed instead.";
    ctx.prepared() = *opened;
    co_return request;
  }

  boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const json::object& args) override {
    const auto path = std::any_cast<std::filesystem::path>(ctx.prepared());
    auto offset = support::int_at(args, "offset").value_or(1);
    auto limit = support::int_at(args, "limit").value_or(kDefaultLimit);
    if (offset < 1) offset = 1;
    if (limit < 1) limit = kDefaultLimit;
    std::string text;
    bool cut = false;
    try {
      // Only the window: a 1 GiB file costs what the model is given, not the file.
      auto read = co_await ctx.executor().read_lines(path.string(), {offset, limit, kMaxBytes}, &ctx.cancel());
      if (read.stopped) throw ToolCancelled();
      text = std::move(read.text);
      cut = read.cut;
    } catch (const ExecutorError& e) {
      if (ctx.cancel().cancelled()) throw ToolCancelled();
      co_return error_result(e.what());
    }
    ToolResult r;
    if (text.size() > kMaxBytes) {
      text.resize(kMaxBytes);
      cut = true;
    }
    if (cut) text += "\n[... truncated at 256 KB; read further with offset/limit]";
    r.content.push_back(TextContent{text.size() > kMaxShownBytes ? text.substr(0, kMaxShownBytes) + "\n..." : text});
    r.text = std::move(text);
    co_return r;
  }
};

}  // namespace

std::unique_ptr<Tool> make_read_file_tool() { return std::make_unique<ReadFileTool>(); }

}  // namespace runtime::tools
