// Result type of the layout algebra: a value or an error message. The algebra
// never throws and never aborts; operations whose preconditions fail (CuTe's
// divisibility conditions, non-injective layouts, ...) return an error.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace argus::layout {

struct LayoutError {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}                  // NOLINT: implicit by design
  Result(LayoutError error) : state_(std::move(error)) {}        // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const LayoutError& error() const { return std::get<LayoutError>(state_); }

 private:
  std::variant<T, LayoutError> state_;
};

inline LayoutError makeError(std::string message) { return LayoutError{std::move(message)}; }

}  // namespace argus::layout
