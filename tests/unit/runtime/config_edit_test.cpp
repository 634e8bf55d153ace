// The one config.yaml editor: in-place edits that keep comments, the re-emitted fallback, and the
// writer that keeps a symlinked config.yaml a link.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "runtime/config/config_edit.hpp"
#include "support/file_io.hpp"

using runtime::config::ConfigSetting;
using runtime::config::edit_config_text;
namespace fs = std::filesystem;

namespace {

YAML::Node provider(const std::string& type, const std::string& url) {
  YAML::Node n(YAML::NodeType::Map);
  n["api_type"] = type;
  n["base_url"] = url;
  return n;
}

YAML::Node flow_list(std::vector<std::string> items) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (const auto& i : items) n.push_back(i);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

}  // namespace

TEST(ConfigEdit, AnEmptyFileGetsTheKeysInOrder) {
  auto e = edit_config_text("", {{{"model"}, YAML::Node("p/m")}, {{"providers", "p"}, provider("openai", "http://h/v1")}});
  EXPECT_FALSE(e.comments_lost);
  EXPECT_EQ(e.text, "model: p/m\nproviders:\n  p:\n    api_type: openai\n    base_url: http://h/v1\n");
  // Comments only: the file is kept and the keys follow.
  EXPECT_EQ(edit_config_text("# settings\n", {{{"model"}, YAML::Node("p/m")}}).text, "# settings\nmodel: p/m\n");
}

TEST(ConfigEdit, ANewEntryOfANestedMappingGoesBeforeItsFirstEntry) {
  const std::string text =
      "# my settings\n"
      "providers:\n"
      "  # the local one\n"
      "  main:\n"
      "    api_type: openai\n"
      "    base_url: http://127.0.0.1:9/v1\n"
      "max_turn_requests: 7 # keep\n";
  auto e = edit_config_text(text, {{{"model"}, YAML::Node("claude/sonnet")},
                                   {{"providers", "claude"}, provider("anthropic", "http://127.0.0.1:9")}});
  EXPECT_FALSE(e.comments_lost);
  EXPECT_EQ(e.text,
            "# my settings\n"
            "providers:\n"
            "  # the local one\n"
            "  claude:\n"
            "    api_type: anthropic\n"
            "    base_url: http://127.0.0.1:9\n"
            "  main:\n"
            "    api_type: openai\n"
            "    base_url: http://127.0.0.1:9/v1\n"
            "max_turn_requests: 7 # keep\n"
            "model: claude/sonnet\n");
}

TEST(ConfigEdit, AKeyThatIsThereHasItsValueReplaced) {
  // A block sequence (at the key's indent) becomes the new value; the comment after it stays.
  EXPECT_EQ(edit_config_text("plugins:\n  disabled:\n  - a\n  - b\n  # end\nmodel: x/y\n",
                             {{{"plugins", "disabled"}, flow_list({"b"})}})
                .text,
            "plugins:\n  disabled: [b]\n  # end\nmodel: x/y\n");
  EXPECT_EQ(edit_config_text("model: a/b # old\nx: 1\n", {{{"model"}, YAML::Node("c/d")}}).text, "model: c/d\nx: 1\n");
  // A scalar where a mapping is wanted is replaced by the mapping.
  EXPECT_EQ(edit_config_text("plugins: none\n", {{{"plugins", "disabled"}, flow_list({"a"})}}).text,
            "plugins:\n  disabled: [a]\n");
}

TEST(ConfigEdit, ALayoutItCannotEditIsReEmittedWithoutComments) {
  auto e = edit_config_text("{model: a/b, x: 1}  # flow\n", {{{"plugins", "disabled"}, flow_list({"p"})}});
  EXPECT_TRUE(e.comments_lost);
  auto doc = YAML::Load(e.text);
  EXPECT_EQ(doc["model"].as<std::string>(), "a/b");
  EXPECT_EQ(doc["x"].as<int>(), 1);
  EXPECT_EQ(doc["plugins"]["disabled"][0].as<std::string>(), "p");
}

TEST(ConfigEdit, NotAMappingIsRefusedAndBrokenYamlIsEditedUnchecked) {
  EXPECT_THROW(edit_config_text("- a\n- b\n", {{{"model"}, YAML::Node("m/n")}}), std::runtime_error);
  auto e = edit_config_text("model: [unclosed\n", {{{"plugins", "disabled"}, flow_list({})}});
  EXPECT_FALSE(e.comments_lost);
  EXPECT_EQ(e.text, "model: [unclosed\nplugins:\n  disabled: []\n");
}

TEST(ConfigEdit, WriteConfigFileKeepsALinkAndTheMode) {
  std::random_device rd;
  fs::path dir = fs::temp_directory_path() / ("ov-config-edit-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(dir / "dot");
  fs::path target = dir / "dot" / "config.yaml";
  { std::ofstream(target) << "model: a/b\n"; }
  ::chmod(target.c_str(), 0600);
  fs::create_directories(dir / "cfg");
  fs::create_symlink(target, dir / "cfg" / "config.yaml");
  runtime::config::write_config_file(dir / "cfg" / "config.yaml", "model: c/d\n");
  EXPECT_TRUE(fs::is_symlink(dir / "cfg" / "config.yaml"));
  EXPECT_EQ(support::read_file(target).value_or(""), "model: c/d\n");
  struct stat st{};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A new file in a missing folder: the folder is made, the file is 0644.
  runtime::config::write_config_file(dir / "new" / "config.yaml", "x: 1\n");
  ASSERT_EQ(::stat((dir / "new" / "config.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  std::error_code ec;
  fs::remove_all(dir, ec);
}
