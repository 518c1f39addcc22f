// Stop strings over streamed text: nothing of a stop string is released, nothing else is held
// longer than needed.
#include <catch2/catch.hpp>

#include "runtime/stop_text.h"

using snapstream::runtime::StopText;

TEST_CASE("stop text holds back only what may start a stop string", "[stop_text]") {
  StopText stop({"END", "\n\n"});
  CHECK(stop.push("Hello E") == "Hello ");  // "E" may start END
  CHECK(stop.push("N") == "");
  CHECK(stop.push("x world") == "ENx world");
  CHECK(stop.push("!\n") == "!");
  CHECK(stop.push("\nmore") == "");  // the blank line stops; what follows is dropped
  CHECK(stop.stopped());
  CHECK(stop.push("later") == "");
  CHECK(stop.finish() == "");
}

TEST_CASE("the earliest stop string wins and a held tail is released at the end", "[stop_text]") {
  StopText stop({"cat", "a c"});
  CHECK(stop.push("I saw a cat") == "I saw ");  // "a c" starts before "cat"
  CHECK(stop.stopped());

  StopText open({"xyz"});
  CHECK(open.push("abcxy") == "abc");
  CHECK(open.finish() == "xy");
  StopText none({});
  CHECK(none.push("anything") == "anything");
  StopText empty_string({""});
  CHECK(empty_string.push("text") == "text");
}
