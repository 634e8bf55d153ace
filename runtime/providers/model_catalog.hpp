#pragma once
// The models the editor's model picker offers: each configured provider's `models:`, else what
// its models endpoint lists. Endpoint lists are fetched in the background (never on a request's
// path), once per provider and base URL for the server's life; one that cannot be fetched offers
// nothing until a retry succeeds (a gateway that was down at start-up fills the picker later).
#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/config/main_config.hpp"
#include "runtime/protocol/conversation.hpp"

namespace runtime::providers {

// "<provider id>/<model name>" values: `current` first (when set), then the models of every
// provider in `cfg` (its `models:`, else its list in `fetched`, by provider id), each once.
std::vector<std::string> model_choices(const config::MainConfig& cfg, const std::string& current,
                                       const std::map<std::string, std::vector<std::string>>& fetched);

// The model ids of a models endpoint's answer (`data[].id`, OpenAI and Anthropic alike);
// nullopt when the body is not such an answer.
std::optional<std::vector<std::string>> parse_model_list(std::string_view body);

// What one response cost at `price` (per million tokens); cached input at cached_input when set.
double cost_of(const Usage& usage, const config::ModelPrice& price);

class ModelCatalog {
 public:
  explicit ModelCatalog(boost::asio::any_io_executor executor);
  ~ModelCatalog();
  ModelCatalog(const ModelCatalog&) = delete;
  ModelCatalog& operator=(const ModelCatalog&) = delete;

  // Runs on the executor each time a fetched list differs from what was known of its provider.
  void on_change(std::function<void()> f);
  // Starts fetching the lists of `cfg`'s providers without `models:` not fetched (or being
  // fetched) yet. A failed fetch is tried again after kRetryDelays (the last one repeating) for
  // as long as the catalog lives. Returns at once.
  void fetch_missing(const config::MainConfig& cfg);
  std::vector<std::string> choices(const config::MainConfig& cfg, const std::string& current) const;
  // The client is gone: no more retries, and those waiting end now (nothing keeps the executor busy).
  void stop();

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with fetches in flight, which may outlive the catalog
};

}  // namespace runtime::providers
