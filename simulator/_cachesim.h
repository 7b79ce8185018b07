/* simulator._cachesim: what every part includes (the parts: see simulator/_cachesim.c). */
#ifndef PARASIM_CACHESIM_H
#define PARASIM_CACHESIM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* PyErr_CheckSignals every this many accesses of a bulk run, so Ctrl-C stops a long trace. */
#define SIGNAL_CHECK_MASK ((1u << 20) - 1)

#define ERR_LINE_RANGE \
    "address %R lies beyond the C cache core's 64-bit line numbers (PARASIM_PURE_PYTHON=1 " \
    "runs the Python core, which has no limit)"
#define ERR_NOT_INITIALISED "Hierarchy.__init__ has not been called"

#endif
