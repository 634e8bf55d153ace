// Compiles spdlog and fmt into the binary from their Debian headers.
//
// Debian ships spdlog and fmt only as shared libraries. Linking them dynamically drags
// libstdc++.so in at start-up, and binding its symbols is most of what `openvaala acp` spends
// before it can answer `initialize` (docs/PERFORMANCE.md). Building them here lets the binary
// link libstdc++ statically. Every other TU uses them in "compiled library" mode
// (SPDLOG_COMPILED_LIB, fmt without FMT_HEADER_ONLY), so this is the one TU that holds their
// out-of-line definitions: the -inl.h files define them when SPDLOG_COMPILED_LIB is set, and
// the explicit instantiations below are the templates the headers declare `extern`.
#ifndef SPDLOG_COMPILED_LIB
#error "build with SPDLOG_COMPILED_LIB"
#endif

#include <fmt/format-inl.h>

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/file_helper-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/basic_file_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE

// The sinks and factories the program and its test tools use: stderr and a log file.
template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class spdlog::sinks::basic_file_sink<std::mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_mt<spdlog::synchronous_factory>(
    const std::string& logger_name, spdlog::color_mode mode);
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_st<spdlog::synchronous_factory>(
    const std::string& logger_name, spdlog::color_mode mode);
