// How long the engine takes to load a large configuration, and to build one session's view.
//
//   engine_bench [iterations]    (default 30)
//
// The tree (made under $TMPDIR, removed afterwards): 2,000 skills (600 in the private skill
// directory, some nested in groups; 400 in ~/.agents/skills; 1,000 in 100 plugins of 10 skills),
// 100 OpenVaala plugins each with a `hooks:` section and one stdio MCP server, 200 hooks/*.yaml
// files, 20 mcp_servers/*.yaml files, 5 agents, and a project with 3 levels of AGENTS.md and
// 20 project skills.
//   load   Engine::load: config.yaml, every skill's frontmatter, plugins, MCP files, agents, hooks
//   view   Engine::session_view: the project's skills, name clashes, AGENTS.md chain, agent filter
//   both   load + view: what a reload followed by a new session costs
//   read again   Engine::with_skills_read_again for one edited private SKILL.md (what a running
//                server does when the file changes), and the view's swap of that skill
// ENGINE_BENCH_SKILLS=N scales the skill counts (20000: 6,000 private, 4,000 home, 100 a plugin).
// Reports min / median / p90 in milliseconds.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/engine/engine.hpp"
#include "runtime/engine/loaders.hpp"

namespace fs = std::filesystem;
using runtime::engine::Engine;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

std::string skill_md(const std::string& name) {
  return "---\nname: " + name + "\ndescription: Use when working on " + name +
         " tasks; it lists the steps, the checks and the files to touch.\nlicense: MIT\n---\n# " + name +
         "\n\n1. Read the relevant files.\n2. Make the change.\n3. Run the tests.\n" + std::string(1500, 'x') + "\n";
}

