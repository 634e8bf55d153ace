// `openvaala login`: stores a model provider API key in <config root>/credentials.yaml (0600)
// and, when config.yaml has no model yet, points config.yaml at that provider. ACP clients run
// it as the `openvaala-login` terminal auth method (exit 0 = logged in).
//
// Interactive when stdin is a terminal (asks for what the flags did not give; the key with echo
// off); otherwise the key is the first line of stdin and everything else comes from the flags.
// The key is never printed or logged.
#include <termios.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "runtime/config/config_edit.hpp"
#include "runtime/config/credentials.hpp"
#include "support/file_io.hpp"
#include "support/text.hpp"
#include "runtime/config/paths.hpp"

namespace app {

namespace {

namespace fs = std::filesystem;

const char* kLoginUsage =
    "Usage: openvaala login [--provider ID] [--api-type openai|anthropic] [--base-url URL] [--model NAME]\n"
    "\n"
    "Stores a model provider API key in <config root>/credentials.yaml (mode 0600). When config.yaml\n"
    "sets no model yet, also writes `model: <ID>/<NAME>` and the provider (api_type, base_url) there.\n"
    "\n"
    "On a terminal it asks for what the options did not give, and for the key with echo off.\n"
    "Otherwise the key is read from the first line of stdin, e.g. `openvaala login --model gpt-4.1 < key.txt`.\n"
    "\n"
    "Defaults: the provider of config.yaml's model if it has one, else ID = the API type (openai);\n"
    "the official base URL of the API type. A key in the provider's api_key_env variable still wins.\n";

struct LoginOptions {
  std::optional<std::string> provider, api_type, base_url, model;
};

std::string official_base_url(const std::string& api_type) {
  return api_type == "anthropic" ? "https://api.anthropic.com" : "https://api.openai.com/v1";
}

bool valid_provider_id(const std::string& id) {
  if (id.empty()) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

bool has_control_chars(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// ---- terminal input ----------------------------------------------------------------------

struct termios g_saved_termios;
volatile std::sig_atomic_t g_echo_off = 0;

void restore_echo_and_die(int sig) {
  if (g_echo_off) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved_termios);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Reads one line from stdin; nullopt on EOF.
std::optional<std::string> read_line() {
  std::string line;
  if (!std::getline(std::cin, line)) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::optional<std::string> ask(const std::string& question, const std::string& def) {
  std::fprintf(stderr, "%s%s: ", question.c_str(), def.empty() ? "" : (" [" + def + "]").c_str());
  std::fflush(stderr);
  auto line = read_line();
  if (!line) return std::nullopt;
  auto v = support::trim(*line);
  return v.empty() ? def : v;
}

std::optional<std::string> ask_secret(const std::string& question) {
  bool echo_off = false;
  if (::tcgetattr(STDIN_FILENO, &g_saved_termios) == 0) {
    struct termios t = g_saved_termios;
    t.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    t.c_lflag |= ECHONL;
    std::signal(SIGINT, restore_echo_and_die);
    std::signal(SIGTERM, restore_echo_and_die);
    std::signal(SIGHUP, restore_echo_and_die);
    g_echo_off = 1;
    echo_off = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0;
    if (!echo_off) g_echo_off = 0;
  }
  // The prompt comes after echo is off, so nothing typed in answer to it is ever echoed.
  std::fprintf(stderr, "%s: ", question.c_str());
  std::fflush(stderr);
  auto line = read_line();
  if (echo_off) {
    ::tcsetattr(STDIN_FILENO, TCSADRAIN, &g_saved_termios);
    g_echo_off = 0;
  } else {
    std::fputc('\n', stderr);
  }
  return line;
}

// ---- config.yaml -------------------------------------------------------------------------

struct ConfigChange {
  std::optional<std::string> model;  // "<id>/<name>" to set
  std::optional<std::pair<std::string, YAML::Node>> provider;  // id, {api_type, base_url} to add
  bool empty() const { return !model && !provider; }
  std::vector<runtime::config::ConfigSetting> settings() const {
    std::vector<runtime::config::ConfigSetting> out;
    if (model) out.push_back({{"model"}, YAML::Node(*model)});
    if (provider) out.push_back({{"providers", provider->first}, provider->second});
    return out;
  }
};

int fail(const std::string& message) {
  std::fprintf(stderr, "openvaala login: %s\n", message.c_str());
  return 1;
}

int usage(const std::string& message) {
  std::fprintf(stderr, "openvaala login: %s\n\n%s", message.c_str(), kLoginUsage);
  return 2;
}

// Each step below returns the exit status when the login stops there, nullopt to go on.
using Stop = std::optional<int>;

Stop parse_login_args(const std::vector<std::string>& args, LoginOptions& opt) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kLoginUsage, stdout);
      return 0;
    }
    std::string name = a, value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    std::optional<std::string>* slot = name == "--provider"   ? &opt.provider
                                       : name == "--api-type" ? &opt.api_type
                                       : name == "--base-url" ? &opt.base_url
                                       : name == "--model"    ? &opt.model
                                                              : nullptr;
    if (!slot) return usage("unknown option: " + a);
    if (!has_value) {
      if (i + 1 >= args.size()) return usage(name + " needs a value");
      value = args[++i];
    }
    *slot = support::trim(value);
  }
  if (opt.api_type && *opt.api_type != "openai" && *opt.api_type != "anthropic")
    return usage("--api-type must be 'openai' or 'anthropic', not '" + *opt.api_type + "'");
  if (opt.provider && !valid_provider_id(*opt.provider))
    return usage("--provider must be letters, digits, '_', '-' or '.', not '" + *opt.provider + "'");
  return std::nullopt;
}

// What config.yaml already says. Only const lookups, which never add keys.
struct ExistingConfig {
  fs::path file;
  std::string text;
  YAML::Node node;
  std::optional<std::string> model;

