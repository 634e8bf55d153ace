#pragma once
// The WebSocket profile of ACP over the network: one JSON-RPC message per text frame, each way.
#include <boost/beast/websocket/stream.hpp>
#include <memory>

#include "acp/network_streams.hpp"
#include "acp/transport.hpp"

namespace acp {

template <class Next>
using WebSocketStream = boost::beast::websocket::stream<Next>;

// `ws` has been accepted (the upgrade answered). Frames are read once start() is called; a
// closed or failed socket is a disconnect. Binary frames are ignored, as the SDK's server does.
std::unique_ptr<Transport> make_websocket_transport(WebSocketStream<PlainStream> ws);
std::unique_ptr<Transport> make_websocket_transport(WebSocketStream<TlsStream> ws);

}  // namespace acp
