// The byte <-> character tables of the byte-level alphabet, built once from the rule.
#include "runtime/byte_symbols.h"

#include <array>
#include <cstdint>

namespace snapstream::runtime {
namespace {

bool stands_for_itself(int byte) { return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE; }

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else {  // the alphabet stays below U+0800: two bytes
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

struct Alphabet {
  std::array<uint32_t, 256> code_point_of{};
  std::array<int, 0x200> byte_of{};  // by code point; -1 outside the alphabet
  Alphabet() {
    byte_of.fill(-1);
    uint32_t next_extra = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
      code_point_of[static_cast<size_t>(byte)] = stands_for_itself(byte) ? static_cast<uint32_t>(byte) : next_extra++;
      byte_of[code_point_of[static_cast<size_t>(byte)]] = byte;
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet table;
  return table;
}

}  // namespace

std::string bytes_to_symbols(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) append_utf8(out, alphabet().code_point_of[static_cast<unsigned char>(c)]);
  return out;
}

std::string symbols_to_bytes(std::string_view symbols) {
  std::string out;
  out.reserve(symbols.size());
  for (size_t i = 0; i < symbols.size();) {
    const auto lead = static_cast<unsigned char>(symbols[i]);
    if (lead < 0x80) {
      const int byte = alphabet().byte_of[lead];
      out += byte >= 0 ? static_cast<char>(byte) : static_cast<char>(lead);
      ++i;
      continue;
    }
    if ((lead & 0xE0) == 0xC0 && i + 1 < symbols.size()) {
      const uint32_t code_point = ((lead & 0x1Fu) << 6) | (static_cast<unsigned char>(symbols[i + 1]) & 0x3Fu);
      if (code_point < alphabet().byte_of.size() && alphabet().byte_of[code_point] >= 0) {
        out += static_cast<char>(alphabet().byte_of[code_point]);
        i += 2;
        continue;
      }
    }
    out += symbols[i++];  // not in the alphabet: copied byte for byte
  }
  return out;
}

}  // namespace snapstream::runtime
