// Catch2's main for the tests mpirun starts: MPI comes up before the tests run and goes down
// after; every rank runs every test, and mpirun fails when any rank does.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "distributed/mpi_session.h"

int main(int argc, char** argv) {
  const snapstream::distributed::MpiSession mpi(&argc, &argv);
  return Catch::Session().run(argc, argv);
}