  YAML::Node provider(const std::string& id) const {
    const YAML::Node& config = node;
    if (!config.IsMap() || !config["providers"] || !config["providers"].IsMap()) return YAML::Node();
    auto p = config["providers"][id];
    return p && p.IsMap() ? p : YAML::Node();
  }
};

// Reads config.yaml (refusing to touch a broken one).
Stop read_existing_config(ExistingConfig& existing) {
  std::error_code ec;
  if (fs::exists(existing.file, ec)) {
    existing.text = support::read_file(existing.file).value_or("");
    try {
      existing.node = YAML::Load(existing.text);
    } catch (const YAML::ParserException& e) {
      return fail(existing.file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg +
                  " (fix it first)");
    } catch (const YAML::Exception& e) {
      return fail(existing.file.string() + ": invalid YAML: " + e.msg + " (fix it first)");
    }
    if (!existing.node.IsNull() && !existing.node.IsMap())
      return fail(existing.file.string() + ": must be a mapping of keys to values (fix it first)");
  }
  const YAML::Node& config = existing.node;
  if (config.IsMap() && config["model"] && config["model"].IsScalar() && !config["model"].Scalar().empty())
    existing.model = config["model"].Scalar();
  return std::nullopt;
}

// The provider the key is for; `defined` when config.yaml has it already.
struct Provider {
  std::string id, api_type, base_url;
  bool defined = false;
};

// Asks until the answer passes `valid` (saying `hint` after each other answer); nullopt on EOF.
template <typename Valid>
std::optional<std::string> ask_until(const std::string& question, const std::string& def, Valid valid,
                                     const char* hint) {
  for (;;) {
    auto v = ask(question, def);
    if (!v || valid(*v)) return v;
    if (hint) std::fprintf(stderr, "%s\n", hint);
  }
}

bool http_url(const std::string& s) { return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0; }

// A provider config.yaml does not define: its API type and base URL from the flags, or asked.
Stop choose_new_provider(const LoginOptions& opt, bool interactive, Provider& p) {
  std::string type_default = opt.api_type.value_or(p.id == "anthropic" ? "anthropic" : "openai");
  if (opt.api_type || !interactive) {
    p.api_type = type_default;
  } else {
    auto v = ask_until("Provider API type (openai or anthropic)", type_default,
                       [](const std::string& t) { return t == "openai" || t == "anthropic"; },
                       "Please answer 'openai' or 'anthropic'.");
    if (!v) return fail("cancelled");
    p.api_type = *v;
  }
  if (p.id.empty()) p.id = p.api_type;
  if (opt.base_url || !interactive) {
    p.base_url = opt.base_url.value_or(official_base_url(p.api_type));
  } else {
    auto v = ask_until("Base URL", official_base_url(p.api_type), http_url,
                       "The base URL must start with http:// or https://.");
    if (!v) return fail("cancelled");
    p.base_url = *v;
  }
  if (!http_url(p.base_url))
    return usage("--base-url must start with http:// or https://, not '" + p.base_url + "'");
  while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
  return std::nullopt;
}

// --provider, else the provider of config.yaml's model, else the API type.
Stop choose_provider(const LoginOptions& opt, const ExistingConfig& config, bool interactive, Provider& p) {
  p.id = opt.provider.value_or("");
  if (p.id.empty() && !opt.api_type && config.model) {
    auto model_provider = config.model->substr(0, config.model->find('/'));
    if (valid_provider_id(model_provider)) p.id = model_provider;
  }
  YAML::Node existing = p.id.empty() ? YAML::Node() : config.provider(p.id);
  p.defined = existing.IsMap();
  if (!p.defined) return choose_new_provider(opt, interactive, p);
  p.api_type = existing["api_type"] && existing["api_type"].IsScalar() ? existing["api_type"].Scalar() : "";
  p.base_url = existing["base_url"] && existing["base_url"].IsScalar() ? existing["base_url"].Scalar()
                                                                       : official_base_url(p.api_type);
  if ((opt.api_type && *opt.api_type != p.api_type) || (opt.base_url && *opt.base_url != p.base_url))
    std::fprintf(stderr,
                 "openvaala login: config.yaml already defines provider '%s' (api_type %s, base_url %s); "
                 "leaving it unchanged\n",
                 p.id.c_str(), p.api_type.c_str(), p.base_url.c_str());
  return std::nullopt;
}

// What config.yaml gains: the model (only when it has none) and the provider (unless it is
// defined there or is a built-in default).
Stop plan_config_change(const LoginOptions& opt, const ExistingConfig& config, const Provider& p, bool interactive,
                        ConfigChange& change) {
  if (!config.model) {
    std::string name = opt.model.value_or("");
    if (name.empty() && interactive) {
      auto v = ask_until(std::string("Model name (e.g. ") + (p.api_type == "anthropic" ? "claude-sonnet-4-5" : "gpt-4.1") + ")",
                         "", [](const std::string& m) { return !m.empty() && !has_control_chars(m); }, nullptr);
      if (!v) return fail("cancelled");
      name = *v;
    }
    if (has_control_chars(name)) return usage("--model must not contain control characters");
    if (!name.empty()) change.model = p.id + "/" + name;
  } else if (opt.model && *config.model != p.id + "/" + *opt.model) {
    std::fprintf(stderr, "openvaala login: config.yaml already sets model %s; leaving it unchanged\n",
                 config.model->c_str());
  }
  const bool builtin_default = (p.id == "openai" || p.id == "anthropic") && p.api_type == p.id &&
                               p.base_url == official_base_url(p.api_type);
  if (!p.defined && !builtin_default) {
    YAML::Node entry(YAML::NodeType::Map);
    entry["api_type"] = p.api_type;
    entry["base_url"] = p.base_url;
    change.provider.emplace(p.id, entry);
  }
  return std::nullopt;
}

// The key: asked with echo off on a terminal, else the first line of stdin.
Stop read_key(bool interactive, const std::string& id, std::string& key) {
  if (interactive) {
    auto line = ask_secret("API key for provider '" + id + "' (input hidden)");
    if (!line) return fail("cancelled");
    key = support::trim(*line);
  } else {
    auto line = read_line();
    key = line ? support::trim(*line) : "";
  }
  if (key.empty())
    return fail(interactive ? "no API key given"
                            : "no API key on stdin (give it as the first line, e.g. `openvaala login ... < key.txt`)");
  if (has_control_chars(key)) return fail("the API key contains control characters");
  return std::nullopt;
}

// Writes credentials.yaml and config.yaml and says what was done. config.yaml is worked out
// before anything is written, so a problem leaves both files untouched.
int store_login(const fs::path& root_dir, const ExistingConfig& config, const std::string& id, const std::string& key,
                const ConfigChange& change) {
  runtime::config::EditedConfig new_config;
  if (!change.empty()) {
    try {
      new_config = runtime::config::edit_config_text(config.text, change.settings());
    } catch (const std::exception& e) {
      return fail(config.file.string() + ": " + e.what());
    }
  }
  try {
    runtime::config::store_api_key(root_dir, id, key);
    if (!change.empty()) runtime::config::write_config_file(config.file, new_config.text);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  if (new_config.comments_lost)
    std::fprintf(stderr, "openvaala login: note: %s was rewritten; its comments were not kept\n",
                 config.file.string().c_str());

  std::string line = "Logged in: stored the API key for provider '" + id + "' in " +
                     runtime::config::credentials_file(root_dir).string();
  if (change.model) line += "; config.yaml now uses model " + *change.model;
  else if (!config.model) line += " (no model is set: add 'model: " + id + "/<model name>' to config.yaml)";
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
  if (!change.model && !config.model)
    std::fprintf(stderr, "openvaala login: pass --model NAME to set the model too\n");
  return 0;
}

}  // namespace

int run_login(const std::vector<std::string>& args) {
  LoginOptions opt;
  if (Stop stop = parse_login_args(args, opt)) return *stop;
  const bool interactive = ::isatty(STDIN_FILENO) == 1;
  const fs::path root_dir = runtime::config::config_root();
  ExistingConfig config;
  config.file = root_dir / "config.yaml";
  if (Stop stop = read_existing_config(config)) return *stop;
  Provider provider;
  if (Stop stop = choose_provider(opt, config, interactive, provider)) return *stop;
  ConfigChange change;
  if (Stop stop = plan_config_change(opt, config, provider, interactive, change)) return *stop;
  std::string key;
  if (Stop stop = read_key(interactive, provider.id, key)) return *stop;
  return store_login(root_dir, config, provider.id, key, change);
}

}  // namespace app
