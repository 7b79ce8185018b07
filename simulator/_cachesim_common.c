/* simulator._cachesim: what the cache core and its two Python types share: a cache's sets
 * (Level) and their look-up and LRU choice, an address's line, a stream item's unpacking and a
 * bulk buffer's items.
 *
 * Python reference: simulator/models/coherence.py PythonCacheTree and simulator/models/cache.py
 * _PythonCore (each helper names the step it mirrors).
 * Differential test: tests/simulator/models/test_coherence_speedups.py and
 * tests/simulator/models/test_cache_speedups.py.
 *
 * Compiled as one translation unit: simulator/_cachesim.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_cachesim.h"

/* -- a cache's sets ------------------------------------------------------------------------- */

typedef struct {
    uint64_t *tags;   /* sets x ways line numbers */
    uint64_t *meta;   /* sets x ways: LRU stamp << 1 | dirty */
    uint32_t *fill;   /* valid slots per set */
    uint64_t sets;
    uint32_t ways;
    int sets_pow2; /* sets is a power of two: the set is line & (sets - 1) */
} Level;

static inline uint64_t
set_of(const Level *level, uint64_t line)
{
    return level->sets_pow2 ? (line & (level->sets - 1)) : (line % level->sets);
}

/* Return the slot index of `line` in its set, or -1. */
static inline Py_ssize_t
find(const Level *level, uint64_t set, uint64_t line)
{
    const uint64_t *tags = level->tags + set * level->ways;
    uint32_t count = level->fill[set];
    /* no early exit: where a line sits in its set is random, so a branch on the comparison
     * would be mispredicted, and the loop is short */
    Py_ssize_t found = -1;
    for (uint32_t slot = 0; slot < count; slot++) {
        found = tags[slot] == line ? (Py_ssize_t)slot : found;
    }
    return found;
}

/* Return the least recently used of a full set's `count` slots (the oldest stamp in `meta`);
 * written so that compilers use conditional moves, as the branch on a comparison of stamps
 * is taken at random. */
static inline uint32_t
lru_slot(const uint64_t *meta, uint32_t count)
{
    uint32_t slot = 0;
    uint64_t oldest = meta[0];
    for (uint32_t other = 1; other < count; other++) {
        uint64_t stamp = meta[other];
        int older = stamp < oldest;
        oldest = older ? stamp : oldest;
        slot = older ? other : slot;
    }
    return slot;
}

/* -- addresses ------------------------------------------------------------------------------ */

/* Raise cache.py's ValueError(ERR_ADDRESS.format(value=address)); the message lives there. */
static void
address_error(PyObject *address)
{
    static PyObject *template = NULL; /* simulator.models.cache.ERR_ADDRESS, looked up once */
    if (template == NULL) {
        PyObject *module = PyImport_ImportModule("simulator.models.cache");
        if (module == NULL) {
            return;
        }
        template = PyObject_GetAttrString(module, "ERR_ADDRESS");
        Py_DECREF(module);
        if (template == NULL) {
            return;
        }
    }
    PyObject *format = PyObject_GetAttrString(template, "format");
    if (format == NULL) {
        return;
    }
    PyObject *empty = PyTuple_New(0);
    PyObject *kwargs = Py_BuildValue("{s:O}", "value", address);
    PyObject *message = NULL;
    if (empty != NULL && kwargs != NULL) {
        message = PyObject_Call(format, empty, kwargs);
    }
    Py_DECREF(format);
    Py_XDECREF(empty);
    Py_XDECREF(kwargs);
    if (message != NULL) {
        PyErr_SetObject(PyExc_ValueError, message);
        Py_DECREF(message);
    }
}

enum { LINE_NEGATIVE = 2, LINE_FITS = 1, LINE_TOO_LARGE = 0, LINE_ERROR = -1 };

/* Set *line to address // line_bytes for an int `address`; return LINE_FITS, LINE_NEGATIVE,
 * LINE_TOO_LARGE (a line number of 2**64 or more) or LINE_ERROR with an error set. */
static int
line_of_value(uint64_t line_bytes, int line_shift, PyObject *address, uint64_t *line)
{
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(address, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return LINE_ERROR;
    }
    if (overflow < 0 || (!overflow && value < 0)) {
        return LINE_NEGATIVE;
    }
    uint64_t bytes = (uint64_t)value;
    if (overflow) {
        bytes = PyLong_AsUnsignedLongLong(address);
        if (bytes == (uint64_t)-1 && PyErr_Occurred()) {
            /* 2**64 or more: the line number may still fit */
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
                return LINE_ERROR;
            }
            PyErr_Clear();
            PyObject *size = PyLong_FromUnsignedLongLong(line_bytes);
            if (size == NULL) {
                return LINE_ERROR;
            }
            PyObject *number = PyNumber_FloorDivide(address, size);
            Py_DECREF(size);
            if (number == NULL) {
                return LINE_ERROR;
            }
            *line = PyLong_AsUnsignedLongLong(number);
            Py_DECREF(number);
            if (*line == (uint64_t)-1 && PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    return LINE_ERROR;
                }
                PyErr_Clear();
                return LINE_TOO_LARGE;
            }
            return LINE_FITS;
        }
    }
    *line = line_shift >= 0 ? bytes >> line_shift : bytes / line_bytes;
    return LINE_FITS;
}

