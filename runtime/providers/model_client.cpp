#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "bridge/http/http_client.hpp"
#include "runtime/providers/model_provider.hpp"
#include "support/text.hpp"

namespace runtime::providers {

namespace asio = boost::asio;
using bridge::http::FailureKind;

ModelClient::ModelClient(ResolvedModel model)
    : model_(std::move(model)),
      format_(model_.provider.api_type == "anthropic" ? make_anthropic_messages_format() : make_openai_chat_format()) {}

std::unique_ptr<Model> make_model_client(ResolvedModel model) { return std::make_unique<ModelClient>(std::move(model)); }

namespace {

std::chrono::milliseconds backoff(int attempt, const std::string& retry_after) {
  if (!retry_after.empty()) {
    try {
      double secs = std::stod(retry_after);
      if (secs >= 0) return std::chrono::milliseconds(static_cast<long>(std::min(secs, 30.0) * 1000));
    } catch (...) {
    }
  }
  static thread_local std::mt19937 rng{std::random_device{}()};
  long base = std::min(250L << std::min(attempt, 6), 8000L);
  return std::chrono::milliseconds(base + std::uniform_int_distribution<long>(0, base / 4)(rng));
}

// One attempt's reading of the answer: its status and headers, an error body, or the SSE events
// decoded into the response while the status is 200.
struct StreamAttempt {
  std::unique_ptr<StreamDecoder> decoder;
  StreamCallbacks counting;  // cb's text callbacks, noting that something was streamed
  bridge::http::SseDecoder sse;
  std::vector<bridge::http::SseEvent> events;
  ModelResponse response;
  int status = 0;
  std::string error_body, retry_after;
  bool streamed = false;  // then a failure is not retried: the editor has shown part of it
  std::optional<ModelError> decode_error;

  StreamAttempt(const WireFormat& format, StreamCallbacks& cb)
      : decoder(format.decoder()),
        counting{[this, &cb](std::string_view t) { streamed = true; cb.on_text(t); },
                 [this, &cb](std::string_view t) { streamed = true; cb.on_reasoning(t); }, nullptr, nullptr} {}
  StreamAttempt(const StreamAttempt&) = delete;
  StreamAttempt& operator=(const StreamAttempt&) = delete;

  void on_head(const bridge::http::HttpResponseHead& head) {
    status = head.status;
    retry_after = head.header("retry-after");
  }

  void on_data(std::string_view data) {
    if (status != 200) {
      if (error_body.size() < 64 * 1024) error_body.append(data);
      return;
    }
    if (decode_error) return;
    events.clear();
    sse.feed(data, events);
    try {
      for (const auto& ev : events) decoder->on_event(ev, response, counting);
    } catch (const ModelError& e) {
      decode_error = e;
    }
  }

