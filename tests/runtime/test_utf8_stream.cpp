// Streamed detokenisation holds split characters and never emits invalid UTF-8.
#include <catch2/catch.hpp>

#include "runtime/utf8_stream.h"

using snapstream::runtime::Utf8Stream;

TEST_CASE("a character split over pushes comes out whole", "[utf8]") {
  Utf8Stream stream;
  CHECK(stream.push("a\xE2") == "a");
  CHECK(stream.push("\x82") == "");
  CHECK(stream.push("\xAC!") == "\xE2\x82\xAC!");
  CHECK(stream.finish() == "");
}

TEST_CASE("invalid bytes become U+FFFD", "[utf8]") {
  Utf8Stream stream;
  CHECK(stream.push("\xFFok") == "\xEF\xBF\xBDok");
  CHECK(stream.push("\xC3(") == "\xEF\xBF\xBD(");       // a lead byte without its continuation
  CHECK(stream.push("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  CHECK(stream.push("\xF0\x9F") == "");
  CHECK(stream.finish() == "\xEF\xBF\xBD");             // unfinished at the end
}
