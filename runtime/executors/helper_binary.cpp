// helper_binary.hpp: this program's build-id and a copy of it without debug information.
#include "runtime/executors/helper_binary.hpp"

#include <elf.h>
#include <link.h>
#include <spdlog/spdlog.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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
  static std::mutex mu;
  static std::optional<HelperBinary> found;
  static std::string found_why;
  static bool looked = false;
  std::lock_guard lock(mu);
  if (!looked) {
    looked = true;
    std::error_code ec;
    const char* other = std::getenv("OPENVAALA_HELPER_BINARY");
    const fs::path self = other && *other ? fs::path(other) : fs::read_symlink("/proc/self/exe", ec);
    std::string hash = other && *other ? "" : own_build_id();
    if (hash.empty()) hash = size_and_time(self, ec);
    if (ec) found_why = "cannot find the program to copy (" + self.string() + "): " + ec.message();
    else found = HelperBinary{other && *other ? self : stripped_copy(self, hash), hash, machine()};
  }
  if (!found) why = found_why;
  return found;
}

std::string remote_helper_path(const std::string& hash) { return ".cache/openvaala/bin/" + hash + "/openvaala"; }

}  // namespace runtime::executors
