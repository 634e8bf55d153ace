// The Agent Plugins 1.0 layout: plugin.json (its fields and schema), mcp.json (servers, with
// ${PLUGIN_ROOT}/${PLUGIN_DATA}, URL and header rules) and skills/ (one level, links checked).
#include <algorithm>
#include <boost/json.hpp>
#include <functional>
#include <regex>
#include <set>

#include "runtime/engine/loaders.hpp"
#include "runtime/engine/names.hpp"
#include "runtime/engine/paths.hpp"
#include "runtime/engine/text_lines.hpp"
#include "support/file_io.hpp"

namespace runtime::engine::detail {

namespace json = boost::json;
using Severity = Diagnostic::Severity;

namespace {

const std::regex& semver_re() {
  static const std::regex re(R"(^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$)");
  return re;
}

bool credential_header(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* bad : {"authorization", "apikey", "api-key", "api_key", "token", "secret", "cookie"})
    if (name.find(bad) != std::string::npos) return true;
  return false;
}

// `http(s)://host...`: no userinfo, no fragment, HTTPS unless the host is loopback.
std::optional<std::string> check_ap_url(const std::string& url) {
  std::string rest;
  bool https = false;
  if (url.rfind("https://", 0) == 0) {
    https = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return "'url' must be an absolute http:// or https:// URL";
  }
  if (url.find('#') != std::string::npos) return "'url' must not have a fragment (#...)";
  std::string authority = rest.substr(0, rest.find_first_of("/?"));
  if (authority.find('@') != std::string::npos) return "'url' must not carry user information (user:password@)";
  if (authority.empty()) return "'url' has no host";
  std::string host = authority;
  if (host[0] == '[') host = host.substr(0, host.find(']') + 1);
  else host = host.substr(0, host.find(':'));
  bool loopback = host == "localhost" || host == "[::1]" || host.rfind("127.", 0) == 0;
  if (!https && !loopback) return "'url' must use https:// (plain http:// is allowed only for localhost and loopback addresses)";
  return std::nullopt;
}

// One Agent Plugins mcp.json: the file, its text, and the plugin's folders its placeholders name.
struct ApMcpFile {
  fs::path dir;   // ${PLUGIN_ROOT}
  fs::path data;  // ${PLUGIN_DATA}
  fs::path file;
  std::string text;
  std::string plugin;

  // One pass over both placeholders: a value produced by one expansion is never expanded again.
  std::string expand(const std::string& s) const {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
      if (s.compare(i, 14, "${PLUGIN_ROOT}") == 0) {
        out += dir.string();
        i += 14;
      } else if (s.compare(i, 14, "${PLUGIN_DATA}") == 0) {
        out += data.string();
        i += 14;
      } else {
        out += s[i++];
      }
    }
    return out;
  }
};

// One server entry of mcp.json. Every problem is reported and the server is skipped.
struct ApServerReader {
  const ApMcpFile& m;
  Diagnostics& diags;
  McpServerConfig c;
  std::string where;
  bool ok = true;

  void bad(const std::string& msg) {
    diags.push_back({Severity::Error, m.file.string(), c.source_line, where + msg + " (server skipped)"});
    ok = false;
  }

  void read(const std::string& id, const json::value& value) {
    c.id = id;
    c.plugin = m.plugin;
    c.source_file = m.file;
    c.source_line = json_key_line(m.text, id);
    where = "MCP server '" + id + "': ";
    if (!is_mcp_server_id(id)) return bad("the id must use letters, digits, '-' and '_', without '__'");
    if (!value.is_object()) return bad("must be an object");
    const auto& s = value.as_object();
    auto* type = s.if_contains("type");
    std::string t = type && type->is_string() ? std::string(type->as_string()) : "";
    if (t == "stdio") read_stdio(s);
    else if (t == "streamable-http" || t == "sse") read_remote(s, t);
    else bad("'type' must be stdio, streamable-http or sse" + (t.empty() ? std::string(" (it is missing)") : ", not '" + t + "'"));
  }

