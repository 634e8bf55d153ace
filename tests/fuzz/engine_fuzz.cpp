// libFuzzer target for the engine's parsers of untrusted text:
//   byte 0 % 2 == 0: SKILL.md (frontmatter split, the fast `key: value` reader, YAML, validation),
//                    with a differential check: whenever the fast reader accepts the frontmatter,
//                    yaml-cpp must read the same keys and values;
//   byte 0 % 2 == 1: an mcp_servers/<id>.yaml document through the full validator.
// Build: cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DOPENVAALA_BUILD_FUZZERS=ON
//        cmake --build build-fuzz --target engine_fuzz && build-fuzz/tests/fuzz/engine_fuzz -max_total_time=60
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/config/yaml_reading.hpp"
#include "runtime/engine/loaders.hpp"

using namespace runtime::engine;

namespace {

void check_fast_against_yaml(const std::string& yaml) {
  auto fast = detail::fast_frontmatter(yaml);
  if (!fast) return;
  YAML::Node n;
  try {
    n = YAML::Load(yaml);
  } catch (const YAML::Exception&) {
    std::abort();  // the fast reader accepted text YAML rejects
  }
  if (fast->empty()) {
    if (!(n.IsNull() || (n.IsMap() && n.size() == 0))) std::abort();
    return;
  }
  if (!n.IsMap() || n.size() != fast->size()) std::abort();
  for (const auto& [key, field] : *fast) {
    auto v = n[key];
    if (!v) std::abort();
    if (field.null) {
      if (!v.IsNull()) std::abort();
    } else if (!v.IsScalar() || v.Scalar() != field.value) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  runtime::config::Diagnostics diags;
  if (data[0] % 2 == 0) {
    detail::FrontmatterSplit split;
    if (detail::split_frontmatter(text, split) == detail::FrontmatterError::None) check_fast_against_yaml(split.yaml);
    check_fast_against_yaml(text);
    detail::parse_skill_text(text, "/fuzz/SKILL.md", runtime::config::Diagnostic::Severity::Warning, diags);
  } else {
    runtime::config::YamlReader r("/fuzz/mcp_servers/fuzz.yaml", diags);
    auto root = r.load_string(text);
    if (root && !root->IsNull()) {
      detail::McpParseContext ctx;
      ctx.config_root = "/nonexistent-openvaala-fuzz";
      ctx.expected_id = "fuzz";
      try {
        detail::parse_mcp_server(r, *root, ctx);
        ctx.expected_id.clear();
        ctx.plugin = "p";
        ctx.plugin_root = "/fuzz/plugin";
        detail::parse_mcp_server(r, *root, ctx);
      } catch (const YAML::Exception&) {
        // Reading a key of a non-map node throws in yaml-cpp; the loaders only hand maps over.
      }
    }
  }
  for (const auto& d : diags) (void)d.to_string();
  return 0;
}
