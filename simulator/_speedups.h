/* simulator._speedups: what every part includes (the parts: see simulator/_speedups.c). */
#ifndef PARASIM_SPEEDUPS_H
#define PARASIM_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <frameobject.h> /* PyFrame_Type, for the attribute guard */

#include <math.h>
#include <stdint.h>
#include <sys/mman.h>

#include "greenlet.h"

/* The str_* globals of the parts hold the Python names the core uses: none is a literal here;
 * each is set once at start-up from simulator.hotpath.NAMES by its key (set_names and the
 * ContractName table, in _speedups.c), before the core is used. */

/* GC_TYPE_FUNCTIONS(Type, FIELDS): Type_traverse, Type_clear and Type_dealloc of a heap type
 * whose references are the object fields that FIELDS names (FIELDS(X) expands to X(field)
 * for each, in order): each is visited and cleared in that order, the type itself is visited
 * (a heap type's instances hold a reference to it), and dealloc untracks, clears, frees and
 * drops that reference. A type with other references (Core's queue) writes its own. */
#define GC_VISIT_FIELD(field) Py_VISIT(self->field);
#define GC_CLEAR_FIELD(field) Py_CLEAR(self->field);
#define GC_TYPE_FUNCTIONS(Type, FIELDS)                                                        \
    static int Type##_traverse(Type *self, visitproc visit, void *arg)                         \
    {                                                                                          \
        FIELDS(GC_VISIT_FIELD)                                                                 \
        Py_VISIT(Py_TYPE(self));                                                               \
        return 0;                                                                              \
    }                                                                                          \
    static int Type##_clear(Type *self)                                                        \
    {                                                                                          \
        FIELDS(GC_CLEAR_FIELD)                                                                 \
        return 0;                                                                              \
    }                                                                                          \
    static void Type##_dealloc(Type *self)                                                     \
    {                                                                                          \
        PyTypeObject *type = Py_TYPE(self);                                                    \
        PyObject_GC_UnTrack(self);                                                             \
        Type##_clear(self);                                                                    \
        type->tp_free((PyObject *)self);                                                       \
        Py_DECREF(type);                                                                       \
    }

/* simulator.hotpath.js_mark, its copy: what tells `value` apart in JavaScript from the values
 * Python's equality makes it equal to (a memo's key carries it): 1 for a bool (false, true:
 * never the numbers 0 and 1), 2 for a float -0.0 (-0: never 0), JS_MARKED_TUPLE for a tuple
 * with a marked item at any depth (its marks are a tuple: the Python rule keys it), 0 for any
 * other value. */
#define JS_BOOLEAN 1
#define JS_NEGATIVE_ZERO 2
#define JS_MARKED_TUPLE 3
static long
js_mark(PyObject *value)
{
    if (PyBool_Check(value))
        return JS_BOOLEAN;
    if (PyFloat_Check(value)) {
        double number = PyFloat_AS_DOUBLE(value);
        return number == 0.0 && signbit(number) ? JS_NEGATIVE_ZERO : 0;
    }
    if (PyTuple_Check(value)) {
        for (Py_ssize_t item = 0; item < PyTuple_GET_SIZE(value); item++)
            if (js_mark(PyTuple_GET_ITEM(value, item)) != 0)
                return JS_MARKED_TUPLE;
    }
    return 0;
}

#endif
