#pragma once
// std::visit with one lambda per alternative: std::visit(overloaded{[](const A&) {...}, ...}, v).
namespace support {

template <class... Ts>
struct overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
overloaded(Ts...) -> overloaded<Ts...>;

}  // namespace support