  void read_stdio(const json::object& s) {
    for (const auto& f : s)
      if (f.key() != "type" && f.key() != "command" && f.key() != "args" && f.key() != "env" && f.key() != "cwd")
        bad("unknown field '" + std::string(f.key()) + "' for a stdio server (allowed: type, command, args, env, cwd)");
    read_command(s.if_contains("command"));
    if (auto* args = s.if_contains("args")) read_args(*args);
    if (auto* env = s.if_contains("env")) read_env(*env);
    c.env["PLUGIN_ROOT"] = m.dir.string();
    c.env["PLUGIN_DATA"] = m.data.string();
    if (auto* cwd = s.if_contains("cwd")) read_cwd(*cwd);
    else c.cwd = m.dir;
    c.transport = McpServerConfig::Transport::Stdio;
  }

  // A bare program name (found on PATH) or a ./relative file inside the plugin.
  void read_command(const json::value* cmd) {
    if (!cmd || !cmd->is_string() || cmd->as_string().empty()) return bad("'command' is required and must be a string");
    std::string command(cmd->as_string());
    if (command.find("${") != std::string::npos) {
      bad("'command' must not contain placeholders such as ${PLUGIN_ROOT} (put them in args)");
    } else if (command.find_first_of(" \t\r\n") != std::string::npos) {
      bad("'command' must be a single executable token, not '" + command + "' (put arguments in args)");
    } else if (command.rfind("./", 0) == 0) {
      auto abs = inside_plugin(m.dir, command);
      if (!abs) bad("'command' '" + command + "' points outside the plugin folder");
      else if (!is_file(*abs)) bad("'command' '" + command + "' does not exist in the plugin");
      else c.command = abs->string();
    } else if (command.find('/') != std::string::npos) {
      bad("'command' must be a bare program name (found on PATH) or a ./relative path inside the plugin, not '" +
          command + "'");
    } else {
      c.command = command;
    }
  }

  // Placeholders expanded; one starting with ${PLUGIN_ROOT} must name a file of the plugin.
  void read_args(const json::value& args) {
    if (!args.is_array()) return bad("'args' must be an array of strings");
    for (const auto& a : args.as_array()) {
      if (!a.is_string()) return bad("'args' must be an array of strings");
      std::string raw(a.as_string());
      std::string ex = m.expand(raw);
      if (raw.rfind("${PLUGIN_ROOT}", 0) == 0) {
        fs::path p = fs::path(ex).lexically_normal();
        if (!path_within(m.dir, p)) bad("argument '" + raw + "' resolves outside the plugin folder");
        else if (!fs::exists(p)) bad("argument '" + raw + "' names a file that does not exist in the plugin");
      }
      c.args.push_back(ex);
    }
  }

  void read_env(const json::value& env) {
    if (!env.is_object()) return bad("'env' must be an object of names to strings");
    for (const auto& e : env.as_object()) {
      if (e.key() == "PLUGIN_ROOT" || e.key() == "PLUGIN_DATA")
        bad("'env' must not set " + std::string(e.key()) + " (the client sets it)");
      else if (!e.value().is_string()) bad("'env." + std::string(e.key()) + "' must be a string");
      else c.env[std::string(e.key())] = m.expand(std::string(e.value().as_string()));
    }
  }

  // ./relative, ${PLUGIN_ROOT}[/...] or ${PLUGIN_DATA}[/...], staying inside that folder.
  void read_cwd(const json::value& cwd) {
    std::string raw = cwd.is_string() ? std::string(cwd.as_string()) : "";
    bool form_ok = raw == "${PLUGIN_ROOT}" || raw == "${PLUGIN_DATA}" || raw.rfind("./", 0) == 0 ||
                   raw.rfind("${PLUGIN_ROOT}/", 0) == 0 || raw.rfind("${PLUGIN_DATA}/", 0) == 0;
    if (!form_ok) return bad("'cwd' must be ./relative, ${PLUGIN_ROOT}[/...] or ${PLUGIN_DATA}[/...], not '" + raw + "'");
    fs::path p = raw.rfind("./", 0) == 0 ? m.dir / raw : fs::path(m.expand(raw));
    p = p.lexically_normal();
    bool in_data = raw.rfind("${PLUGIN_DATA}", 0) == 0;
    if (!path_within(in_data ? m.data : m.dir, p) && p != (in_data ? m.data : m.dir).lexically_normal())
      bad("'cwd' '" + raw + "' resolves outside the " + (in_data ? "plugin data folder" : "plugin folder"));
    else c.cwd = p;
  }

