// GPT-2's byte-level alphabet: byte-level BPE vocabularies spell every byte as one printable
// character, so that merges and tokens are text. Bytes that are printable Latin-1 characters
// (! to ~, ¡ to ¬, ® to ÿ) stand for themselves; the other 68 map in order to U+0100 onwards
// (a space is "Ġ", U+0120; a newline "Ċ", U+010A).
#pragma once

#include <string>
#include <string_view>

namespace snapstream::runtime {

// Each byte of `bytes` as its alphabet character, UTF-8 encoded.
std::string bytes_to_symbols(std::string_view bytes);

// The inverse; characters outside the alphabet are kept as their UTF-8 bytes.
std::string symbols_to_bytes(std::string_view symbols);

}  // namespace snapstream::runtime
