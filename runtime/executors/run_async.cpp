#include "runtime/executors/run_async.hpp"

namespace runtime::executors::detail {

boost::asio::awaitable<bridge::process::ProcessResult> run_on_pool(const Deps& deps, bridge::process::ProcessSpec spec,
                                                                   std::function<void(std::string_view)> on_output,
                                                                   support::CancelSource* cancel) {
  auto flag = std::make_shared<std::atomic<bool>>(false);
  support::CancelSource::Registration reg;
  if (cancel) reg = cancel->on_cancel([flag] { flag->store(true); });
  // Chunks go to the io executor; `alive` drops those that arrive after the caller resumed.
  auto alive = std::make_shared<bool>(true);
  if (on_output) {
    auto cb = std::make_shared<std::function<void(std::string_view)>>(std::move(on_output));
    spec.on_stdout = [io = deps.io, cb, alive](std::string_view chunk) {
      boost::asio::post(io, [cb, alive, s = std::string(chunk)] {
        if (*alive) (*cb)(s);
      });
    };
  }
  auto job = [spec = std::move(spec), flag] { return bridge::process::run_process(spec, flag.get()); };
  auto result = co_await support::run_blocking(*deps.pool, std::move(job));
  *alive = false;
  co_return result;
}

void OutputTail::add(std::string_view chunk) {
  text.append(chunk);
  if (text.size() > limit) {
    text.erase(0, text.size() - limit);
    truncated = true;
  }
}

}  // namespace runtime::executors::detail