  // streamable-http or sse: a checked URL and static headers that carry no credential.
  void read_remote(const json::object& s, const std::string& t) {
    for (const auto& f : s)
      if (f.key() != "type" && f.key() != "url" && f.key() != "headers")
        bad("unknown field '" + std::string(f.key()) + "' for a " + t + " server (allowed: type, url, headers)");
    auto* url = s.if_contains("url");
    if (!url || !url->is_string()) bad("'url' is required and must be a string");
    else if (auto e = check_ap_url(std::string(url->as_string()))) bad(*e);
    else c.url = std::string(url->as_string());
    if (auto* headers = s.if_contains("headers")) read_headers(*headers);
    c.transport = t == "sse" ? McpServerConfig::Transport::Sse : McpServerConfig::Transport::Http;
  }

  void read_headers(const json::value& headers) {
    if (!headers.is_object()) return bad("'headers' must be an object of names to strings");
    std::set<std::string> lower;
    for (const auto& h : headers.as_object()) {
      std::string name(h.key());
      std::string l = name;
      std::transform(l.begin(), l.end(), l.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (!lower.insert(l).second) bad("header '" + name + "' is given twice (header names ignore case)");
      if (credential_header(name))
        bad("header '" + name +
            "' looks like a credential: static headers in mcp.json must not carry secrets (use a stdio proxy "
            "that reads them at run time)");
      if (!h.value().is_string()) bad("header '" + name + "' must be a string");
      else c.headers[name] = std::string(h.value().as_string());  // no expansion in headers
    }
  }
};

// mcp.json's root: `$schema` (matching plugin.json's version) and `mcpServers`, nothing else.
// Null, with the problem reported, when the plugin's MCP servers are disabled.
const json::object* ap_mcp_servers(const json::value& v, const std::string& text, const std::string& plugin_schema_version,
                                   const std::function<void(int, const std::string&)>& err) {
  auto disabled = [&](int line, const std::string& msg) -> const json::object* {
    err(line, msg + "; MCP servers disabled for this plugin");
    return nullptr;
  };
  if (!v.is_object()) return disabled(1, "mcp.json must be a JSON object");
  const auto& o = v.as_object();
  auto* schema = o.if_contains("$schema");
  if (!schema || !schema->is_string() || std::string(schema->as_string()) != kAgentPluginsMcpSchema)
    return disabled(schema ? json_key_line(text, "$schema") : 1,
                    std::string("'$schema' must be ") + kAgentPluginsMcpSchema + " (Agent Plugins 1.0)");
  if (plugin_schema_version != "1.0.0")
    return disabled(json_key_line(text, "$schema"), "the mcp.json schema version 1.0.0 does not match plugin.json's");
  bool root_ok = true;
  for (const auto& kv : o)
    if (kv.key() != "$schema" && kv.key() != "mcpServers") {
      disabled(json_key_line(text, kv.key()),
               "unknown field '" + std::string(kv.key()) + "' in mcp.json (allowed: $schema, mcpServers)");
      root_ok = false;
    }
  if (!root_ok) return nullptr;
  auto* servers = o.if_contains("mcpServers");
  if (!servers || !servers->is_object())
    return disabled(servers ? json_key_line(text, "mcpServers") : 1,
                    "'mcpServers' must be an object of server id to server");
  return &servers->as_object();
}

void load_ap_mcp(LoadedPlugin& lp, const fs::path& dir, const std::string& plugin_schema_version,
                 const Engine::Options& options, Diagnostics& diags) {
  fs::path file = dir / "mcp.json";
  if (!fs::exists(fs::symlink_status(file))) return;
  auto err = [&](int line, const std::string& msg) { diags.push_back({Severity::Error, file.string(), line, msg}); };
  if (!path_within(dir, file) || !is_file(file)) return err(0, "mcp.json must be a file inside the plugin folder; MCP servers disabled for this plugin");
  auto text = support::read_file(file);
  if (!text) return err(0, "cannot be read; MCP servers disabled for this plugin");
  Diagnostics local;
  auto v = parse_json(*text, file, Severity::Error, local);
  if (!v) {
    for (auto& d : local) d.message += "; MCP servers disabled for this plugin";
    diags.insert(diags.end(), local.begin(), local.end());
    return;
  }
  const json::object* servers = ap_mcp_servers(*v, *text, plugin_schema_version, err);
  if (!servers) return;
  const ApMcpFile m{dir, options.plugin_data_root / lp.info.name, file, std::move(*text), lp.info.name};
  for (const auto& kv : *servers) {
    ApServerReader r{m, diags, {}, {}, true};
    r.read(std::string(kv.key()), kv.value());
    if (r.ok) lp.mcp_servers.push_back(std::move(r.c));
  }
}

// plugin.json's fields. Every problem is reported and fails the plugin (`lp.fatal`).
struct ApManifestChecker : JsonManifestCheck {
  void check() {
    check_known_fields();
    check_schema();
    check_name();
    lp.info.version = opt_string("version");
    if (o.contains("version") && o.at("version").is_string() && !std::regex_match(lp.info.version, semver_re()))
      fail(line("version"), "version '" + lp.info.version + "' is not a semantic version (like 1.2.0)");
    lp.info.description = opt_string("description");
    opt_string("license");
    opt_string("homepage");
    if (auto* repo = o.if_contains("repository"); repo && !repo->is_string() && !repo->is_object())
      fail(line("repository"), "'repository' must be a string or an object");
    if (auto* author = o.if_contains("author")) check_author(*author);
    if (auto* kw = o.if_contains("keywords")) check_keywords(*kw);
    if (auto* ext = o.if_contains("extensions")) check_extensions(*ext);
  }