struct Stats {
  double min, median, p90;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 9 / 10)]};
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
  if (iterations < 1) iterations = 1;
  fs::path root = fs::temp_directory_path() / ("ov-engine-bench-" + std::to_string(::getpid()));
  fs::path cfg = root / "config", home = root / "home", proj = root / "work/repo/pkg/app";
  int skills = 0;
  const double scale = std::getenv("ENGINE_BENCH_SKILLS") ? std::atof(std::getenv("ENGINE_BENCH_SKILLS")) / 2000 : 1;
  const int private_count = static_cast<int>(600 * scale), home_count = static_cast<int>(400 * scale),
            per_plugin = static_cast<int>(10 * scale);
  for (int i = 0; i < private_count; ++i, ++skills) {
    std::string n = "private-" + std::to_string(i);
    write(cfg / "skills" / (i % 3 == 0 ? "group-" + std::to_string(i % 10) + "/" + n : n) / "SKILL.md", skill_md(n));
  }
  for (int i = 0; i < home_count; ++i, ++skills) {
    std::string n = "home-" + std::to_string(i);
    write(home / ".agents/skills" / n / "SKILL.md", skill_md(n));
  }
  for (int p = 0; p < 100; ++p) {
    std::string name = "plugin-" + std::to_string(p);
    fs::path dir = cfg / "plugins" / name;
    write(dir / ".openvaala-plugin/plugin.yaml",
          "name: " + name + "\nversion: 1.0." + std::to_string(p) + "\ndescription: Plugin " + name +
              "\nhooks:\n  PostToolUse:\n    - matcher: apply_patch\n      hooks:\n        - type: command\n"
              "          command: echo formatted\nmcp_servers:\n  - id: " + name + "-server\n    type: stdio\n"
              "    command: node\n    args: [\"${OPENVAALA_PLUGIN_ROOT}/server.mjs\"]\n");
    for (int s = 0; s < per_plugin; ++s, ++skills) {
      std::string n = "skill-" + std::to_string(s);
      write(dir / "skills" / n / "SKILL.md", skill_md(n));
    }
  }
  for (int h = 0; h < 200; ++h)
    write(cfg / "hooks" / ("hook-" + std::to_string(h) + ".yaml"),
          "hooks:\n  PreToolUse:\n    - matcher: bash|apply_patch\n      hooks:\n        - type: command\n"
          "          command: echo check " + std::to_string(h) + "\n          timeout: 10\n");
  for (int m = 0; m < 20; ++m)
    write(cfg / "mcp_servers" / ("server-" + std::to_string(m) + ".yaml"),
          "id: server-" + std::to_string(m) + "\ntype: stdio\ncommand: uvx\nargs: [tool, serve]\n");
  for (int a = 0; a < 5; ++a)
    write(cfg / "agents" / ("agent-" + std::to_string(a) + ".yaml"),
          "description: Agent " + std::to_string(a) + "\ninstructions: Be careful.\nmcp_servers: [server-1, server-2]\n");
  write(cfg / "config.yaml", "model: main/gpt-4.1\nproviders:\n  main:\n    api_type: openai\n    api_key_env: K\n");
  fs::create_directories(root / "work/repo/.git");
  write(root / "work/repo/AGENTS.md", "root rules\n");
  write(root / "work/repo/pkg/AGENTS.md", "pkg rules\n");
  write(proj / "AGENTS.md", "app rules\n");
  for (int i = 0; i < 20; ++i) write(proj / ".agents/skills" / ("proj-" + std::to_string(i)) / "SKILL.md", skill_md("proj-" + std::to_string(i)));

  Engine::Options o;
  o.config_root = cfg;
  o.home = home;
  o.builtin_skills_dir = root / "cache/builtin-skills";
  o.plugin_data_root = root / "data";

  std::vector<double> load_ms, view_ms, both_ms, core_ms;
  auto core_options = o;
  core_options.skills = false;  // what session/new waits for (the skills load after it)
  std::size_t seen_skills = 0, seen_hooks = 0, seen_servers = 0, errors = 0;
  // ENGINE_BENCH_CORE_ONLY=N: only N loads without skills, to profile what session/new waits for
  // (perf record build/bench/engine_bench).
  if (const char* n = std::getenv("ENGINE_BENCH_CORE_ONLY")) {
    std::vector<double> ms;
    for (int i = 0; i < std::atoi(n); ++i) {
      runtime::config::Diagnostics d;
      auto c0 = std::chrono::steady_clock::now();
      auto core = Engine::load(core_options, d);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count());
    }
    auto s = stats(ms);
    std::printf("load w/o skills: min %.2f median %.2f ms\n", s.min, s.median);
    return 0;
  }
  for (int i = 0; i < iterations + 1; ++i) {
    runtime::config::Diagnostics d;
    auto t0 = std::chrono::steady_clock::now();
    auto e = Engine::load(o, d);
    auto t1 = std::chrono::steady_clock::now();
    auto v = e->session_view(proj);
    auto t2 = std::chrono::steady_clock::now();
    if (i == 0) {  // the first run warms the page cache
      seen_skills = v.skills.size();
      seen_hooks = e->hooks().hooks.size();
      seen_servers = e->mcp_servers().size();
      errors = d.size();
      for (const auto& x : d) std::fprintf(stderr, "%s\n", x.to_string().c_str());
      continue;
    }
    load_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    runtime::config::Diagnostics core_diags;
    auto c0 = std::chrono::steady_clock::now();
    auto core = Engine::load(core_options, core_diags);
    core_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count());
    view_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    both_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  // Where the load time goes (same tree, same warm cache).
  std::vector<double> skills_ms, plugins_ms, hooks_ms;
  for (int i = 0; i < iterations; ++i) {
    runtime::config::Diagnostics d;
    std::vector<runtime::engine::Skill> out;
    auto t0 = std::chrono::steady_clock::now();
    runtime::engine::detail::find_skills(cfg / "skills", runtime::engine::SkillSource::Private, "",
                                         runtime::config::Diagnostic::Severity::Error, out, d);
    runtime::engine::detail::find_skills(home / ".agents/skills", runtime::engine::SkillSource::HomeAgents, "",
                                         runtime::config::Diagnostic::Severity::Warning, out, d);
    auto t1 = std::chrono::steady_clock::now();
    std::vector<runtime::hooks::PluginHookSource> sources;
    for (int p = 0; p < 100; ++p) {
      auto lp = runtime::engine::detail::load_plugin(cfg / "plugins" / ("plugin-" + std::to_string(p)), o, d);
      if (lp.hooks) sources.push_back(*lp.hooks);
    }
    auto t2 = std::chrono::steady_clock::now();
    auto hs = runtime::hooks::load_hooks(cfg, sources, d);
    auto t3 = std::chrono::steady_clock::now();
    skills_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    plugins_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    hooks_ms.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
  }
  // One private SKILL.md edited, read again on top of the loaded engine; the view swaps it.
  std::vector<double> again_ms, swap_ms;
  {
    runtime::config::Diagnostics d;
    auto e = Engine::load(o, d);
    auto view = e->session_view(proj);
    const fs::path dir = cfg / "skills" / "private-1";
    for (int i = 0; i < iterations; ++i) {
      write(dir / "SKILL.md", skill_md("private-1") + std::to_string(i));
      std::vector<Engine::SkillSwap> swaps;
      auto t0 = std::chrono::steady_clock::now();
      auto fresh = e->with_skills_read_again({dir}, swaps, d);
      auto t1 = std::chrono::steady_clock::now();
      if (!fresh || !view.swap_skill(swaps.at(0).before, swaps.at(0).after)) {
        std::fprintf(stderr, "the edit was not read again in place\n");
        return 1;
      }
      auto t2 = std::chrono::steady_clock::now();
      e = fresh;
      again_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      swap_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
  }
  std::printf("tree: %d skill files + 20 project skills, 100 plugins, 200 hook files (+100 plugin hook sections), "
              "20+100 MCP servers\n",
              skills);
  std::printf("loaded: %zu skills visible in the session, %zu hooks, %zu MCP servers, %zu diagnostics\n", seen_skills,
              seen_hooks, seen_servers, errors);
  std::printf("%-18s %9s %9s %9s   (ms, %d iterations)\n", "case", "min", "median", "p90", iterations);
  for (auto [name, v] : {std::pair{"load", &load_ms}, std::pair{"load w/o skills", &core_ms},
                         std::pair{"view", &view_ms}, std::pair{"both", &both_ms},
                         std::pair{"  user skills", &skills_ms}, std::pair{"  100 plugins", &plugins_ms},
                         std::pair{"  300 hooks", &hooks_ms}, std::pair{"read again", &again_ms},
                         std::pair{"  view swap", &swap_ms}}) {
    auto s = stats(*v);
    std::printf("%-18s %9.2f %9.2f %9.2f\n", name, s.min, s.median, s.p90);
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
