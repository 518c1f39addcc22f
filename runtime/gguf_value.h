// One GGUF metadata value of any type, arrays (and arrays of arrays) included.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/gguf_types.h"

namespace snapstream::runtime {

class GgufValue {
 public:
  using Array = std::vector<GgufValue>;

  static GgufValue unsigned_int(GgufValueType type, uint64_t value);
  static GgufValue signed_int(GgufValueType type, int64_t value);
  static GgufValue floating(GgufValueType type, double value);
  static GgufValue boolean(bool value);
  static GgufValue string(std::string value);
  static GgufValue array(GgufValueType element_type, Array elements);

  GgufValueType type() const { return type_; }
  GgufValueType element_type() const { return element_type_; }  // for arrays

  // Integer values of any width that fit; nullopt for other types or out-of-range values.
  std::optional<uint64_t> as_uint() const;
  std::optional<int64_t> as_int() const;
  // Floating or integer values.
  std::optional<double> as_double() const;
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;
  const Array* as_array() const;

  // A short human-readable form; arrays show at most `max_items` elements.
  std::string to_display(size_t max_items = 8) const;

 private:
  GgufValueType type_ = GgufValueType::UInt8;
  GgufValueType element_type_ = GgufValueType::UInt8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data_;
};

}  // namespace snapstream::runtime
