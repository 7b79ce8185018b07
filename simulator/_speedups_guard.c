/* simulator._speedups: the attribute and multiplication guards of application models
 * (guarded_getattr, guarded_mul).
 *
 * Python reference: simulator/sandbox/restricted.py guarded_getattr, guarded_mul.
 * Differential test: tests/simulator/test_sandbox.py, tests/simulator/test_sandbox_attacks.py.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

/* The attribute guard of application models (simulator.sandbox.restricted.guarded_getattr)
 * for the reads it lets through: a str name that does not start with "_", is not one of
 * RestrictedPython's INSPECT_ATTRIBUTES nor format/format_map, read from an object that is
 * not a frame, code object or traceback (types no class can subclass, so the exact type
 * is the isinstance test). Every other call goes to the Python guard, which refuses or
 * answers it: its messages and its rules stay in one place. */
static PyObject *guard_reference = NULL; /* restricted.guarded_getattr */
static PyObject *guard_inspect = NULL;   /* INSPECT_ATTRIBUTES, a frozenset */

static int
guard_passes(PyObject *obj, PyObject *name)
{
    if (!PyUnicode_CheckExact(name) || PyUnicode_GET_LENGTH(name) == 0)
        return 0;
    Py_UCS4 first = PyUnicode_READ_CHAR(name, 0);
    if (first == '_')
        return 0;
    PyTypeObject *type = Py_TYPE(obj);
    if (type == &PyFrame_Type || type == &PyCode_Type || type == &PyTraceBack_Type)
        return 0;
    if (first == 'f' && (PyUnicode_CompareWithASCIIString(name, "format") == 0 ||
                         PyUnicode_CompareWithASCIIString(name, "format_map") == 0))
        return 0;
    return PySet_Contains(guard_inspect, name) == 0 ? 1 : 0; /* -1: the Python guard says */
}

static PyObject *
guarded_getattr(PyObject *module, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (guard_reference == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_attribute_guard was not called");
        return NULL;
    }
    if (kwnames == NULL && (nargs == 2 || nargs == 3) && guard_passes(args[0], args[1])) {
        PyObject *value = PyObject_GetAttr(args[0], args[1]);
        if (value == NULL && nargs == 3 && PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            return Py_NewRef(args[2]);
        }
        return value;
    }
    PyErr_Clear(); /* guard_passes' set lookup cannot fail on a str, but be sure */
    return PyObject_Vectorcall(guard_reference, args, nargsf, kwnames);
}

static PyObject *
set_attribute_guard(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyFrozenSet_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "set_attribute_guard(guarded_getattr, frozenset)");
        return NULL;
    }
    Py_XSETREF(guard_reference, Py_NewRef(args[0]));
    Py_XSETREF(guard_inspect, Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

/* The multiplication guard of application models (simulator.sandbox.restricted.guarded_mul)
 * for products of ints and floats of those exact types (no subclass's methods to ask): a
 * product with a float, or of two ints whose bits add up to at most MAX_INT_BITS, is made
 * here; every other call goes to the Python guard, which makes or refuses it with its
 * message. */
static PyObject *mul_reference = NULL; /* restricted.guarded_mul */
static size_t mul_max_bits = 0;        /* restricted.MAX_INT_BITS */

static PyObject *
guarded_mul(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (mul_reference == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_multiply_guard was not called");
        return NULL;
    }
    if (nargs == 2) {
        PyObject *left = args[0], *right = args[1];
        int left_int = PyLong_CheckExact(left), right_int = PyLong_CheckExact(right);
        if ((left_int || PyFloat_CheckExact(left)) && (right_int || PyFloat_CheckExact(right))) {
            if (!(left_int && right_int)) /* a float: not the ints the guard bounds */
                return PyNumber_Multiply(left, right);
            /* int.bit_length's count: the bits of the magnitude */
            size_t left_bits = _PyLong_NumBits(left), right_bits = _PyLong_NumBits(right);
            if (left_bits != (size_t)-1 && right_bits != (size_t)-1 &&
                left_bits + right_bits <= mul_max_bits)
                return PyNumber_Multiply(left, right);
            PyErr_Clear(); /* a count past size_t, or over the limit: the guard refuses it */
        }
    }
    return PyObject_Vectorcall(mul_reference, args, nargs, NULL);
}

static PyObject *
set_multiply_guard(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyLong_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "set_multiply_guard(guarded_mul, max_int_bits)");
        return NULL;
    }
    size_t bits = PyLong_AsSize_t(args[1]);
    if (bits == (size_t)-1 && PyErr_Occurred())
        return NULL;
    Py_XSETREF(mul_reference, Py_NewRef(args[0]));
    mul_max_bits = bits;
    Py_RETURN_NONE;
}
