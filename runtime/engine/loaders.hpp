#pragma once
// The engine's loaders (internal to runtime/engine; tests and the fuzzer use them directly).
#include <boost/json.hpp>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/config/yaml_reading.hpp"
#include "runtime/engine/engine.hpp"

namespace runtime::engine::detail {

// ---- SKILL.md frontmatter

struct FrontmatterSplit {
  std::string yaml;  // the lines between the two `---` lines
  int yaml_first_line = 2;  // file line of the first YAML line
};
enum class FrontmatterError { None, Missing, Unclosed };
FrontmatterError split_frontmatter(std::string_view text, FrontmatterSplit& out);

// A fast reader for the common frontmatter shape (`key: plain value` lines only). Returns
// nullopt when the text uses anything else, in which case YAML proper decides; when it returns a
// map, yaml-cpp would have produced the same keys and scalar values.
struct FastField {
  std::string value;
  int line = 0;  // 1-based within the YAML text
  bool null = false;
};
std::optional<std::map<std::string, FastField>> fast_frontmatter(std::string_view yaml);

struct SkillFields {
  std::optional<std::string> name;
  int name_line = 0;
  std::optional<std::string> description;
  int description_line = 0;
  std::string argument_hint;  // `argument-hint` (Claude Code's key): what `/name` expects after it
};
// Parses SKILL.md text. On a problem appends one diagnostic (`severity`, file and line, the
// message ending with "(skill skipped)") and returns nullopt.
std::optional<SkillFields> parse_skill_text(std::string_view text, const fs::path& file, Diagnostic::Severity severity,
                                            Diagnostics& diags);

// Reads and validates `dir/SKILL.md`; the skill's name defaults to the folder's name.
std::optional<Skill> load_skill(const fs::path& dir, SkillSource source, const std::string& plugin,
                                Diagnostic::Severity severity, Diagnostics& diags);

// The recursive search: a folder holding SKILL.md is a skill (its subfolders are not searched);
// otherwise its subfolders are searched. Symlinks are followed; a folder reached twice (a loop, or
// two links to one target) is searched once. Names starting with '.' are not searched.
void find_skills(const fs::path& root, SkillSource source, const std::string& plugin, Diagnostic::Severity severity,
                 std::vector<Skill>& out, Diagnostics& diags);
// One folder of the search: false when it holds no SKILL.md regular file (search below it);
// true when it does, with `skill` set unless the file was skipped (then with a diagnostic).
// `stamp`, when given, gets what the read saw of the SKILL.md.
bool read_skill_folder(const fs::path& dir, SkillSource source, const std::string& plugin, Diagnostic::Severity severity,
                       std::optional<Skill>& skill, Diagnostics& diags, FileStamp* stamp = nullptr);
// find_skills for a watched place: every folder entered, each with its skill (or null).
SkillPlace scan_skill_place(const fs::path& root, SkillSource source, Diagnostic::Severity severity, Diagnostics& diags);
// find_skills over files read elsewhere (an executor): `files` by absolute path, the same rules
// (the first SKILL.md on a path wins, hidden folders are skipped, sorted order).
void find_skills_in(const std::map<fs::path, std::string>& files, const fs::path& root, SkillSource source,
                    Diagnostic::Severity severity, std::vector<Skill>& out, Diagnostics& diags);

// ---- MCP server entries

struct McpParseContext {
  fs::path config_root;          // for executors/<id>.yaml
  std::string expected_id;       // the file name's stem; empty inside plugin manifests
  std::string plugin;            // set for entries of a plugin manifest
  fs::path plugin_root;
};
std::optional<McpServerConfig> parse_mcp_server(config::YamlReader& r, const YAML::Node& node,
                                                const McpParseContext& ctx);
// Every mcp_servers/*.yaml, sorted by file name; broken files are reported and left out.
std::vector<McpServerConfig> load_mcp_server_files(const fs::path& config_root, Diagnostics& diags);

// The `*.yaml` files of `dir` (not dot files), sorted; none when it is not a folder.
std::vector<fs::path> yaml_files_in(const fs::path& dir);

// ---- executors

bool is_executor_id(std::string_view s);  // letters, digits, - and _
// Every executors/*.yaml, by id; broken files are reported and left out.
std::map<std::string, config::ExecutorConfig> load_executor_files(const fs::path& config_root, const fs::path& home,
                                                                  Diagnostics& diags);

// ---- agents

std::map<std::string, Agent> load_agent_files(const fs::path& config_root, Diagnostics& diags);

// ---- plugins

struct LoadedPlugin {
  PluginInfo info;
  std::vector<Skill> skills;
  std::vector<McpServerConfig> mcp_servers;
  std::optional<hooks::PluginHookSource> hooks;
  bool fatal = false;  // its manifest is broken: the whole load fails
};
// The manifest a plugin folder would be read from (OpenVaala, Codex, Claude, Agent Plugins
// order); nullopt when it has none.
std::optional<std::pair<PluginInfo::Format, fs::path>> detect_manifest(const fs::path& plugin_dir);
LoadedPlugin load_plugin(const fs::path& plugin_dir, const Engine::Options& options, Diagnostics& diags);
// The name a plugin folder declares, read leniently (no diagnostics); the folder name otherwise.
std::string plugin_declared_name(const fs::path& plugin_dir);
std::optional<InstallRecord> read_install_record(const fs::path& plugin_dir);

// JSON manifests (plugins.cpp), shared by the plugin formats.
// Parses JSON text; on a syntax error reports it (with `sev`) at its line.
std::optional<boost::json::value> parse_json(const std::string& text, const fs::path& file, Diagnostic::Severity sev,
                                             Diagnostics& diags);
// A JSON manifest as text (for line numbers) and object. One that cannot be read, parsed, or is
// not an object makes the plugin fail (`lp.fatal`), with the problem reported.
struct JsonManifest {
  std::string text;
  boost::json::object object;
};
std::optional<JsonManifest> read_json_manifest(LoadedPlugin& lp, const fs::path& manifest, const char* not_an_object,
                                               Diagnostics& diags);
// A JSON manifest being checked: `fail` reports an error at a line and fails the plugin.
struct JsonManifestCheck {
  LoadedPlugin& lp;
  const fs::path& manifest;
  const std::string& text;
  const boost::json::object& o;
  Diagnostics& diags;

  void fail(int line, const std::string& msg);
  int line(std::string_view key) const;  // the line of `"key":` in the text (0 when absent)
};
// "a string", "an object", ... for messages.
std::string json_type_name(const boost::json::value& v);
// `rel` as an absolute path inside the plugin folder `root`; nullopt when it is absolute, starts
// with `~` or leads outside (after symlinks).
std::optional<fs::path> inside_plugin(const fs::path& root, const std::string& rel);

// The Agent Plugins 1.0 layout: plugin.json, mcp.json and skills/ (agent_plugins.cpp).
void load_agent_plugins(LoadedPlugin& lp, const fs::path& dir, const fs::path& manifest,
                        const Engine::Options& options, Diagnostics& diags);

constexpr const char* kAgentPluginsSchema = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";
constexpr const char* kAgentPluginsMcpSchema = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";

}  // namespace runtime::engine::detail