  void check_known_fields() {
    static const std::vector<std::string> kRoot = {"$schema",  "name",       "version", "description", "author",
                                                   "homepage", "repository", "license", "keywords",    "extensions"};
    for (const auto& kv : o)
      if (std::find(kRoot.begin(), kRoot.end(), std::string(kv.key())) == kRoot.end())
        fail(line(kv.key()), "unknown field '" + std::string(kv.key()) +
                                 "' in plugin.json (allowed: $schema, name, version, description, author, homepage, "
                                 "repository, license, keywords, extensions)");
  }

  void check_schema() {
    auto* schema = o.if_contains("$schema");
    if (!schema) fail(1, std::string("'$schema' is required: ") + kAgentPluginsSchema);
    else if (!schema->is_string() || std::string(schema->as_string()) != kAgentPluginsSchema)
      fail(line("$schema"), std::string("'$schema' must be ") + kAgentPluginsSchema +
                                " (Agent Plugins 1.0; other versions are not supported)");
  }

  void check_name() {
    auto* name = o.if_contains("name");
    if (!name || !name->is_string()) return fail(name ? line("name") : 1, "'name' is required and must be a string");
    std::string n(name->as_string());
    if (!is_agent_plugins_name(n))
      fail(line("name"), "name '" + n +
                             "' is invalid: 1-64 lowercase letters, digits, '-' and '.', starting and ending with a "
                             "letter or digit, without '--', '..', '-.' or '.-'");
    else if (n == "skill")
      fail(line("name"), "'skill' is a reserved plugin name");
    lp.info.name = n;
  }

  std::string opt_string(const char* key) {
    auto* f = o.if_contains(key);
    if (!f) return {};
    if (!f->is_string()) {
      fail(line(key), std::string("'") + key + "' must be a string, not " + json_type_name(*f));
      return {};
    }
    return std::string(f->as_string());
  }

  void check_author(const json::value& author) {
    if (!author.is_object()) return fail(line("author"), "'author' must be an object with name, email and url");
    for (const auto& kv : author.as_object()) {
      if (kv.key() != "name" && kv.key() != "email" && kv.key() != "url")
        fail(line(kv.key()), "unknown field '" + std::string(kv.key()) + "' in 'author' (allowed: name, email, url)");
      else if (!kv.value().is_string())
        fail(line(kv.key()), "'author." + std::string(kv.key()) + "' must be a string");
    }
    if (!author.as_object().contains("name")) fail(line("author"), "'author.name' is required");
  }