/* -- stream items and buffers -------------------------------------------------------------- */

/* Unpack `item` into two new references as `a, b = item` does, with CPython's messages. */
static int
unpack_pair(PyObject *item, PyObject **first, PyObject **second)
{
    if (PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) == 2) {
        *first = Py_NewRef(PyTuple_GET_ITEM(item, 0));
        *second = Py_NewRef(PyTuple_GET_ITEM(item, 1));
        return 0;
    }
    PyObject *iterator = PyObject_GetIter(item);
    if (iterator == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) && Py_TYPE(item)->tp_iter == NULL &&
            !PySequence_Check(item)) {
            PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %.200s object",
                         Py_TYPE(item)->tp_name);
        }
        return -1;
    }
    PyObject *values[2] = {NULL, NULL};
    int got = 0;
    for (; got < 2; got++) {
        values[got] = PyIter_Next(iterator);
        if (values[got] == NULL) {
            break;
        }
    }
    if (got < 2) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected 2, got %d)", got);
        }
        goto error;
    }
    PyObject *extra = PyIter_Next(iterator);
    if (extra != NULL) {
        Py_DECREF(extra);
        PyErr_SetString(PyExc_ValueError, "too many values to unpack (expected 2)");
        goto error;
    }
    if (PyErr_Occurred()) {
        goto error;
    }
    Py_DECREF(iterator);
    *first = values[0];
    *second = values[1];
    return 0;

error:
    Py_XDECREF(values[0]);
    Py_XDECREF(values[1]);
    Py_DECREF(iterator);
    return -1;
}

/* How a bulk buffer's items read: their size and whether they are signed. */
typedef struct {
    Py_buffer view;
    int is_signed;
} Items;

static int
items_open(PyObject *object, const char *name, Items *items)
{
    if (PyObject_GetBuffer(object, &items->view, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0) {
        return -1;
    }
    const char *format = items->view.format;
    if (format[0] == '@') {
        format++;
    }
    Py_ssize_t size = items->view.itemsize;
    if (items->view.ndim != 1 || format[0] == '\0' || format[1] != '\0' ||
        strchr("bBhHiIlLqQnN?", format[0]) == NULL ||
        !(size == 1 || size == 2 || size == 4 || size == 8)) {
        PyErr_Format(PyExc_TypeError,
                     "%s must be a one-dimensional buffer of native integers, got format %s "
                     "with %d dimensions",
                     name, items->view.format, items->view.ndim);
        PyBuffer_Release(&items->view);
        return -1;
    }
    items->is_signed = strchr("bhilqn", format[0]) != NULL;
    return 0;
}

/* Item `index` of a buffer opened by items_open, as an unsigned value; *negative is set when a
 * signed item is below zero (its value is then that signed item, cast). */
static inline uint64_t
item_at(const Items *items, Py_ssize_t index, int *negative)
{
    const char *at = (const char *)items->view.buf + index * items->view.strides[0];
    int64_t value;
    switch (items->view.itemsize) {
    case 1:
        if (!items->is_signed) {
            return *(const uint8_t *)at;
        }
        value = *(const int8_t *)at;
        break;
    case 2: {
        uint16_t raw;
        memcpy(&raw, at, 2);
        if (!items->is_signed) {
            return raw;
        }
        value = (int16_t)raw;
        break;
    }
    case 4: {
        uint32_t raw;
        memcpy(&raw, at, 4);
        if (!items->is_signed) {
            return raw;
        }
        value = (int32_t)raw;
        break;
    }
    default: {
        uint64_t raw;
        memcpy(&raw, at, 8);
        if (!items->is_signed) {
            return raw;
        }
        value = (int64_t)raw;
        break;
    }
    }
    *negative = value < 0;
    return (uint64_t)value;
}

static PyObject *
counter_list(const uint64_t *values, Py_ssize_t count)
{
    PyObject *list = PyList_New(count);
    if (list == NULL) {
        return NULL;
    }
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *value = PyLong_FromUnsignedLongLong(values[index]);
        if (value == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, index, value);
    }
    return list;
}
