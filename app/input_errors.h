// Which errors mean that the user's input is at fault (exit code 2) rather than the program
// (exit code 1): each room's own error types, named here once, for the whole command line.
#pragma once

#include <exception>

namespace snapstream::app {

// True for a file, config, argument or request the user can fix: the runtime's InputError, a
// model shape graph/ refuses, and every simulator error (a config it cannot read, a deployment
// that does not fit the system).
bool is_input_error(const std::exception& error);

}  // namespace snapstream::app
