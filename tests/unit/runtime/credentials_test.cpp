// credentials.yaml (`openvaala login`): file mode, diagnostics with file:line, and the key
// lookup order of resolve_model ($api_key_env > credentials.yaml).
#include "runtime/config/credentials.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "runtime/providers/model_provider.hpp"

namespace {

namespace fs = std::filesystem;
using runtime::config::Diagnostic;
using runtime::config::Diagnostics;
using runtime::providers::ModelError;
using runtime::providers::resolve_model;

class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    path_ = fs::temp_directory_path() / ("ov-credentials-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Sets (or unsets, with nullopt) an environment variable for the scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

void write(const fs::path& p, const std::string& text, mode_t mode = 0600) {
  std::ofstream(p) << text;
  ::chmod(p.c_str(), mode);
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string all(const Diagnostics& d) {
  std::string s;
  for (const auto& x : d) s += x.to_string() + "\n";
  return s;
}

TEST(Credentials, StoreCreatesA0600FileAndKeepsOtherProviders) {
  TempDir dir("store");
  auto root = dir.path() / "config";  // does not exist yet
  runtime::config::store_api_key(root, "main", "sk-one");
  runtime::config::store_api_key(root, "other", "sk-two");
  runtime::config::store_api_key(root, "main", "sk-three");
  auto file = runtime::config::credentials_file(root);
  EXPECT_EQ(mode_of(file), 0600u);
  Diagnostics d;
  auto creds = runtime::config::load_credentials(root, d);
  EXPECT_TRUE(d.empty()) << all(d);
  EXPECT_EQ(creds.api_key("main"), "sk-three");
  EXPECT_EQ(creds.api_key("other"), "sk-two");
  EXPECT_FALSE(creds.api_key("nope"));
  // no temp files left behind
  int entries = 0;
  for (const auto& e : fs::directory_iterator(root)) entries += e.path().filename() != "credentials.yaml";
  EXPECT_EQ(entries, 0);
}

TEST(Credentials, StoreFixesTheModeOfAnExistingFile) {
  TempDir dir("fixmode");
  auto file = runtime::config::credentials_file(dir.path());
  write(file, "providers:\n  old:\n    api_key: sk-old\n", 0644);
  runtime::config::store_api_key(dir.path(), "new", "sk-new");
  EXPECT_EQ(mode_of(file), 0600u);
  Diagnostics d;
  auto creds = runtime::config::load_credentials(dir.path(), d);
  EXPECT_TRUE(d.empty()) << all(d);
  EXPECT_EQ(creds.api_key("old"), "sk-old");
  EXPECT_EQ(creds.api_key("new"), "sk-new");
}

TEST(Credentials, StoreRefusesToClobberABrokenFile) {
  TempDir dir("broken");
  auto file = runtime::config::credentials_file(dir.path());
  write(file, "providers:\n  a: [unclosed\n");
  try {
    runtime::config::store_api_key(dir.path(), "a", "sk-secret-value");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(file.string() + ":"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("sk-secret-value"), std::string::npos) << msg;
  }
  EXPECT_EQ(read(file), "providers:\n  a: [unclosed\n");
}

TEST(Credentials, MissingFileIsNotAnError) {
  TempDir dir("missing");
  Diagnostics d;
  auto creds = runtime::config::load_credentials(dir.path(), d);
  EXPECT_TRUE(d.empty());
  EXPECT_TRUE(creds.api_keys.empty());
}

TEST(Credentials, LooseModeIsAWarning) {
  TempDir dir("loose");
  auto file = runtime::config::credentials_file(dir.path());
  write(file, "providers:\n  a:\n    api_key: sk-a\n", 0644);
  Diagnostics d;
  auto creds = runtime::config::load_credentials(dir.path(), d);
  ASSERT_EQ(d.size(), 1u) << all(d);
  EXPECT_EQ(d[0].severity, Diagnostic::Severity::Warning);
  EXPECT_EQ(d[0].path, file.string());
  EXPECT_NE(d[0].message.find("0644"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("chmod 600"), std::string::npos) << d[0].message;
  EXPECT_EQ(creds.api_key("a"), "sk-a");  // still usable
}

TEST(Credentials, ErrorsNameFileAndLineAndNeverTheKey) {
  TempDir dir("errors");
  auto file = runtime::config::credentials_file(dir.path());
  write(file,
        "providers:\n"
        "  good:\n"
        "    api_key: sk-good\n"
        "  list:\n"
        "    api_key: [sk-in-a-list]\n"
        "  extra:\n"
        "    api_key: sk-extra-secret\n"
        "    apikey: sk-typo-secret\n"
        "  empty:\n"
        "    api_key: \"\"\n"
        "  scalar: sk-scalar-secret\n"
        "other: 1\n");
  Diagnostics d;
  auto creds = runtime::config::load_credentials(dir.path(), d);
  const std::string text = all(d);
  EXPECT_NE(text.find(file.string() + ":5: 'api_key' must be a string"), std::string::npos) << text;
  EXPECT_NE(text.find(file.string() + ":8: unknown key 'apikey'"), std::string::npos) << text;
  EXPECT_NE(text.find(file.string() + ":10: provider 'empty': 'api_key' is empty"), std::string::npos) << text;
  EXPECT_NE(text.find(file.string() + ":11: provider 'scalar' must be a mapping"), std::string::npos) << text;
  EXPECT_NE(text.find(file.string() + ":12: unknown key 'other'"), std::string::npos) << text;
  for (const char* secret : {"sk-good", "sk-in-a-list", "sk-extra-secret", "sk-typo-secret", "sk-scalar-secret"})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " leaked into: " << text;
  EXPECT_EQ(creds.api_key("good"), "sk-good");
  EXPECT_EQ(creds.api_key("extra"), "sk-extra-secret");  // an unknown sibling key does not drop the entry
  EXPECT_FALSE(creds.api_key("list"));
  EXPECT_FALSE(creds.api_key("empty"));
}

TEST(Credentials, InvalidYamlNamesTheLine) {
  TempDir dir("yaml");
  write(runtime::config::credentials_file(dir.path()), "providers:\n  a:\n    api_key: sk-x\n  b: [unclosed\n");
  Diagnostics d;
  runtime::config::load_credentials(dir.path(), d);
  ASSERT_FALSE(d.empty());
  EXPECT_TRUE(runtime::config::has_errors(d));
  EXPECT_EQ(d[0].path, runtime::config::credentials_file(dir.path()).string());
  EXPECT_GT(d[0].line, 0);
}

runtime::config::MainConfig config_with_provider(const fs::path& root, const std::string& api_type,
                                                 const std::string& base_url, const std::string& key_env) {
  runtime::config::MainConfig cfg;
  cfg.file = root / "config.yaml";
  cfg.model = "p/some-model";
  runtime::config::ProviderConfig p;
  p.id = "p";
  p.api_type = api_type;
  p.base_url = base_url;
  p.api_key_env = key_env;
  cfg.providers["p"] = p;
  return cfg;
}

TEST(CredentialsLookup, EnvironmentWinsThenCredentialsFile) {
  TempDir dir("order");
  runtime::config::store_api_key(dir.path(), "p", "sk-stored");
  auto cfg = config_with_provider(dir.path(), "anthropic", "https://api.anthropic.com", "OV_CREDENTIALS_TEST_KEY");
  {
    ScopedEnv e("OV_CREDENTIALS_TEST_KEY", std::nullopt);
    auto r = resolve_model(cfg);
    EXPECT_EQ(r.api_key, "sk-stored");
    EXPECT_EQ(r.api_key_source, runtime::config::credentials_file(dir.path()).string());
  }
  {
    ScopedEnv e("OV_CREDENTIALS_TEST_KEY", std::string(""));  // set but empty = unset
    EXPECT_EQ(resolve_model(cfg).api_key, "sk-stored");
  }
  {
    ScopedEnv e("OV_CREDENTIALS_TEST_KEY", std::string("sk-env"));
    auto r = resolve_model(cfg);
    EXPECT_EQ(r.api_key, "sk-env");
    EXPECT_EQ(r.api_key_source, "$OV_CREDENTIALS_TEST_KEY");
  }
}

TEST(CredentialsLookup, ProviderWithoutApiKeyEnvUsesCredentials) {
  TempDir dir("noenv");
  runtime::config::store_api_key(dir.path(), "p", "sk-stored");
  auto cfg = config_with_provider(dir.path(), "openai", "http://127.0.0.1:9/v1", "");
  EXPECT_EQ(resolve_model(cfg).api_key, "sk-stored");
}

TEST(CredentialsLookup, BuiltInProvidersUseCredentials) {
  TempDir dir("builtin");
  ScopedEnv k1("OPENAI_API_KEY", std::nullopt), k2("ANTHROPIC_API_KEY", std::nullopt);
  ScopedEnv b1("OPENAI_BASE_URL", std::nullopt), b2("ANTHROPIC_BASE_URL", std::nullopt);
  ScopedEnv m("OPENVAALA_MODEL", std::nullopt);
  runtime::config::store_api_key(dir.path(), "openai", "sk-openai-stored");
  runtime::config::store_api_key(dir.path(), "anthropic", "sk-anthropic-stored");
  runtime::config::MainConfig cfg;  // no config file: only the built-in providers
  cfg.file = dir.path() / "config.yaml";
  auto o = resolve_model(cfg, std::string("openai/gpt-4.1"));
  EXPECT_EQ(o.api_key, "sk-openai-stored");
  EXPECT_EQ(o.provider.base_url, "https://api.openai.com/v1");
  auto a = resolve_model(cfg, std::string("anthropic/claude"));
  EXPECT_EQ(a.api_key, "sk-anthropic-stored");
  {
    ScopedEnv e("OPENAI_API_KEY", std::string("sk-openai-env"));
    EXPECT_EQ(resolve_model(cfg, std::string("openai/gpt-4.1")).api_key, "sk-openai-env");
  }
}

TEST(CredentialsLookup, MissingKeyNamesTheVariableAndLogin) {
  TempDir dir("missingkey");
  ScopedEnv k("ANTHROPIC_API_KEY", std::nullopt), b("ANTHROPIC_BASE_URL", std::nullopt);
  runtime::config::MainConfig cfg;
  cfg.file = dir.path() / "config.yaml";
  try {
    resolve_model(cfg, std::string("anthropic/claude"));
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind(), ModelError::Kind::Auth);
    std::string msg = e.what();
    EXPECT_NE(msg.find("$ANTHROPIC_API_KEY"), std::string::npos) << msg;
    EXPECT_NE(msg.find("openvaala login --provider anthropic"), std::string::npos) << msg;
  }
}

TEST(CredentialsLookup, BrokenCredentialsFileIsAnErrorWithFileAndLine) {
  TempDir dir("brokenlookup");
  auto file = runtime::config::credentials_file(dir.path());
  write(file, "providers:\n  p:\n    api_key: [sk-listed]\n");
  ScopedEnv e("OV_CREDENTIALS_TEST_KEY", std::nullopt);
  auto cfg = config_with_provider(dir.path(), "anthropic", "https://api.anthropic.com", "OV_CREDENTIALS_TEST_KEY");
  try {
    resolve_model(cfg);
    FAIL() << "expected ModelError";
  } catch (const ModelError& err) {
    std::string msg = err.what();
    EXPECT_EQ(err.kind(), ModelError::Kind::Config);
    EXPECT_NE(msg.find(file.string() + ":3:"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("sk-listed"), std::string::npos) << msg;
  }
  // ...but the environment variable still works
  ScopedEnv e2("OV_CREDENTIALS_TEST_KEY", std::string("sk-env"));
  EXPECT_EQ(resolve_model(cfg).api_key, "sk-env");
}

}  // namespace
