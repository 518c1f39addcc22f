// Construction, typed access and display of GGUF metadata values.
#include "runtime/gguf_value.h"

#include <limits>
#include <sstream>

namespace snapstream::runtime {

GgufValue GgufValue::unsigned_int(GgufValueType type, uint64_t value) {
  GgufValue v;
  v.type_ = type;
  v.data_ = value;
  return v;
}

GgufValue GgufValue::signed_int(GgufValueType type, int64_t value) {
  GgufValue v;
  v.type_ = type;
  v.data_ = value;
  return v;
}

GgufValue GgufValue::floating(GgufValueType type, double value) {
  GgufValue v;
  v.type_ = type;
  v.data_ = value;
  return v;
}

GgufValue GgufValue::boolean(bool value) {
  GgufValue v;
  v.type_ = GgufValueType::Bool;
  v.data_ = value;
  return v;
}

GgufValue GgufValue::string(std::string value) {
  GgufValue v;
  v.type_ = GgufValueType::String;
  v.data_ = std::move(value);
  return v;
}

GgufValue GgufValue::array(GgufValueType element_type, Array elements) {
  GgufValue v;
  v.type_ = GgufValueType::Array;
  v.element_type_ = element_type;
  v.data_ = std::move(elements);
  return v;
}

std::optional<uint64_t> GgufValue::as_uint() const {
  if (const auto* u = std::get_if<uint64_t>(&data_)) return *u;
  if (const auto* i = std::get_if<int64_t>(&data_); i && *i >= 0) return static_cast<uint64_t>(*i);
  return std::nullopt;
}

std::optional<int64_t> GgufValue::as_int() const {
  if (const auto* i = std::get_if<int64_t>(&data_)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&data_); u && *u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return static_cast<int64_t>(*u);
  return std::nullopt;
}

std::optional<double> GgufValue::as_double() const {
  if (const auto* d = std::get_if<double>(&data_)) return *d;
  if (const auto* i = std::get_if<int64_t>(&data_)) return static_cast<double>(*i);
  if (const auto* u = std::get_if<uint64_t>(&data_)) return static_cast<double>(*u);
  return std::nullopt;
}

std::optional<bool> GgufValue::as_bool() const {
  if (const auto* b = std::get_if<bool>(&data_)) return *b;
  return std::nullopt;
}

const std::string* GgufValue::as_string() const { return std::get_if<std::string>(&data_); }

const GgufValue::Array* GgufValue::as_array() const { return std::get_if<Array>(&data_); }

std::string GgufValue::to_display(size_t max_items) const {
  std::ostringstream out;
  if (const auto* s = as_string()) {
    out << '"' << (s->size() > 80 ? s->substr(0, 80) + "..." : *s) << '"';
  } else if (const auto* a = as_array()) {
    out << gguf_value_type_name(element_type_) << "[" << a->size() << "] [";
    for (size_t i = 0; i < a->size() && i < max_items; ++i) out << (i ? ", " : "") << (*a)[i].to_display(max_items);
    if (a->size() > max_items) out << ", ...";
    out << "]";
  } else if (const auto b = as_bool()) {
    out << (*b ? "true" : "false");
  } else if (const auto* d = std::get_if<double>(&data_)) {
    out << *d;
  } else if (const auto* i = std::get_if<int64_t>(&data_)) {
    out << *i;
  } else if (const auto* u = std::get_if<uint64_t>(&data_)) {
    out << *u;
  }
  return out.str();
}

}  // namespace snapstream::runtime
