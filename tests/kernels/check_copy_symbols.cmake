# Fails when an object compiled for one instruction set defines a symbol the linker may merge with
# another file's copy (weak, vague-linkage or unique: an inline function or template left out of
# line). The linker keeps one of those copies for every caller, so a baseline caller could end up
# running an AVX-512 body. Symbols inside the object's own namespace (ALLOWED, a demangled
# prefix; empty for none) cannot clash with another copy and are let through.
# Usage: cmake -DNM=nm -DOBJECTS="a.o|b.o" -DALLOWED="prefix::" -P check_copy_symbols.cmake
string(REPLACE "|" ";" objects "${OBJECTS}")
set(problems "")
foreach(object IN LISTS objects)
  execute_process(COMMAND "${NM}" -C --defined-only "${object}" OUTPUT_VARIABLE listing RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${NM} could not read ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^[0-9a-fA-F]* [WVu] (.*)$")
      continue()
    endif()
    set(name "${CMAKE_MATCH_1}")
    if(NOT ALLOWED STREQUAL "")
      string(FIND "${name}" "${ALLOWED}" at)
      if(at EQUAL 0)
        continue()
      endif()
    endif()
    string(APPEND problems "\n  ${object}: ${name}")
  endforeach()
endforeach()
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "symbols another copy could replace at link time:${problems}")
endif()
list(LENGTH objects count)
message(STATUS "${count} objects: no symbol shared with another copy")
