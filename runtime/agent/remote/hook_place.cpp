// Hooks on an executor other than local (DESIGN §10): the executor of the event, connected; the
// scripts and plugin folders its hooks need, copied there first.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "runtime/agent/hook_runtime.hpp"
#include "support/file_io.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRemoteCache = "~/.cache/openvaala/";

void mix(std::uint64_t& h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= 0xff;  // a separator: ("ab", "c") and ("a", "bc") differ
  h *= 1099511628211ull;
}

// <name>-<hash of every file's path, mode and content>: a changed plugin gets a new folder there.
std::string plugin_copy_name(const fs::path& root, const std::string& name) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    std::error_code e2;
    if (it->is_regular_file(e2)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& f : files) {
    struct stat st{};
    ::stat(f.c_str(), &st);
    mix(h, f.lexically_relative(root).string());
    mix(h, std::to_string(st.st_mode & 07777));
    mix(h, support::read_file(f).value_or(""));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return name + "-" + hex;
}

struct ScriptFile {
  std::string content;
  unsigned mode = 0;
  bool ok = false;
};

ScriptFile read_script(const fs::path& script) {
  ScriptFile f;
  struct stat st{};
  if (::stat(script.c_str(), &st) != 0) return f;
  auto text = support::read_file(script);
  if (!text) return f;
  return {std::move(*text), static_cast<unsigned>(st.st_mode & 07777), true};
}

}  // namespace

boost::asio::awaitable<std::shared_ptr<const hooks::HookPlace>> hook_place(const Session& session, const hooks::HookSet& set,
                                                                          hooks::HookEvent event, hooks::HookInput& input,
                                                                          const std::string& executor,
                                                                          boost::asio::thread_pool& pool,
                                                                          support::CancelSource* cancel) {
  const std::string id = executor.empty() ? session.settings.executor : executor;
  if (id == config::kLocalExecutor || !session.services.executors) co_return nullptr;
  auto place = std::make_shared<hooks::HookPlace>();
  place->executor = id;
  auto ex = use_executor(session, id);
  if (!ex) {
    place->refusal = "there is no executor '" + id + "' to run it on";
    co_return place;
  }
  // A files-only executor is a folder of this machine (virtual, the built-in skills): its events'
  // hooks run here, so a guard hook neither fails closed on every read there nor is skipped.
  if (!ex->info().can_run) co_return nullptr;
  try {
    input.cwd = co_await ex->working_directory(cancel);
  } catch (const ExecutorError& e) {
    place->refusal = e.what();
    co_return place;
  }
  place->launch = [ex](const std::string& line, const EnvList& env) { return ex->launch_argv(line, env); };
  for (const auto& hook : set.hooks) {
    if (!hooks::hook_matches(hook, event, input)) continue;
    if (hook.script && !place->scripts.count(*hook.script) && !place->copy_errors.count(*hook.script)) {
      try {
        auto job = [script = *hook.script] { return read_script(script); };
        auto file = co_await support::run_blocking(pool, std::move(job));
        if (!file.ok) throw ExecutorError("script " + hook.script->string() + " cannot be read");
        auto done = co_await ex->install_file(kRemoteCache + hooks::script_cache_name(*hook.script), file.content,
                                              file.mode, cancel);
        if (done.written) spdlog::info("hook script {} copied to {}:{}", hook.script->string(), id, done.path);
        place->scripts[*hook.script] = done.path;
      } catch (const ExecutorError& e) {
        place->copy_errors[*hook.script] = e.what();
      }
    }
    if (!hook.plugin_root.empty() && !place->plugin_roots.count(hook.plugin_root) &&
        !place->copy_errors.count(hook.plugin_root)) {
      try {
        auto job = [root = hook.plugin_root, name = hook.plugin_name] { return plugin_copy_name(root, name); };
        auto name = co_await support::run_blocking(pool, std::move(job));
        place->plugin_roots[hook.plugin_root] =
            co_await ex->copy_tree(hook.plugin_root.string(), std::string(kRemoteCache) + "plugins/" + name, cancel);
      } catch (const ExecutorError& e) {
        place->copy_errors[hook.plugin_root] = e.what();
      }
    }
  }
  co_return place;
}

}  // namespace runtime
