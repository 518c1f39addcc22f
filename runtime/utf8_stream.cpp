// A small UTF-8 validator (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
#include "runtime/utf8_stream.h"

namespace snapstream::runtime {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the sequence a lead byte announces, or 0 for a byte that cannot start one.
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether byte `index` (>= 1) of a sequence starting with `lead` is allowed.
bool continuation_ok(unsigned char lead, size_t index, unsigned char byte) {
  if ((byte & 0xC0) != 0x80) return false;
  if (index != 1) return true;
  if (lead == 0xE0) return byte >= 0xA0;  // overlong
  if (lead == 0xED) return byte <= 0x9F;  // surrogates
  if (lead == 0xF0) return byte >= 0x90;  // overlong
  if (lead == 0xF4) return byte <= 0x8F;  // above U+10FFFF
  return true;
}

}  // namespace

std::string Utf8Stream::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const auto lead = static_cast<unsigned char>(pending_[i]);
    const size_t length = sequence_length(lead);
    if (length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    size_t have = 1;
    while (have < length && i + have < pending_.size() &&
           continuation_ok(lead, have, static_cast<unsigned char>(pending_[i + have])))
      ++have;
    if (have == length) {
      out.append(pending_, i, length);
      i += length;
    } else if (i + have == pending_.size()) {
      break;  // a valid prefix that may still complete
    } else {
      out += kReplacement;  // broken sequence: replace its valid prefix, resume at the bad byte
      i += have;
    }
  }
  pending_.erase(0, i);
  return out;
}

std::string Utf8Stream::finish() {
  std::string out = push("");
  if (!pending_.empty()) out += kReplacement;
  pending_.clear();
  return out;
}

}  // namespace snapstream::runtime
