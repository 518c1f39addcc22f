// Which copy of the float kernels a file declares or defines. dot, weighted_sum, score_row,
// exp_row, head8, f16_rows and activation_blocks are compiled once per instruction set
// (kernels/CMakeLists.txt sets SNAPSTREAM_FLOAT_ISA to the copy's name), each copy in a namespace
// of its own so that not even a header's inline function is shared between copies built for
// different CPUs. Everywhere else the same names are the entry points that forward to the copy
// chosen at run time (cpu/float_kernels.h).
#pragma once

#ifdef SNAPSTREAM_FLOAT_ISA
#define SNAPSTREAM_FLOAT_ISA_BEGIN namespace SNAPSTREAM_FLOAT_ISA {
#define SNAPSTREAM_FLOAT_ISA_END }
#else
#define SNAPSTREAM_FLOAT_ISA_BEGIN
#define SNAPSTREAM_FLOAT_ISA_END
#endif