  // The end of a whole 200 stream: the last events, then the decoder's check; its error, if any.
  std::optional<ModelError> finish() {
    events.clear();
    sse.finish(events);
    try {
      for (const auto& ev : events) decoder->on_event(ev, response, counting);
      decoder->finish(response);
    } catch (const ModelError& e) {
      return e;
    }
    return std::nullopt;
  }
};

// A request that failed before an HTTP answer.
ModelError failure_error(const bridge::http::HttpFailure& failure, const config::ProviderConfig& provider) {
  if (failure.kind == FailureKind::Timeout)
    return ModelError(ModelError::Kind::Timeout,
                      "the model did not answer within " + std::to_string(provider.idle_timeout_seconds) +
                          " s (provider '" + provider.id + "', idle_timeout_seconds)");
  if (failure.kind == FailureKind::BadUrl)
    return ModelError(ModelError::Kind::Config, "provider '" + provider.id + "': " + failure.message);
  return ModelError(ModelError::Kind::Network, "cannot reach the model at " + provider.base_url + ": " + failure.message);
}

// An HTTP answer other than 200, with the provider's own message (`detail`) when it gave one.
ModelError status_error(int status, const std::string& detail, const ResolvedModel& model) {
  const auto& provider = model.provider;
  std::string where = "the model provider '" + provider.id + "' answered HTTP " + std::to_string(status);
  if (status == 401 || status == 403)
    return ModelError(ModelError::Kind::Auth,
                      where + ": the API key was rejected" +
                          (!model.api_key_source.empty()
                               ? " (check the key in " + model.api_key_source + ")"
                               : provider.api_key_env.empty()
                                     ? std::string(" (no key is set for this provider: set api_key_env or run "
                                                   "`openvaala login --provider ") + provider.id + "`)"
                                     : " (check the key in $" + provider.api_key_env + ")") +
                          (detail.empty() ? "" : ": " + detail));
  if (status == 429)
    return ModelError(ModelError::Kind::RateLimit, where + " (rate limited)" + (detail.empty() ? "" : ": " + detail));
  if (status >= 500) return ModelError(ModelError::Kind::Server, where + (detail.empty() ? "" : ": " + detail));
  return ModelError(ModelError::Kind::BadRequest, where + (detail.empty() ? "" : ": " + detail));
}

// The pause before the next attempt; a cancel ends it and the stream.
asio::awaitable<void> wait_to_retry(std::chrono::milliseconds delay, support::CancelSource* cancel) {
  asio::steady_timer timer(co_await asio::this_coro::executor, delay);
  support::CancelSource::Registration reg;
  if (cancel) reg = cancel->on_cancel([&timer] { timer.cancel(); });
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  if (cancel && cancel->cancelled()) throw ModelError(ModelError::Kind::Cancelled, "cancelled");
}

}  // namespace

asio::awaitable<ModelResponse> ModelClient::stream(const ModelRequest& req, StreamCallbacks& cb,
                                                   support::CancelSource* cancel) {
  const auto& provider = model_.provider;
  bridge::http::HttpRequest http_req;
  http_req.url = format_->endpoint(provider.base_url);
  http_req.headers = format_->headers(model_.api_key);
  http_req.body = format_->body(req, provider.max_output_tokens);
  // A file or command output that is not UTF-8 must not make every later request unreadable.
  support::repair_utf8(http_req.body);
  bridge::http::StreamOptions options;
  options.idle_timeout = std::chrono::seconds(provider.idle_timeout_seconds);
  options.connect_timeout = std::min(options.connect_timeout, options.idle_timeout);
  options.before_read = cb.wait_for_consumer;

  const int attempts = provider.max_retries + 1;
  for (int attempt = 1;; ++attempt) {
    StreamAttempt at(*format_, cb);
    spdlog::debug("model request {} ({} bytes) attempt {}/{}", http_req.url, http_req.body.size(), attempt, attempts);
    // Named callbacks, not temporaries inside co_await: GCC 12 destroys such temporaries twice.
    std::function<void(const bridge::http::HttpResponseHead&)> on_head =
        [&at](const bridge::http::HttpResponseHead& head) { at.on_head(head); };
    std::function<void(std::string_view)> on_data = [&at](std::string_view data) { at.on_data(data); };
    auto failure = co_await bridge::http::stream_request(http_req, options, std::move(on_head), std::move(on_data), cancel);

    if (cancel && cancel->cancelled()) throw ModelError(ModelError::Kind::Cancelled, "cancelled");
    std::optional<ModelError> error = at.decode_error;
    if (!error && failure) error = failure_error(*failure, provider);
    if (!error && at.status != 200) error = status_error(at.status, format_->error_message(at.error_body), model_);
    if (!error) {
      error = at.finish();
      if (!error) co_return std::move(at.response);
    }
    if (!error->retryable() || at.streamed || attempt >= attempts) {
      if (attempt > 1) throw ModelError(error->kind(), std::string(error->what()) + " (after " + std::to_string(attempt) + " attempts)");
      throw *error;
    }
    auto delay = backoff(attempt - 1, at.status == 429 || at.status == 503 ? at.retry_after : "");
    // Info, not a warning: the editor is told of the retry (on_retry), and editors show every
    // stderr line as an error (acp.el); the log file keeps it.
    spdlog::info("model request failed ({}); retry {}/{} in {} ms", error->what(), attempt, attempts - 1, delay.count());
    if (cb.on_retry) cb.on_retry(attempt, attempts - 1, error->what());
    co_await wait_to_retry(delay, cancel);
  }
}

}  // namespace runtime::providers
