#pragma once
// Helpers of the acp/schema tests: decode text, and the -32602 message a bad input gives.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "acp/rpc_error.hpp"
#include "acp/schema/reader.hpp"

namespace schema_test {

namespace json = boost::json;

template <class T>
T decode(const char* text) {
  return acp::schema::decode<T>(json::parse(text));
}

// The error message decoding `text` as T gives ("(decoded)" when it decodes), checking its code.
template <class T>
std::string decode_error(const char* text) {
  try {
    acp::schema::decode<T>(json::parse(text));
  } catch (const acp::RpcError& e) {
    EXPECT_EQ(e.code(), acp::error_code::kInvalidParams) << text;
    return e.what();
  }
  return "(decoded)";
}

// T survives encode -> decode -> encode unchanged.
template <class T>
json::value round_trip(const T& value) {
  json::value first = json::value_from(value);
  T again = acp::schema::decode<T>(first);
  json::value second = json::value_from(again);
  EXPECT_EQ(first, second) << "encoding the decoded value differs: " << json::serialize(first) << " vs "
                           << json::serialize(second);
  return first;
}

}  // namespace schema_test
