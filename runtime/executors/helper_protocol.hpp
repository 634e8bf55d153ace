#pragma once
// The executor helper's wire format (DESIGN §10): `openvaala executor-helper` runs on the other
// side of a remote executor's channel and answers framed requests on its stdin/stdout, many in
// flight at once. A frame is
//
//   u32 length (big-endian, of what follows) | u32 id | u8 kind | payload
//
// The client numbers its requests (id ≥ 1); every reply carries the id of its request. The
// helper's first frame is a hello (id 0). Strings in a payload are u32 length + bytes.
//
//   request          payload                       reply
//   kRead      'r'   path                          kOk: the content | kError
//   kWrite     'w'   path, content                 kOk | kError     (temp file + rename)
//   kRemove    'u'   path                          kOk | kError
//   kStat      's'   path                          kOk: 'd' | 'n' | 'f' + u64 size
//   kRealPaths 'p'   count, paths                  kOk: `realpath -m -z` of each, then of the
//                                                  config root there | kError
//   kSpawn     'x'   command (for bash -c)         kOutput* then kExit: i32 code, i32 signal
//                                                  (-1 for the one not set) | kError
//   kKill      'k'   (the id of a running spawn)   nothing: its process group gets SIGTERM,
//                                                  SIGKILL a second later
//
// The end of its stdin ends the helper: every process group it started gets SIGTERM, then
// SIGKILL, and it exits. So nothing of ours outlives a closed channel there.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runtime::executors::helper {

inline constexpr char kHello = 'h';
inline constexpr char kRead = 'r';
inline constexpr char kWrite = 'w';
inline constexpr char kRemove = 'u';
inline constexpr char kStat = 's';
inline constexpr char kRealPaths = 'p';
inline constexpr char kSpawn = 'x';
inline constexpr char kKill = 'k';
inline constexpr char kOk = 'o';
inline constexpr char kError = 'e';
inline constexpr char kOutput = 'd';
inline constexpr char kExit = 'z';

// What the hello says; a client that reads another version does not use the helper.
inline constexpr std::string_view kHelloText = "openvaala-executor-helper 1";
// Larger frames are refused (a read of kMaxReadFileBytes fits).
inline constexpr std::uint32_t kMaxFrameBytes = 80u * 1024 * 1024;

struct Frame {
  std::uint32_t id = 0;
  char kind = 0;
  std::string payload;
};

// The frame's bytes on the wire.
std::string encode(const Frame& f);

// Takes bytes as they arrive and hands out whole frames.
class FrameReader {
 public:
  void add(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame, if one has arrived. Throws std::runtime_error on a frame that is too
  // large or too short to be one (the stream is then unusable).
  std::optional<Frame> next();

 private:
  std::string buffer_;
  std::size_t at_ = 0;
};

// Payload fields.
void put_u32(std::string& out, std::uint32_t v);
void put_string(std::string& out, std::string_view s);
// Reads fields in order; throws std::runtime_error when the payload ends early.
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view p) : p_(p) {}
  std::uint32_t u32();
  std::uint64_t u64();
  std::string string();
  char byte();
  std::string_view rest() const { return p_.substr(at_); }

 private:
  std::string_view take(std::size_t n);
  std::string_view p_;
  std::size_t at_ = 0;
};

// The helper itself: serves frames from `in_fd`, answers on `out_fd`, until `in_fd` ends; then
// ends the process groups it started. Answers the exit status of `openvaala executor-helper`;
// a request stuck on a hung mount may still hold a thread then (the CLI leaves with _exit).
int serve(int in_fd, int out_fd);

}  // namespace runtime::executors::helper
