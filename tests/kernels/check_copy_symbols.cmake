# Fails when an object compiled for one instruction set defines code the linker may merge with
# another file's copy: a weak function (an inline function or template left out of line). The
# linker keeps one body for every caller, so a baseline caller could end up running one built
# for AVX-512 (or with BMI2's integer instructions). Weak data (type information, the exception
# tables' pointer to the personality routine, constants) holds the same bytes in every object
# and is let through, and so is a function whose name mentions one of the object's own
# namespaces (ALLOWED, demangled, "|"-separated; empty for none), in its scope or parameters.
# One library function is let through by name: std::bad_alloc's constructor, which Eigen's
# allocation-failure path makes clang's sanitizer builds emit out of line. Its body only stores
# the vtable pointer, which no instruction set changes.
# Usage: cmake -DNM=nm -DOBJECTS="a.o|b.o" -DALLOWED="ns::|other::" -P check_copy_symbols.cmake
string(REPLACE "|" ";" objects "${OBJECTS}")
string(REPLACE "|" ";" allowed "${ALLOWED}")
set(problems "")
foreach(object IN LISTS objects)
  execute_process(COMMAND "${NM}" -C --defined-only "${object}" OUTPUT_VARIABLE listing RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${NM} could not read ${object}")
  endif()
  # Brackets (as in "vector[4]") would stop CMake's list splitting at the next lines' separators.
  string(REPLACE "[" "(" listing "${listing}")
  string(REPLACE "]" ")" listing "${listing}")
  string(REPLACE ";" "," listing "${listing}")
  string(REPLACE "\n" ";" lines "${listing}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^[0-9a-fA-F]* [Wi] (.*)$")
      continue()
    endif()
    set(name "${CMAKE_MATCH_1}")
    if(name STREQUAL "std::bad_alloc::bad_alloc()")
      continue()
    endif()
    set(own FALSE)
    foreach(namespace IN LISTS allowed)
      string(FIND "${name}" "${namespace}" at)
      if(NOT at EQUAL -1)
        set(own TRUE)
      endif()
    endforeach()
    if(NOT own)
      string(APPEND problems "\n  ${object}: ${name}")
    endif()
  endforeach()
endforeach()
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "symbols another copy could replace at link time:${problems}")
endif()
list(LENGTH objects count)
message(STATUS "${count} objects: no symbol shared with another copy")
