// helper_binary.hpp: this program's build-id and a copy of it without debug information.
#include "runtime/executors/helper_binary.hpp"

#include <elf.h>
#include <link.h>
#include <spdlog/spdlog.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "bridge/process/child_process.hpp"
#include "runtime/config/paths.hpp"

namespace runtime::executors {

namespace fs = std::filesystem;

namespace {

// Above this size the binary still has its debug information.
constexpr std::uintmax_t kStripAbove = 64ull * 1024 * 1024;

// The GNU build-id note of the main program, hex; "" when it has none.
std::string own_build_id() {
  std::string id;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          auto* at = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          const char* end = at + ph.p_memsz;
          while (at + sizeof(ElfW(Nhdr)) <= end) {
            const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(at);
            const char* name = at + sizeof(ElfW(Nhdr));
            const char* desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::string_view(name, 3) == "GNU") {
              auto& hex = *static_cast<std::string*>(out);
              for (unsigned j = 0; j < note->n_descsz; ++j) {
                char b[3];
                std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(desc[j]));
                hex += b;
              }
              return 1;
            }
            at = desc + ((note->n_descsz + 3) & ~3u);
          }
        }
        return 1;  // the first object is the main program: look no further
      },
      &id);
  return id;
}

// Without a build-id: the file's size and time name the build.
std::string size_and_time(const fs::path& file, std::error_code& ec) {
  const auto size = fs::file_size(file, ec);
  if (ec) return {};
  return std::to_string(size) + "-" + std::to_string(fs::last_write_time(file, ec).time_since_epoch().count());
}

std::string machine() {
  utsname u{};
  return ::uname(&u) == 0 ? u.machine : "";
}

// `self` without debug information: `<self>.stripped` made by the build beside it, else made
// once into the cache; `self` when that cannot be done.
fs::path stripped_copy(const fs::path& self, const std::string& hash) {
  std::error_code ec;
  if (fs::file_size(self, ec) <= kStripAbove || ec) return self;
  const fs::path beside = self.string() + ".stripped";
  if (fs::is_regular_file(beside, ec) && fs::last_write_time(beside, ec) >= fs::last_write_time(self, ec) && !ec)
    return beside;
  const fs::path dir = config::cache_dir() / "helper" / hash;
  const fs::path file = dir / "openvaala";
  if (fs::is_regular_file(file, ec)) return file;
  fs::create_directories(dir, ec);
  const fs::path temp = dir / (".openvaala." + std::to_string(::getpid()));
  bridge::process::ProcessSpec spec;
  spec.argv = {"objcopy", "--strip-debug", self.string(), temp.string()};
  spec.timeout = std::chrono::milliseconds(120'000);
  auto r = bridge::process::run_process(spec);
  if (r.exit_code == 0) {
    fs::rename(temp, file, ec);
    if (!ec) return file;
  }
  fs::remove(temp, ec);
  spdlog::warn("executor helper: cannot strip {} ({}): the whole binary is copied", self.string(),
               r.started ? r.stderr_data : r.spawn_error);
  return self;
}

}  // namespace

std::optional<HelperBinary> helper_binary(std::string& why) {
  // Cached per program to copy ($OPENVAALA_HELPER_BINARY may name another between calls: tests).
  static std::mutex mu;
  static std::map<std::string, std::optional<HelperBinary>> found;
  static std::map<std::string, std::string> found_why;
  const char* other = std::getenv("OPENVAALA_HELPER_BINARY");
  const std::string key = other ? other : "";
  std::lock_guard lock(mu);
  if (!found.count(key)) {
    std::error_code ec;
    const fs::path self = key.empty() ? fs::read_symlink("/proc/self/exe", ec) : fs::path(key);
    std::string hash = key.empty() ? own_build_id() : "";
    if (hash.empty()) hash = size_and_time(self, ec);
    if (ec) found_why[key] = "cannot find the program to copy (" + self.string() + "): " + ec.message();
    found[key] = ec ? std::nullopt : std::optional<HelperBinary>(HelperBinary{self, hash, machine(), !key.empty()});
  }
  if (!found[key]) why = found_why[key];
  return found[key];
}

fs::path helper_file_to_copy(const HelperBinary& binary) {
  if (binary.as_is) return binary.program;
  static std::mutex mu;
  static std::map<fs::path, fs::path> made;  // program -> the copy made of it
  std::lock_guard lock(mu);
  std::error_code ec;
  if (auto it = made.find(binary.program); it != made.end() && fs::exists(it->second, ec)) return it->second;
  return made[binary.program] = stripped_copy(binary.program, binary.hash);
}

std::string remote_helper_path(const std::string& hash) { return ".cache/openvaala/bin/" + hash + "/openvaala"; }

}  // namespace runtime::executors