  void check_keywords(const json::value& kw) {
    bool ok = kw.is_array();
    if (ok)
      for (const auto& k : kw.as_array()) ok = ok && k.is_string();
    if (!ok) fail(line("keywords"), "'keywords' must be an array of strings");
  }

  void check_extensions(const json::value& ext) {
    if (!ext.is_object())
      return fail(line("extensions"), "'extensions' must be an object of reverse-domain namespaces to objects");
    for (const auto& kv : ext.as_object())
      if (!kv.value().is_object()) fail(line(kv.key()), "'extensions." + std::string(kv.key()) + "' must be an object");
  }
};

// Relative Markdown links of a plugin skill must point at files that exist in the skill folder.
void check_skill_links(const fs::path& skill_dir, const fs::path& md, Diagnostics& diags) {
  auto body = support::read_file(md);
  if (!body) return;
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  for (std::sregex_iterator it(body->begin(), body->end(), link), end; it != end; ++it) {
    std::string target = (*it)[1].str();
    if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 || target[0] == '#' ||
        target.rfind("mailto:", 0) == 0)
      continue;
    target = target.substr(0, target.find('#'));
    fs::path p = (skill_dir / target).lexically_normal();
    if (!path_within(skill_dir, p) || !fs::exists(p))
      diags.push_back({Severity::Warning, md.string(), line_at_offset(*body, static_cast<std::size_t>(it->position())),
                       "link '" + target + "' does not point at a file inside the skill folder"});
  }
}

// One folder of skills/ that holds a SKILL.md: inside the plugin, named like its folder.
void load_ap_skill(LoadedPlugin& lp, const fs::path& dir, const fs::path& c, Diagnostics& diags) {
  fs::path md = c / "SKILL.md";
  if (!is_file(md)) return;
  if (!path_within(dir, md)) {
    diags.push_back({Severity::Warning, md.string(), 0, "resolves outside the plugin folder (skill skipped)"});
    return;
  }
  auto skill = load_skill(c, SkillSource::Plugin, lp.info.name, Severity::Warning, diags);
  if (!skill) return;
  std::string bare = skill->name.substr(lp.info.name.size() + 1);
  if (bare != c.filename().string()) {
    diags.push_back({Severity::Warning, md.string(), 0,
                     "name '" + bare + "' must match the skill's folder name '" + c.filename().string() +
                         "' (skill skipped)"});
    return;
  }
  check_skill_links(c, md, diags);
  lp.skills.push_back(std::move(*skill));
}

// skills/: immediate children only, each with a regular SKILL.md inside the plugin.
void load_ap_skills(LoadedPlugin& lp, const fs::path& dir, Diagnostics& diags) {
  fs::path skills = dir / "skills";
  if (!fs::exists(fs::symlink_status(skills))) return;
  if (!is_dir(skills) || !path_within(dir, skills)) {
    diags.push_back({Severity::Warning, skills.string(), 0,
                     "skills must be a folder inside the plugin; this plugin's skills are not loaded"});
    return;
  }
  std::vector<fs::path> children;
  std::error_code ec;
  for (fs::directory_iterator it(skills, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2) && it->path().filename().string()[0] != '.') children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  for (const auto& c : children) load_ap_skill(lp, dir, c, diags);
}

}  // namespace

void load_agent_plugins(LoadedPlugin& lp, const fs::path& dir, const fs::path& manifest,
                        const Engine::Options& options, Diagnostics& diags) {
  if (!path_within(dir, manifest)) {
    diags.push_back({Severity::Error, manifest.string(), 0, "plugin.json resolves outside the plugin folder"});
    lp.fatal = true;
    return;
  }
  auto m = read_json_manifest(lp, manifest, "plugin.json must be a JSON object", diags);
  if (!m) return;
  ApManifestChecker{{lp, manifest, m->text, m->object, diags}}.check();
  if (lp.fatal) return;
  if (options.skills) load_ap_skills(lp, dir, diags);
  load_ap_mcp(lp, dir, "1.0.0", options, diags);
}

}  // namespace runtime::engine::detail
