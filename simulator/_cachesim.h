/* simulator._cachesim: what every part includes (the parts: see simulator/_cachesim.c). */
#ifndef PARASIM_CACHESIM_H
#define PARASIM_CACHESIM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* Every float is added in the order the Python reference adds it: no multiply-add is fused.
 * Set here, before any function: GCC does not inline a function into one whose optimisation
 * options differ, so a part defined before the pragma would not inline into one after it. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* PyErr_CheckSignals every this many accesses of a bulk run, so Ctrl-C stops a long trace. */
#define SIGNAL_CHECK_MASK ((1u << 20) - 1)

#define ERR_LINE_RANGE \
    "address %R lies beyond the C cache core's 64-bit line numbers (PARASIM_PURE_PYTHON=1 " \
    "runs the Python core, which has no limit)"
#define ERR_NOT_INITIALISED "Hierarchy.__init__ has not been called"

#endif
