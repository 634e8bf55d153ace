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

}  // namespace

int run_login(const std::vector<std::string>& args) {
  LoginOptions opt;
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

  const bool interactive = ::isatty(STDIN_FILENO) == 1;
  const fs::path root_dir = runtime::config::config_root();
  const fs::path config_file = root_dir / "config.yaml";

  // What config.yaml already says (refuse to touch a broken one).
  std::string config_text;
  YAML::Node loaded_config;
  const YAML::Node& config = loaded_config;  // const: lookups never add keys
  std::error_code ec;
  const bool config_exists = fs::exists(config_file, ec);
  if (config_exists) {
    config_text = support::read_file(config_file).value_or("");
    try {
      loaded_config = YAML::Load(config_text);
    } catch (const YAML::ParserException& e) {
      return fail(config_file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg +
                  " (fix it first)");
    } catch (const YAML::Exception& e) {
      return fail(config_file.string() + ": invalid YAML: " + e.msg + " (fix it first)");
    }
    if (!config.IsNull() && !config.IsMap()) return fail(config_file.string() + ": must be a mapping of keys to values (fix it first)");
  }
  std::optional<std::string> config_model;
  if (config.IsMap() && config["model"] && config["model"].IsScalar() && !config["model"].Scalar().empty())
    config_model = config["model"].Scalar();
  auto configured_provider = [&](const std::string& id) -> YAML::Node {
    if (!config.IsMap() || !config["providers"] || !config["providers"].IsMap()) return YAML::Node();
    auto p = config["providers"][id];
    return p && p.IsMap() ? p : YAML::Node();
  };

  // The provider.
  std::string id = opt.provider.value_or("");
  if (id.empty() && !opt.api_type && config_model) {
    auto model_provider = config_model->substr(0, config_model->find('/'));
    if (valid_provider_id(model_provider)) id = model_provider;
  }
  std::string api_type, base_url;
  YAML::Node existing = id.empty() ? YAML::Node() : configured_provider(id);
  const bool provider_defined = existing.IsMap();
  if (provider_defined) {
    api_type = existing["api_type"] && existing["api_type"].IsScalar() ? existing["api_type"].Scalar() : "";
    base_url = existing["base_url"] && existing["base_url"].IsScalar() ? existing["base_url"].Scalar()
                                                                       : official_base_url(api_type);
    if ((opt.api_type && *opt.api_type != api_type) || (opt.base_url && *opt.base_url != base_url))
      std::fprintf(stderr,
                   "openvaala login: config.yaml already defines provider '%s' (api_type %s, base_url %s); "
                   "leaving it unchanged\n",
                   id.c_str(), api_type.c_str(), base_url.c_str());
  } else {
    std::string type_default = opt.api_type.value_or(id == "anthropic" ? "anthropic" : "openai");
    if (opt.api_type || !interactive) {
      api_type = type_default;
    } else {
      for (;;) {
        auto v = ask("Provider API type (openai or anthropic)", type_default);
        if (!v) return fail("cancelled");
        if (*v == "openai" || *v == "anthropic") {
          api_type = *v;
          break;
        }
        std::fprintf(stderr, "Please answer 'openai' or 'anthropic'.\n");
      }
    }
    if (id.empty()) id = api_type;
    if (opt.base_url || !interactive) {
      base_url = opt.base_url.value_or(official_base_url(api_type));
    } else {
      for (;;) {
        auto v = ask("Base URL", official_base_url(api_type));
        if (!v) return fail("cancelled");
        if (v->rfind("http://", 0) == 0 || v->rfind("https://", 0) == 0) {
          base_url = *v;
          break;
        }
        std::fprintf(stderr, "The base URL must start with http:// or https://.\n");
      }
    }
    if (base_url.rfind("http://", 0) != 0 && base_url.rfind("https://", 0) != 0)
      return usage("--base-url must start with http:// or https://, not '" + base_url + "'");
    while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  }

  // The model (only written when config.yaml has none).
  ConfigChange change;
  const bool has_model_key = config_model.has_value();
  if (!has_model_key) {
    std::string name = opt.model.value_or("");
    if (name.empty() && interactive) {
      for (;;) {
        auto v = ask(std::string("Model name (e.g. ") + (api_type == "anthropic" ? "claude-sonnet-4-5" : "gpt-4.1") + ")", "");
        if (!v) return fail("cancelled");
        if (!v->empty() && !has_control_chars(*v)) {
          name = *v;
          break;
        }
      }
    }
    if (has_control_chars(name)) return usage("--model must not contain control characters");
    if (!name.empty()) change.model = id + "/" + name;
  } else if (opt.model && config_model && *config_model != id + "/" + *opt.model) {
    std::fprintf(stderr, "openvaala login: config.yaml already sets model %s; leaving it unchanged\n",
                 config_model->c_str());
  }
  const bool builtin_default = (id == "openai" || id == "anthropic") && api_type == id &&
                               base_url == official_base_url(api_type);
  if (!provider_defined && !builtin_default) {
    YAML::Node entry(YAML::NodeType::Map);
    entry["api_type"] = api_type;
    entry["base_url"] = base_url;
    change.provider.emplace(id, entry);
  }

  // The key.
  std::string key;
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

  // Work out config.yaml before writing anything, so a problem leaves both files untouched.
  runtime::config::EditedConfig new_config;
  if (!change.empty()) {
    try {
      new_config = runtime::config::edit_config_text(config_text, change.settings());
    } catch (const std::exception& e) {
      return fail(config_file.string() + ": " + e.what());
    }
  }

  try {
    runtime::config::store_api_key(root_dir, id, key);
    if (!change.empty()) runtime::config::write_config_file(config_file, new_config.text);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  if (new_config.comments_lost)
    std::fprintf(stderr, "openvaala login: note: %s was rewritten; its comments were not kept\n",
                 config_file.string().c_str());

  std::string line = "Logged in: stored the API key for provider '" + id + "' in " +
                     runtime::config::credentials_file(root_dir).string();
  if (change.model) line += "; config.yaml now uses model " + *change.model;
  else if (!has_model_key) line += " (no model is set: add 'model: " + id + "/<model name>' to config.yaml)";
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
  if (!change.model && !has_model_key)
    std::fprintf(stderr, "openvaala login: pass --model NAME to set the model too\n");
  return 0;
}

}  // namespace app
