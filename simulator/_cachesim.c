/* The cache simulators' cores in C: `Hierarchy`, one chain of inclusive, write-back,
 * write-allocate LRU caches (simulator/models/cache.py), and `Tree`, a tree of such caches with
 * an optional MESI directory (simulator/models/coherence.py; its section starts at "The cache
 * tree" below). What follows up to there is about `Hierarchy`.
 *
 * simulator/models/cache.py holds the reference implementation of the same core in Python
 * (_PythonCore; the module's docstring states the policies) and uses this one when it has been
 * built (python -m simulator.build_speedups, which ./studio setup runs) unless
 * PARASIM_PURE_PYTHON is set. Both give the same served levels, the same counters and the same
 * contents after any sequence of calls; tests/simulator/models/test_cache_speedups.py runs them
 * side by side on seeded streams.
 *
 * Layout: per level, every set is `ways` slots of a line tag (the line number) and a meta word,
 * LRU stamp << 1 | dirty; the first fill[set] slots of a set are valid. The Python core keeps a
 * set as an OrderedDict, least recently used first; here the stamp replaces that order: a hit
 * or an insertion takes the next value of one clock shared by every level (the dict's
 * move_to_end / insertion), a write or a write-back only sets the dirty bit (the dict's
 * assignment to an existing key), and the victim is the valid slot with the smallest stamp
 * (popitem(last=False)). Stamps are unique, so comparing meta words compares stamps (63 bits:
 * they never wrap). Removing a line moves the set's last valid slot into the hole: slot order
 * means nothing.
 *
 * The one difference: line numbers are 64-bit here, so an address whose line number
 * (address // line_bytes) is 2**64 or more raises OverflowError (ERR_LINE_RANGE) where the
 * Python core takes any int.
 */
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

typedef struct {
    uint64_t *tags;   /* sets x ways line numbers */
    uint64_t *meta;   /* sets x ways: LRU stamp << 1 | dirty */
    uint32_t *fill;   /* valid slots per set */
    uint64_t sets;
    uint32_t ways;
    int sets_pow2; /* sets is a power of two: the set is line & (sets - 1) */
} Level;

typedef struct {
    PyObject_HEAD
    Py_ssize_t depth; /* 0 until __init__ has run */
    Level *levels;
    uint64_t line_bytes;
    int line_shift; /* log2(line_bytes) when a power of two, else -1 */
    uint64_t clock;
    int busy; /* a method that may run Python code is under way: __init__ must wait */
    uint64_t *served; /* depth + 1: accesses served by each level, memory last */
    uint64_t *evictions;
    uint64_t *writebacks;
    uint64_t *back_invalidations;
} Hierarchy;

/* -- the simulation ------------------------------------------------------------------------- */

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

/* An evicted line leaves level `index`: back-invalidate its inner copies, merging a dirty one,
 * and write it back into the next level (or memory) if dirty (the reference's `_evict`). */
static void
evict(Hierarchy *self, Py_ssize_t index, uint64_t victim, int dirty)
{
    for (Py_ssize_t inner = 0; inner < index; inner++) {
        Level *level = &self->levels[inner];
        uint64_t set = set_of(level, victim);
        Py_ssize_t slot = find(level, set, victim);
        if (slot < 0) {
            continue;
        }
        self->back_invalidations[inner]++;
        uint64_t base = set * level->ways;
        if (level->meta[base + (uint64_t)slot] & 1) {
            self->writebacks[inner]++;
            dirty = 1;
        }
        uint32_t last = --level->fill[set];
        level->tags[base + (uint64_t)slot] = level->tags[base + last];
        level->meta[base + (uint64_t)slot] = level->meta[base + last];
    }
    if (dirty) {
        self->writebacks[index]++;
        if (index + 1 < self->depth) {
            /* Inclusion guarantees the outer level holds the line; the write-back marks it
             * modified without touching its LRU position. */
            Level *outer = &self->levels[index + 1];
            uint64_t set = set_of(outer, victim);
            Py_ssize_t slot = find(outer, set, victim);
            if (slot >= 0) {
                outer->meta[set * outer->ways + (uint64_t)slot] |= 1;
            }
        }
    }
}

/* Return the least recently used of a full set's `count` slots (the oldest stamp in `meta`);
 * written so that compilers use conditional moves, as the branch on a comparison of stamps
 * is taken at random. The chain and the tree evict with it. */
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

/* Install `line` (clean, most recently used) at level `index`, evicting its set's least
 * recently used line when the set is full; return the line's meta word. */
static uint64_t *
install(Hierarchy *self, Py_ssize_t index, uint64_t line)
{
    Level *level = &self->levels[index];
    uint64_t set = set_of(level, line);
    uint64_t base = set * level->ways;
    uint64_t *tags = level->tags + base;
    uint64_t *meta = level->meta + base;
    uint32_t count = level->fill[set];
    uint32_t slot;
    if (count >= level->ways) {
        slot = lru_slot(meta, count);
        self->evictions[index]++;
        int dirty = (int)(meta[slot] & 1);
        if (dirty || index) {
            evict(self, index, tags[slot], dirty); /* touches other levels only */
        }
    }
    else {
        slot = count;
        level->fill[set] = count + 1;
    }
    tags[slot] = line;
    meta[slot] = ++self->clock << 1;
    return &meta[slot];
}

/* One read of `line`; return the serving level (depth = memory) and set *innermost to the
 * line's meta word in level 0, where a write then sets the dirty bit (the reference marks the
 * innermost copy after the fills, and so can be told late whether the access writes). */
static inline Py_ssize_t
read_line(Hierarchy *self, uint64_t line, uint64_t **innermost)
{
    Py_ssize_t depth = self->depth;
    Py_ssize_t served = depth;
    uint64_t *meta = NULL;
    for (Py_ssize_t index = 0; index < depth; index++) {
        Level *level = &self->levels[index];
        uint64_t set = set_of(level, line);
        Py_ssize_t slot = find(level, set, line);
        if (slot >= 0) {
            meta = level->meta + set * level->ways + slot;
            *meta = (++self->clock << 1) | (*meta & 1);
            served = index;
            break;
        }
    }
    self->served[served]++;
    /* Fill the levels that missed, outermost first, so an outer eviction's back-invalidation
     * never removes the line being installed. */
    for (Py_ssize_t index = served - 1; index >= 0; index--) {
        meta = install(self, index, line);
    }
    *innermost = meta;
    return served;
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

static int
line_of_int(Hierarchy *self, PyObject *address, uint64_t *line)
{
    return line_of_value(self->line_bytes, self->line_shift, address, line);
}

/* The line of an access's address, a non-negative int that is not a bool (else ERR_ADDRESS);
 * 0 on success. */
static int
access_line(Hierarchy *self, PyObject *address, uint64_t *line)
{
    int found = LINE_NEGATIVE;
    if (PyLong_Check(address) && !PyBool_Check(address)) {
        found = line_of_int(self, address, line);
    }
    switch (found) {
    case LINE_FITS:
        return 0;
    case LINE_NEGATIVE:
        address_error(address);
        return -1;
    case LINE_TOO_LARGE:
        PyErr_Format(PyExc_OverflowError, ERR_LINE_RANGE, address);
        return -1;
    default:
        return -1;
    }
}

/* Finish an access performed by read_line as a write when `is_write` is true; 0 on success.
 * The truth of an object of another type than bool, int or None may run Python code that uses
 * this hierarchy, so the line is then looked up again rather than through `innermost`. */
static int
finish_access(Hierarchy *self, uint64_t line, uint64_t *innermost, PyObject *is_write)
{
    if (is_write == Py_True || is_write == Py_False || is_write == Py_None ||
        PyLong_CheckExact(is_write)) {
        if (PyObject_IsTrue(is_write)) {
            *innermost |= 1;
        }
        return 0;
    }
    int write = PyObject_IsTrue(is_write);
    if (write <= 0) {
        return write;
    }
    Level *level = &self->levels[0];
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot >= 0) {
        level->meta[set * level->ways + (uint64_t)slot] |= 1;
    }
    return 0;
}

/* -- the type ------------------------------------------------------------------------------- */

static void
free_state(Hierarchy *self)
{
    if (self->levels != NULL) {
        for (Py_ssize_t index = 0; index < self->depth; index++) {
            PyMem_Free(self->levels[index].tags);
            PyMem_Free(self->levels[index].meta);
            PyMem_Free(self->levels[index].fill);
        }
        PyMem_Free(self->levels);
    }
    PyMem_Free(self->served);
    PyMem_Free(self->evictions);
    PyMem_Free(self->writebacks);
    PyMem_Free(self->back_invalidations);
    self->levels = NULL;
    self->served = self->evictions = self->writebacks = self->back_invalidations = NULL;
    self->depth = 0;
    self->clock = 0;
}

static void
Hierarchy_dealloc(Hierarchy *self)
{
    free_state(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Read one positive int of a level tuple into *out; 0 on success. */
static int
positive(PyObject *item, uint64_t limit, uint64_t *out)
{
    if (!PyLong_Check(item) || PyBool_Check(item)) {
        PyErr_SetString(PyExc_ValueError, "sets, ways and line_bytes must be positive integers");
        return -1;
    }
    unsigned long long value = PyLong_AsUnsignedLongLong(item);
    if (value == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        value = 0;
    }
    if (value == 0 || value > limit) {
        PyErr_Format(PyExc_ValueError,
                     "sets, ways and line_bytes must be positive integers within %llu, got %R",
                     (unsigned long long)limit, item);
        return -1;
    }
    *out = value;
    return 0;
}

static int
Hierarchy_init(Hierarchy *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"levels", NULL};
    PyObject *levels_arg;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Hierarchy", keywords, &levels_arg)) {
        return -1;
    }
    PyObject *levels = PySequence_Fast(levels_arg, "levels must be a sequence of "
                                                   "(sets, ways, line_bytes)");
    if (levels == NULL) {
        return -1;
    }
    Py_ssize_t depth = PySequence_Fast_GET_SIZE(levels);
    if (depth == 0) {
        PyErr_SetString(PyExc_ValueError, "a cache hierarchy needs at least one level");
        Py_DECREF(levels);
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "a Hierarchy cannot be re-initialised while it runs");
        Py_DECREF(levels);
        return -1;
    }
    free_state(self);
    self->levels = PyMem_Calloc((size_t)depth, sizeof(Level));
    self->served = PyMem_Calloc((size_t)depth + 1, sizeof(uint64_t));
    self->evictions = PyMem_Calloc((size_t)depth, sizeof(uint64_t));
    self->writebacks = PyMem_Calloc((size_t)depth, sizeof(uint64_t));
    self->back_invalidations = PyMem_Calloc((size_t)depth, sizeof(uint64_t));
    if (self->levels == NULL || self->served == NULL || self->evictions == NULL ||
        self->writebacks == NULL || self->back_invalidations == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    self->depth = depth; /* free_state frees the levels allocated so far */
    for (Py_ssize_t index = 0; index < depth; index++) {
        PyObject *spec = PySequence_Fast_GET_ITEM(levels, index);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 3) {
            PyErr_SetString(PyExc_TypeError, "each level must be a (sets, ways, line_bytes) tuple");
            goto error;
        }
        uint64_t sets, ways, line_bytes;
        if (positive(PyTuple_GET_ITEM(spec, 0), (uint64_t)PY_SSIZE_T_MAX, &sets) < 0 ||
            positive(PyTuple_GET_ITEM(spec, 1), UINT32_MAX, &ways) < 0 ||
            positive(PyTuple_GET_ITEM(spec, 2), UINT64_MAX, &line_bytes) < 0) {
            goto error;
        }
        if (index == 0) {
            self->line_bytes = line_bytes;
        }
        else if (line_bytes != self->line_bytes) {
            PyErr_SetString(PyExc_ValueError, "all cache levels must share one line size");
            goto error;
        }
        if (sets > (uint64_t)PY_SSIZE_T_MAX / sizeof(uint64_t) / ways) {
            PyErr_NoMemory();
            goto error;
        }
        Level *level = &self->levels[index];
        level->sets = sets;
        level->ways = (uint32_t)ways;
        level->sets_pow2 = (sets & (sets - 1)) == 0;
        level->tags = PyMem_Malloc((size_t)(sets * ways) * sizeof(uint64_t));
        level->meta = PyMem_Malloc((size_t)(sets * ways) * sizeof(uint64_t));
        level->fill = PyMem_Calloc((size_t)sets, sizeof(uint32_t));
        if (level->tags == NULL || level->meta == NULL || level->fill == NULL) {
            PyErr_NoMemory();
            goto error;
        }
    }
    self->line_shift = -1;
    for (int shift = 0; shift < 64; shift++) {
        if (self->line_bytes == (uint64_t)1 << shift) {
            self->line_shift = shift;
            break;
        }
    }
    Py_DECREF(levels);
    return 0;

error:
    free_state(self);
    Py_DECREF(levels);
    return -1;
}

static int
check_ready(Hierarchy *self)
{
    if (self->depth == 0) {
        PyErr_SetString(PyExc_RuntimeError, ERR_NOT_INITIALISED);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(access_doc,
"access(address, is_write=False) -> int\n\n"
"Perform one access; return the index of the level that served it (depth = memory).");

static PyObject *
Hierarchy_access(Hierarchy *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *address = nargs > 0 ? args[0] : NULL;
    PyObject *is_write = nargs > 1 ? args[1] : Py_False;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError, "access() takes at most 2 arguments (%zd given)", nargs);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        PyObject *value = args[nargs + k];
        if (nargs < 1 && PyUnicode_CompareWithASCIIString(name, "address") == 0) {
            address = value;
        }
        else if (nargs < 2 && PyUnicode_CompareWithASCIIString(name, "is_write") == 0) {
            is_write = value;
        }
        else {
            PyErr_Format(PyExc_TypeError, "access() got an unexpected keyword argument %R", name);
            return NULL;
        }
    }
    if (address == NULL) {
        PyErr_SetString(PyExc_TypeError, "access() missing required argument 'address'");
        return NULL;
    }
    if (check_ready(self) < 0) {
        return NULL;
    }
    uint64_t line, *innermost;
    if (access_line(self, address, &line) < 0) {
        return NULL;
    }
    Py_ssize_t served = read_line(self, line, &innermost);
    self->busy++;
    int failed = finish_access(self, line, innermost, is_write);
    self->busy--;
    if (failed) {
        return NULL;
    }
    return PyLong_FromSsize_t(served);
}

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

PyDoc_STRVAR(run_pairs_doc,
"run_pairs(stream) -> None\n\n"
"Perform every (address, is_write) access of an iterable; the accesses before an error count.");

static PyObject *
Hierarchy_run_pairs(Hierarchy *self, PyObject *stream)
{
    if (check_ready(self) < 0) {
        return NULL;
    }
    PyObject *iterator = PyObject_GetIter(stream);
    if (iterator == NULL) {
        return NULL;
    }
    self->busy++;
    PyObject *item;
    uint64_t done = 0;
    while ((item = PyIter_Next(iterator)) != NULL) {
        PyObject *address, *is_write;
        int failed = unpack_pair(item, &address, &is_write);
        Py_DECREF(item);
        if (failed) {
            break;
        }
        uint64_t line, *innermost;
        failed = access_line(self, address, &line);
        if (!failed) {
            Py_ssize_t served = read_line(self, line, &innermost);
            failed = finish_access(self, line, innermost, is_write);
            /* The reference's L1 fast path (an exact int hitting level 0) reads is_write before
             * it counts the hit; its other accesses are counted before. */
            if (failed && served == 0 && PyLong_CheckExact(address)) {
                self->served[0]--;
            }
        }
        Py_DECREF(address);
        Py_DECREF(is_write);
        if (failed || ((++done & SIGNAL_CHECK_MASK) == 0 && PyErr_CheckSignals() < 0)) {
            break;
        }
    }
    self->busy--;
    Py_DECREF(iterator);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_RETURN_NONE;
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

PyDoc_STRVAR(run_buffers_doc,
"run_buffers(addresses, writes=None) -> None\n\n"
"Perform the accesses of two one-dimensional integer buffers of one length (array('Q'),\n"
"bytes, NumPy arrays): address i, written when writes[i] is non-zero (None: all reads).\n"
"No Python object is made per access; the accesses before an error count.");

static PyObject *
Hierarchy_run_buffers(Hierarchy *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"addresses", "writes", NULL};
    PyObject *addresses_arg, *writes_arg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:run_buffers", keywords, &addresses_arg,
                                     &writes_arg)) {
        return NULL;
    }
    if (check_ready(self) < 0) {
        return NULL;
    }
    Items addresses, writes;
    int with_writes = writes_arg != Py_None;
    if (items_open(addresses_arg, "addresses", &addresses) < 0) {
        return NULL;
    }
    if (with_writes && items_open(writes_arg, "writes", &writes) < 0) {
        PyBuffer_Release(&addresses.view);
        return NULL;
    }
    Py_ssize_t count = addresses.view.shape[0];
    PyObject *result = NULL;
    self->busy++; /* a signal handler may run Python code */
    if (with_writes && writes.view.shape[0] != count) {
        PyErr_Format(PyExc_ValueError,
                     "addresses and writes must have the same length, got %zd and %zd", count,
                     writes.view.shape[0]);
        goto done;
    }
    int line_shift = self->line_shift;
    uint64_t line_bytes = self->line_bytes;
    for (Py_ssize_t index = 0; index < count; index++) {
        int negative = 0;
        uint64_t address = item_at(&addresses, index, &negative);
        if (negative) {
            PyObject *value = PyLong_FromLongLong((long long)(int64_t)address);
            if (value != NULL) {
                address_error(value);
                Py_DECREF(value);
            }
            goto done;
        }
        uint64_t line = line_shift >= 0 ? address >> line_shift : address / line_bytes;
        uint64_t *innermost;
        read_line(self, line, &innermost);
        if (with_writes) {
            int ignored;
            if (item_at(&writes, index, &ignored)) {
                *innermost |= 1;
            }
        }
        if (((uint64_t)index & SIGNAL_CHECK_MASK) == SIGNAL_CHECK_MASK && PyErr_CheckSignals() < 0) {
            goto done;
        }
    }
    result = Py_NewRef(Py_None);

done:
    self->busy--;
    PyBuffer_Release(&addresses.view);
    if (with_writes) {
        PyBuffer_Release(&writes.view);
    }
    return result;
}

/* The level index of contains / is_dirty, with a list's rules (negative counts from the end). */
static int
level_index(Hierarchy *self, PyObject *level, Py_ssize_t *index)
{
    if (!PyIndex_Check(level)) {
        PyErr_Format(PyExc_TypeError, "list indices must be integers or slices, not %.200s",
                     Py_TYPE(level)->tp_name);
        return -1;
    }
    Py_ssize_t value = PyNumber_AsSsize_t(level, PyExc_IndexError);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (value < 0) {
        value += self->depth;
    }
    if (value < 0 || value >= self->depth) {
        PyErr_SetString(PyExc_IndexError, "list index out of range");
        return -1;
    }
    *index = value;
    return 0;
}

/* The meta word of the line of `address` at `level`: 1 and *meta when present, 0 when not,
 * -1 on error. A negative address or one beyond 64-bit line numbers is never present. */
static int
lookup(Hierarchy *self, PyObject *const *args, Py_ssize_t nargs, const char *name, uint64_t *meta)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly 2 arguments (%zd given)", name, nargs);
        return -1;
    }
    if (check_ready(self) < 0) {
        return -1;
    }
    Py_ssize_t index;
    if (level_index(self, args[0], &index) < 0) {
        return -1;
    }
    PyObject *address = args[1];
    if (!PyLong_Check(address)) {
        PyErr_Format(PyExc_TypeError, "addresses must be integers, got %.200s",
                     Py_TYPE(address)->tp_name);
        return -1;
    }
    uint64_t line;
    int found = line_of_int(self, address, &line);
    if (found != LINE_FITS) {
        return found == LINE_ERROR ? -1 : 0;
    }
    Level *level = &self->levels[index];
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot < 0) {
        return 0;
    }
    *meta = level->meta[set * level->ways + (uint64_t)slot];
    return 1;
}

PyDoc_STRVAR(contains_doc,
"contains(level, address) -> bool\n\n"
"Return whether the line holding `address` is present at level index `level`.");

static PyObject *
Hierarchy_contains(Hierarchy *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t meta;
    int found = lookup(self, args, nargs, "contains", &meta);
    if (found < 0) {
        return NULL;
    }
    return PyBool_FromLong(found);
}

PyDoc_STRVAR(is_dirty_doc,
"is_dirty(level, address) -> bool\n\n"
"Return whether level `level` holds the line of `address` in the modified state.");

static PyObject *
Hierarchy_is_dirty(Hierarchy *self, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t meta = 0;
    int found = lookup(self, args, nargs, "is_dirty", &meta);
    if (found < 0) {
        return NULL;
    }
    return PyBool_FromLong(found && (meta & 1));
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

PyDoc_STRVAR(counters_doc,
"counters() -> (served, evictions, writebacks, back_invalidations)\n\n"
"Return the raw counters as lists: accesses served per level with memory last, then per level\n"
"the lines evicted, the dirty lines written back and the lines back-invalidated.");

static PyObject *
Hierarchy_counters(Hierarchy *self, PyObject *Py_UNUSED(ignored))
{
    if (check_ready(self) < 0) {
        return NULL;
    }
    Py_ssize_t depth = self->depth;
    PyObject *served = counter_list(self->served, depth + 1);
    PyObject *evictions = counter_list(self->evictions, depth);
    PyObject *writebacks = counter_list(self->writebacks, depth);
    PyObject *back_invalidations = counter_list(self->back_invalidations, depth);
    PyObject *result = NULL;
    if (served != NULL && evictions != NULL && writebacks != NULL && back_invalidations != NULL) {
        result = PyTuple_Pack(4, served, evictions, writebacks, back_invalidations);
    }
    Py_XDECREF(served);
    Py_XDECREF(evictions);
    Py_XDECREF(writebacks);
    Py_XDECREF(back_invalidations);
    return result;
}

static PyMethodDef Hierarchy_methods[] = {
    {"access", (PyCFunction)(void (*)(void))Hierarchy_access, METH_FASTCALL | METH_KEYWORDS,
     access_doc},
    {"run_pairs", (PyCFunction)Hierarchy_run_pairs, METH_O, run_pairs_doc},
    {"run_buffers", (PyCFunction)(void (*)(void))Hierarchy_run_buffers,
     METH_VARARGS | METH_KEYWORDS, run_buffers_doc},
    {"contains", (PyCFunction)(void (*)(void))Hierarchy_contains, METH_FASTCALL, contains_doc},
    {"is_dirty", (PyCFunction)(void (*)(void))Hierarchy_is_dirty, METH_FASTCALL, is_dirty_doc},
    {"counters", (PyCFunction)Hierarchy_counters, METH_NOARGS, counters_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Hierarchy_doc,
"Hierarchy(levels)\n\n"
"Inclusive, write-back, write-allocate LRU caches; levels are (sets, ways, line_bytes) from the\n"
"core outwards, with one line size. simulator.models.cache.CacheHierarchy builds on it.");

static PyTypeObject Hierarchy_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "simulator._cachesim.Hierarchy",
    .tp_basicsize = sizeof(Hierarchy),
    .tp_dealloc = (destructor)Hierarchy_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = Hierarchy_doc,
    .tp_methods = Hierarchy_methods,
    .tp_init = (initproc)Hierarchy_init,
    .tp_new = PyType_GenericNew,
};

/* == The cache tree ========================================================================== */

/* simulator/models/coherence.py's PythonCacheTree is the reference (its module docstring states
 * every rule); each function below carries the name of the method it mirrors, and performs the
 * same steps in the same order, so that the counters, contents and directory agree after any
 * sequence of calls and the summed latency is bit-identical: every float is added in the order
 * the reference adds it (fp-contract is off so that no multiply-add is fused).
 *
 * Caches are Levels as above (one LRU clock for the whole tree). The directory is an
 * open-addressing hash table from line number to a MESI state and a bit set of the agents (the
 * directory cache's children) holding the line; the reference's {agent: state} dict always has
 * one holder in any state or several in S, which is what one state and a bit set say. Its
 * entries are the lines the agents' top caches hold, so the table never grows past twice their
 * capacity. Line transfers are a (caches + 1)^2 matrix (index 0 = memory) with the links in
 * order of first use. */

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define TREE_MAX_CACHES 1024 /* the link matrix grows with the square; beyond, Python runs */

enum { ROLE_PLAIN = 0, ROLE_AGENT_TOP = 1, ROLE_DIRECTORY_SIDE = 2 };
enum { STATE_NONE = 0, STATE_M = 1, STATE_E = 2, STATE_S = 3 };
enum {
    MSG_GET,
    MSG_GETX,
    MSG_UPGRADE,
    MSG_UPGRADE_ACK,
    MSG_PUTCLNX,
    MSG_PUTS,
    MSG_PUTX,
    MSG_PUTX_N,
    MSG_GET_FWD,
    MSG_DOWNGRADE_ACK,
    MSG_GETX_FWD,
    MSG_GETX_FWD_ACK,
    MSG_INVAL,
    MSG_INVAL_ACK,
    MSG_WRITE_BACK,
    MSG_CLEAN_WRITE_BACK,
    MESSAGE_KINDS
};
#define NO_TARGET (-2) /* _agent_copies(into=None): a dirty copy is forwarded, not written back */
#define MEMORY (-1)

typedef struct {
    uint64_t *slots;   /* capacity x stride: line, state (STATE_NONE: empty), holder bit set */
    uint64_t capacity; /* a power of two */
    uint64_t count;
    int shift; /* 64 - log2(capacity) */
    int words; /* of the bit set: bit k set when agent k holds the line */
    int stride;
} Directory;

/* One entry is contiguous, so a look-up costs the host one cache line. */
#define DIR_KEY(dir, at) ((dir)->slots[(uint64_t)(at) * (uint64_t)(dir)->stride])
#define DIR_STATE(dir, at) ((dir)->slots[(uint64_t)(at) * (uint64_t)(dir)->stride + 1])

typedef struct {
    PyObject_HEAD
    int count; /* caches; 0 when construction failed */
    Level *caches;
    double *latency;
    double *top_depth; /* latency from the agent's top cache down to this one, inclusive */
    int *parent;       /* MEMORY for a root */
    uint8_t *write_back;
    uint8_t *role;
    uint8_t *evict_duty;
    int *agent_of;   /* the agent's top cache, -1 outside agents */
    int *agent_slot; /* k when the cache is the directory's k-th child, else -1 */
    int *agent_tops; /* k -> top cache */
    int agents;
    int directory; /* -1 without one */
    int *child_start, *child_list;
    int *leaf_index; /* per cache: its index among the leaves, -1 */
    int leaves;
    int *path_start, *path_list;       /* per leaf index: the path, leaf first */
    int *private_start, *private_list; /* per leaf index: the private path */
    int *top_position;                 /* per leaf index: the agent's top in the path, -1 */
    double memory_latency;
    uint64_t line_bytes;
    int line_shift;
    uint32_t max_ways;
    uint64_t clock;
    uint64_t *accesses, *hits, *misses, *evictions, *writebacks, *invalidations;
    uint64_t *links;       /* [(from + 1) * (count + 1) + to + 1] */
    uint32_t *link_order;  /* links in order of first use */
    uint64_t links_used;
    uint64_t messages[MESSAGE_KINDS];
    uint64_t memory_reads, memory_writes, access_count;
    double latency_sum;
    Directory dir;
    int *stack;        /* count: caches still to visit in a walk */
    uint64_t *sharers; /* dir.words: a copy of a line's holders */
    uint64_t *order;   /* 2 x max_ways: a set's (stamp, line) pairs, flush order */
} Tree;

/* -- the directory -------------------------------------------------------------------------- */

static inline uint64_t
dir_home(const Directory *dir, uint64_t line)
{
    return (line * UINT64_C(0x9E3779B97F4A7C15)) >> dir->shift;
}

/* Return the slot of `line`'s entry, or -1. */
static inline Py_ssize_t
dir_find(const Directory *dir, uint64_t line)
{
    uint64_t mask = dir->capacity - 1;
    for (uint64_t at = dir_home(dir, line);; at = (at + 1) & mask) {
        if (DIR_STATE(dir, at) == STATE_NONE) {
            return -1;
        }
        if (DIR_KEY(dir, at) == line) {
            return (Py_ssize_t)at;
        }
    }
}

static inline uint64_t *
dir_mask(const Directory *dir, Py_ssize_t at)
{
    return dir->slots + (uint64_t)at * (uint64_t)dir->stride + 2;
}

/* Add an entry for `line`, which has none, with no holder yet; return its slot. */
static Py_ssize_t
dir_add(Directory *dir, uint64_t line, uint8_t state)
{
    uint64_t mask = dir->capacity - 1;
    uint64_t at = dir_home(dir, line);
    while (DIR_STATE(dir, at) != STATE_NONE) {
        at = (at + 1) & mask;
    }
    DIR_KEY(dir, at) = line;
    DIR_STATE(dir, at) = state;
    memset(dir_mask(dir, (Py_ssize_t)at), 0, (size_t)dir->words * sizeof(uint64_t));
    dir->count++;
    return (Py_ssize_t)at;
}

/* Remove the entry at `at` (linear probing with backward shifts: no tombstones). */
static void
dir_remove(Directory *dir, Py_ssize_t removed)
{
    uint64_t mask = dir->capacity - 1;
    uint64_t hole = (uint64_t)removed;
    uint64_t next = hole;
    dir->count--;
    for (;;) {
        next = (next + 1) & mask;
        if (DIR_STATE(dir, next) == STATE_NONE) {
            break;
        }
        uint64_t home = dir_home(dir, DIR_KEY(dir, next));
        /* the entry at `next` may fill the hole unless its home lies cyclically in (hole, next] */
        int stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (stays) {
            continue;
        }
        DIR_KEY(dir, hole) = DIR_KEY(dir, next);
        DIR_STATE(dir, hole) = DIR_STATE(dir, next);
        memcpy(dir_mask(dir, (Py_ssize_t)hole), dir_mask(dir, (Py_ssize_t)next),
               (size_t)dir->words * sizeof(uint64_t));
        hole = next;
    }
    DIR_STATE(dir, hole) = STATE_NONE;
}

static int
dir_holder_count(const Directory *dir, Py_ssize_t at)
{
    const uint64_t *mask = dir_mask(dir, at);
    int count = 0;
    for (int word = 0; word < dir->words; word++) {
        count += __builtin_popcountll(mask[word]);
    }
    return count;
}

/* Return the first agent (lowest slot) of a holder bit set, -1 when empty. */
static int
first_agent(const uint64_t *mask, int words)
{
    for (int word = 0; word < words; word++) {
        if (mask[word]) {
            return word * 64 + __builtin_ctzll(mask[word]);
        }
    }
    return -1;
}

/* `del holders[top]`, and the entry with it when no holder is left. */
static void
dir_drop_holder(Directory *dir, Py_ssize_t at, int slot)
{
    uint64_t *mask = dir_mask(dir, at);
    mask[slot / 64] &= ~((uint64_t)1 << (slot % 64));
    for (int word = 0; word < dir->words; word++) {
        if (mask[word]) {
            return;
        }
    }
    dir_remove(dir, at);
}

/* -- the simulation ------------------------------------------------------------------------- */

static inline void
tree_link(Tree *self, int from, int to)
{
    uint64_t index = (uint64_t)(from + 1) * (uint64_t)(self->count + 1) + (uint64_t)(to + 1);
    if (self->links[index]++ == 0) {
        self->link_order[self->links_used++] = (uint32_t)index;
    }
}

static inline Py_ssize_t
tree_find(Tree *self, int cache, uint64_t line, uint64_t **meta)
{
    Level *level = &self->caches[cache];
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot >= 0) {
        *meta = level->meta + set * level->ways + (uint64_t)slot;
    }
    return slot;
}

/* Remove `line` from `cache` when there; return -1 when absent, else whether it was dirty. */
static inline int
tree_remove(Tree *self, int cache, uint64_t line)
{
    Level *level = &self->caches[cache];
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot < 0) {
        return -1;
    }
    uint64_t base = set * level->ways;
    int dirty = (int)(level->meta[base + (uint64_t)slot] & 1);
    uint32_t last = --level->fill[set];
    level->tags[base + (uint64_t)slot] = level->tags[base + last];
    level->meta[base + (uint64_t)slot] = level->meta[base + last];
    return dirty;
}

static inline int
push_children(Tree *self, int cache, int height)
{
    for (int at = self->child_start[cache]; at < self->child_start[cache + 1]; at++) {
        self->stack[height++] = self->child_list[at];
    }
    return height;
}

/* _receive */
static void
tree_receive(Tree *self, int cache, uint64_t line)
{
    int current = cache;
    while (current >= 0) {
        if (self->write_back[current]) {
            uint64_t *meta;
            if (tree_find(self, current, line, &meta) >= 0) {
                *meta |= 1;
            }
            return;
        }
        self->writebacks[current]++;
        int parent = self->parent[current];
        tree_link(self, current, parent);
        current = parent;
    }
    self->memory_writes++;
}

/* _evict */
static void
tree_evict(Tree *self, int cache, uint64_t victim, int dirty)
{
    int role = self->role[cache];
    int height = 0;
    int walk_children = 1;
    if (role == ROLE_AGENT_TOP) {
        Py_ssize_t at = dir_find(&self->dir, victim);
        if (at >= 0) {
            dir_drop_holder(&self->dir, at, self->agent_slot[cache]);
        }
    }
    else if (role == ROLE_DIRECTORY_SIDE) {
        Py_ssize_t at = dir_find(&self->dir, victim);
        if (at >= 0) {
            int lost = dir_holder_count(&self->dir, at);
            self->messages[MSG_INVAL] += (uint64_t)lost;
            self->messages[MSG_INVAL_ACK] += (uint64_t)lost;
            if (cache == self->directory) {
                /* The directory is exact: only the agents it lists hold copies. */
                const uint64_t *mask = dir_mask(&self->dir, at);
                for (int agent = 0; agent < self->agents; agent++) {
                    if (mask[agent / 64] >> (agent % 64) & 1) {
                        self->stack[height++] = self->agent_tops[agent];
                    }
                }
                walk_children = 0;
            }
            dir_remove(&self->dir, at);
        }
        else if (cache == self->directory) {
            walk_children = 0;
        }
    }
    if (walk_children) {
        height = push_children(self, cache, height);
    }
    while (height > 0) {
        int inner = self->stack[--height];
        int was_dirty = tree_remove(self, inner, victim);
        if (was_dirty < 0) {
            continue;
        }
        self->invalidations[inner]++;
        if (was_dirty) {
            self->writebacks[inner]++;
            tree_link(self, inner, cache);
            dirty = 1;
        }
        height = push_children(self, inner, height);
    }
    if (role == ROLE_AGENT_TOP) {
        self->messages[dirty ? MSG_WRITE_BACK : MSG_CLEAN_WRITE_BACK]++;
    }
    if (dirty) {
        self->writebacks[cache]++;
        int parent = self->parent[cache];
        tree_link(self, cache, parent);
        if (parent < 0) {
            self->memory_writes++;
        }
        else {
            tree_receive(self, parent, victim);
        }
    }
}

/* _install_down: install `line` in path[start], ..., path[stop], outermost first. */
static void
tree_install_down(Tree *self, const int *path, int start, int stop, int source, uint64_t line,
                  int dirty_first)
{
    uint64_t dirty = dirty_first ? 1 : 0;
    for (int position = start; position >= stop; position--) {
        int cache = path[position];
        tree_link(self, source, cache);
        Level *level = &self->caches[cache];
        uint64_t set = set_of(level, line);
        uint64_t base = set * level->ways;
        uint64_t *tags = level->tags + base;
        uint64_t *meta = level->meta + base;
        uint32_t count = level->fill[set];
        uint32_t slot;
        if (count >= level->ways) {
            slot = lru_slot(meta, count);
            self->evictions[cache]++;
            int victim_dirty = (int)(meta[slot] & 1);
            /* A clean victim of a childless plain cache needs nothing more. The eviction
             * touches other caches only, so the slot is still the victim's afterwards. */
            if (victim_dirty || self->evict_duty[cache]) {
                tree_evict(self, cache, tags[slot], victim_dirty);
            }
        }
        else {
            slot = count;
            level->fill[set] = count + 1;
        }
        tags[slot] = line;
        meta[slot] = (++self->clock << 1) | dirty;
        dirty = 0;
        source = cache;
    }
}

/* _agent_copies: invalidate (or clean) every copy of `line` in the agent under `top`; return
 * whether one was dirty and set *probe to the owner's probe latency. */
static int
tree_agent_copies(Tree *self, int top, uint64_t line, int invalidate, int into, double *probe)
{
    int dirty = 0;
    double slowest = 0.0;
    int height = 0;
    self->stack[height++] = top;
    while (height > 0) {
        int cache = self->stack[--height];
        uint64_t *meta;
        if (tree_find(self, cache, line, &meta) < 0) {
            continue;
        }
        if (self->top_depth[cache] > slowest) { /* max(probe, top_depth[cache]) */
            slowest = self->top_depth[cache];
        }
        int was_dirty;
        if (invalidate) {
            self->invalidations[cache]++;
            was_dirty = tree_remove(self, cache, line);
        }
        else {
            was_dirty = (int)(*meta & 1);
            *meta &= ~(uint64_t)1;
        }
        if (was_dirty) {
            dirty = 1;
            if (into != NO_TARGET) {
                self->writebacks[cache]++;
                tree_link(self, cache, into);
            }
        }
        height = push_children(self, cache, height);
    }
    *probe = slowest;
    return dirty;
}

/* _invalidate_sharer */
static double
tree_invalidate_sharer(Tree *self, int top, uint64_t line)
{
    self->messages[MSG_INVAL]++;
    self->messages[MSG_INVAL_ACK]++;
    int directory = self->parent[top];
    double probe;
    if (tree_agent_copies(self, top, line, 1, directory, &probe)) {
        tree_receive(self, directory, line);
    }
    Py_ssize_t at = dir_find(&self->dir, line);
    if (at >= 0) {
        dir_drop_holder(&self->dir, at, self->agent_slot[top]);
    }
    return probe;
}

/* _upgrade */
static double
tree_upgrade(Tree *self, const int *path, int served, int top_position, uint64_t line)
{
    int agent = path[top_position];
    int agent_slot = self->agent_slot[agent];
    self->messages[MSG_UPGRADE]++;
    self->messages[MSG_UPGRADE_ACK]++;
    Py_ssize_t at = dir_find(&self->dir, line);
    int words = self->dir.words;
    memcpy(self->sharers, dir_mask(&self->dir, at), (size_t)words * sizeof(uint64_t));
    self->sharers[agent_slot / 64] &= ~((uint64_t)1 << (agent_slot % 64));
    for (int other = 0; other < self->agents; other++) {
        if (self->sharers[other / 64] >> (other % 64) & 1) {
            tree_invalidate_sharer(self, self->agent_tops[other], line);
        }
    }
    at = dir_find(&self->dir, line); /* the agent still holds it */
    uint64_t *mask = dir_mask(&self->dir, at);
    memset(mask, 0, (size_t)words * sizeof(uint64_t));
    mask[agent_slot / 64] = (uint64_t)1 << (agent_slot % 64);
    DIR_STATE(&self->dir, at) = STATE_M;
    double extra = 0.0;
    for (int position = served + 1; position <= top_position; position++) {
        extra += self->latency[path[position]];
    }
    return extra + self->latency[path[top_position + 1]];
}

/* _fetch_outwards */
static double
tree_fetch_outwards(Tree *self, const int *path, int length, int start, uint64_t line)
{
    double latency = 0.0;
    int served = length;
    for (int position = start + 1; position < length; position++) {
        int cache = path[position];
        self->accesses[cache]++;
        latency += self->latency[cache];
        uint64_t *meta;
        if (tree_find(self, cache, line, &meta) >= 0) {
            *meta = (++self->clock << 1) | (*meta & 1);
            self->hits[cache]++;
            served = position;
            break;
        }
        self->misses[cache]++;
    }
    int source;
    if (served == length) {
        latency += self->memory_latency;
        self->memory_reads++;
        source = MEMORY;
    }
    else {
        source = path[served];
    }
    tree_install_down(self, path, served - 1, start, source, line, 0);
    return latency;
}

/* _agent_miss */
static double
tree_agent_miss(Tree *self, const int *path, int length, int top_position, uint64_t line,
                int is_write)
{
    int directory = path[top_position + 1];
    int agent = path[top_position];
    self->accesses[directory]++;
    double latency = self->latency[directory];
    uint64_t *meta;
    if (tree_find(self, directory, line, &meta) >= 0) {
        *meta = (++self->clock << 1) | (*meta & 1);
        self->hits[directory]++;
    }
    else {
        /* Inclusion: a line D lacks is held by no agent; D fetches it like a plain cache. */
        self->misses[directory]++;
        latency += tree_fetch_outwards(self, path, length, top_position + 1, line);
    }
    int source = directory;
    int forwarded_dirty = 0;
    int reply;
    uint8_t state;
    self->messages[is_write ? MSG_GETX : MSG_GET]++;
    Py_ssize_t at = dir_find(&self->dir, line);
    if (at < 0) {
        reply = is_write ? MSG_PUTX : MSG_PUTCLNX;
        state = is_write ? STATE_M : STATE_E;
    }
    else if (!is_write) {
        int owner_state = DIR_STATE(&self->dir, at);
        int owner = self->agent_tops[first_agent(dir_mask(&self->dir, at), self->dir.words)];
        state = STATE_S;
        reply = MSG_PUTS;
        if (owner_state != STATE_S) {
            self->messages[MSG_GET_FWD]++;
            self->messages[MSG_DOWNGRADE_ACK]++;
            double probe;
            if (tree_agent_copies(self, owner, line, 0, directory, &probe)) {
                tree_receive(self, directory, line);
            }
            at = dir_find(&self->dir, line);
            DIR_STATE(&self->dir, at) = STATE_S;
            latency += probe;
            source = owner;
        }
    }
    else {
        int owner_state = DIR_STATE(&self->dir, at);
        state = STATE_M;
        if (owner_state != STATE_S) {
            int owner = self->agent_tops[first_agent(dir_mask(&self->dir, at), self->dir.words)];
            self->messages[MSG_GETX_FWD]++;
            self->messages[MSG_GETX_FWD_ACK]++;
            reply = MSG_PUTX;
            double probe;
            forwarded_dirty = tree_agent_copies(self, owner, line, 1, NO_TARGET, &probe);
            latency += probe;
            source = owner;
        }
        else {
            reply = MSG_PUTX_N;
            memcpy(self->sharers, dir_mask(&self->dir, at),
                   (size_t)self->dir.words * sizeof(uint64_t));
            double slowest = 0.0;
            int first = 1;
            for (int other = 0; other < self->agents; other++) {
                if (self->sharers[other / 64] >> (other % 64) & 1) {
                    double probe = tree_invalidate_sharer(self, self->agent_tops[other], line);
                    if (first || probe > slowest) {
                        slowest = probe;
                    }
                    first = 0;
                }
            }
            latency += slowest;
        }
        at = dir_find(&self->dir, line);
        if (at >= 0) {
            dir_remove(&self->dir, at);
        }
    }
    self->messages[reply]++;
    int top_writes_back = self->write_back[agent];
    tree_install_down(self, path, top_position, 0, source, line,
                      forwarded_dirty && top_writes_back);
    if (forwarded_dirty && !top_writes_back) {
        tree_receive(self, agent, line); /* a write-through top passes the dirty line to D */
    }
    at = dir_find(&self->dir, line);
    if (at < 0) {
        at = dir_add(&self->dir, line, state);
    }
    int slot = self->agent_slot[agent];
    dir_mask(&self->dir, at)[slot / 64] |= (uint64_t)1 << (slot % 64);
    DIR_STATE(&self->dir, at) = state;
    return latency;
}

/* _access: one access entering at leaf number `leaf` (everything but the fast-path hits). */
static void
tree_access(Tree *self, int leaf, uint64_t line, int is_write)
{
    self->access_count++;
    const int *path = self->path_list + self->path_start[leaf];
    int length = self->path_start[leaf + 1] - self->path_start[leaf];
    int top_position = self->top_position[leaf];
    int coherent = top_position >= 0;
    int limit = coherent ? top_position + 1 : length;
    double latency = 0.0;
    int served = limit;
    for (int position = 0; position < limit; position++) {
        int cache = path[position];
        self->accesses[cache]++;
        latency += self->latency[cache];
        uint64_t *meta;
        if (tree_find(self, cache, line, &meta) >= 0) {
            *meta = (++self->clock << 1) | (*meta & 1);
            self->hits[cache]++;
            served = position;
            break;
        }
        self->misses[cache]++;
    }
    if (!coherent) {
        if (served == limit) {
            latency += self->memory_latency;
            self->memory_reads++;
            tree_install_down(self, path, served - 1, 0, MEMORY, line, 0);
        }
        else if (served) {
            tree_install_down(self, path, served - 1, 0, path[served], line, 0);
        }
    }
    else if (served < limit) {
        if (is_write) {
            Py_ssize_t at = dir_find(&self->dir, line);
            if (at >= 0) {
                if (DIR_STATE(&self->dir, at) == STATE_S) {
                    latency += tree_upgrade(self, path, served, top_position, line);
                }
                else {
                    DIR_STATE(&self->dir, at) = STATE_M;
                }
            }
        }
        if (served) {
            tree_install_down(self, path, served - 1, 0, path[served], line, 0);
        }
    }
    else {
        latency += tree_agent_miss(self, path, length, top_position, line, is_write);
    }
    if (is_write) {
        tree_receive(self, path[0], line);
    }
    self->latency_sum += latency;
}

/* One run's view of its leaf: the reference's `run` locals and its count of fast hits. */
typedef struct {
    int leaf;  /* leaf number */
    int cache; /* the leaf cache */
    const int *path;
    int length;
    Level *level;
    int writes_in_place;
    int agent;
    uint64_t fast_hits;
} LeafRun;

/* The reference's `run` loop body for an access whose address is an exact non-negative int:
 * a leaf hit that needs no coherence action touches one set, else `_access`. */
static inline void
tree_step(Tree *self, LeafRun *run, uint64_t line, int is_write)
{
    Level *level = run->level;
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot >= 0) {
        uint64_t *meta = level->meta + set * level->ways + (uint64_t)slot;
        if (!is_write) {
            *meta = (++self->clock << 1) | (*meta & 1);
            run->fast_hits++;
            return;
        }
        if (run->writes_in_place) {
            if (run->agent < 0) {
                *meta = (++self->clock << 1) | 1;
                run->fast_hits++;
                return;
            }
            Py_ssize_t at = dir_find(&self->dir, line);
            if (at >= 0 && DIR_STATE(&self->dir, at) != STATE_S) {
                DIR_STATE(&self->dir, at) = STATE_M;
                *meta = (++self->clock << 1) | 1;
                run->fast_hits++;
                return;
            }
        }
    }
    tree_access(self, run->leaf, line, is_write);
}

/* Ask the host to fetch the sets and the directory entry an access of `line` will look at:
 * a random trace misses the host's caches at every level, and a bulk run knows its next
 * addresses. Changes nothing simulated. */
#define PREFETCH_DISTANCE 8

static inline void
tree_prefetch(Tree *self, const LeafRun *run, uint64_t line)
{
    for (int position = 0; position < run->length; position++) {
        const Level *level = &self->caches[run->path[position]];
        uint64_t base = set_of(level, line) * level->ways;
        __builtin_prefetch(level->tags + base);
        __builtin_prefetch(level->meta + base);
    }
    if (run->agent >= 0) {
        __builtin_prefetch(&DIR_KEY(&self->dir, dir_home(&self->dir, line)));
    }
}

/* _flush_line */
static void
tree_flush_line(Tree *self, const int *private_path, int length, uint64_t line)
{
    int outermost = private_path[length - 1];
    int dirty = 0;
    for (int position = 0; position < length; position++) {
        int cache = private_path[position];
        int was_dirty = tree_remove(self, cache, line);
        if (was_dirty < 0) {
            continue;
        }
        self->invalidations[cache]++;
        if (was_dirty) {
            dirty = 1;
            /* The outermost private copy's write-back is counted on its way out. */
            if (cache != outermost) {
                self->writebacks[cache]++;
                tree_link(self, cache, outermost);
            }
        }
    }
    if (self->role[outermost] == ROLE_AGENT_TOP) {
        Py_ssize_t at = dir_find(&self->dir, line);
        if (at >= 0) {
            dir_drop_holder(&self->dir, at, self->agent_slot[outermost]);
        }
        self->messages[dirty ? MSG_WRITE_BACK : MSG_CLEAN_WRITE_BACK]++;
    }
    if (!dirty) {
        return;
    }
    double latency = self->memory_latency;
    int current = outermost;
    while (current >= 0) {
        if (current != outermost) {
            uint64_t *meta;
            if (tree_find(self, current, line, &meta) >= 0) {
                *meta &= ~(uint64_t)1;
            }
        }
        latency += self->latency[current];
        self->writebacks[current]++;
        int parent = self->parent[current];
        tree_link(self, current, parent);
        current = parent;
    }
    self->memory_writes++;
    self->latency_sum += latency;
}

/* flush: every line of the outermost private cache, set by set, least recently used first. */
static void
tree_flush(Tree *self, int leaf)
{
    const int *private_path = self->private_list + self->private_start[leaf];
    int length = self->private_start[leaf + 1] - self->private_start[leaf];
    Level *level = &self->caches[private_path[length - 1]];
    uint64_t *order = self->order;
    for (uint64_t set = 0; set < level->sets; set++) {
        uint32_t count = level->fill[set];
        uint64_t base = set * level->ways;
        for (uint32_t slot = 0; slot < count; slot++) { /* insertion sort by stamp */
            uint64_t stamp = level->meta[base + slot] >> 1;
            uint64_t line = level->tags[base + slot];
            uint32_t at = slot;
            while (at > 0 && order[2 * (at - 1)] > stamp) {
                order[2 * at] = order[2 * (at - 1)];
                order[2 * at + 1] = order[2 * (at - 1) + 1];
                at--;
            }
            order[2 * at] = stamp;
            order[2 * at + 1] = line;
        }
        for (uint32_t slot = 0; slot < count; slot++) {
            tree_flush_line(self, private_path, length, order[2 * slot + 1]);
        }
    }
}

/* -- the type ------------------------------------------------------------------------------- */

static void
Tree_dealloc(Tree *self)
{
    if (self->caches != NULL) {
        for (int index = 0; index < self->count; index++) {
            PyMem_Free(self->caches[index].tags);
            PyMem_Free(self->caches[index].meta);
            PyMem_Free(self->caches[index].fill);
        }
        PyMem_Free(self->caches);
    }
    void *arrays[] = {
        self->latency,      self->top_depth,    self->parent,        self->write_back,
        self->role,         self->evict_duty,   self->agent_of,      self->agent_slot,
        self->agent_tops,   self->child_start,  self->child_list,    self->leaf_index,
        self->path_start,   self->path_list,    self->private_start, self->private_list,
        self->top_position, self->accesses,     self->hits,          self->misses,
        self->evictions,    self->writebacks,   self->invalidations, self->links,
        self->link_order,   self->dir.slots,
        self->stack,        self->sharers,      self->order,
    };
    for (size_t index = 0; index < sizeof(arrays) / sizeof(arrays[0]); index++) {
        PyMem_Free(arrays[index]);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define ERR_TREE_LAYOUT "Tree: malformed layout (build it through simulator.models.coherence)"

/* Read a tuple of cache indices into out[0..]; return its length or -1. */
static int
read_indices(Tree *self, PyObject *tuple, int *out, int capacity)
{
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) == 0 ||
        PyTuple_GET_SIZE(tuple) > capacity) {
        PyErr_SetString(PyExc_ValueError, ERR_TREE_LAYOUT);
        return -1;
    }
    int length = (int)PyTuple_GET_SIZE(tuple);
    for (int index = 0; index < length; index++) {
        long value = PyLong_AsLong(PyTuple_GET_ITEM(tuple, index));
        if (value == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (value < 0 || value >= self->count) {
            PyErr_SetString(PyExc_ValueError, ERR_TREE_LAYOUT);
            return -1;
        }
        out[index] = (int)value;
    }
    return length;
}

static PyObject *
Tree_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"caches", "leaves", "directory", "memory_latency_s", "line_bytes",
                               NULL};
    PyObject *caches_arg, *leaves_arg;
    int directory;
    double memory_latency;
    unsigned long long line_bytes;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOidK:Tree", keywords, &caches_arg, &leaves_arg,
                                     &directory, &memory_latency, &line_bytes)) {
        return NULL;
    }
    PyObject *caches = PySequence_Fast(caches_arg, ERR_TREE_LAYOUT);
    if (caches == NULL) {
        return NULL;
    }
    PyObject *leaves = PySequence_Fast(leaves_arg, ERR_TREE_LAYOUT);
    if (leaves == NULL) {
        Py_DECREF(caches);
        return NULL;
    }
    Tree *self = (Tree *)type->tp_alloc(type, 0);
    if (self == NULL) {
        goto error;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(caches);
    Py_ssize_t leaf_count = PySequence_Fast_GET_SIZE(leaves);
    if (count == 0 || count > TREE_MAX_CACHES || leaf_count == 0 || leaf_count > count ||
        directory < -1 || directory >= count || line_bytes == 0) {
        PyErr_SetString(PyExc_ValueError, ERR_TREE_LAYOUT);
        goto error;
    }
    size_t n = (size_t)count;
    size_t links = (n + 1) * (n + 1);
    self->caches = PyMem_Calloc(n, sizeof(Level));
    self->count = (int)count; /* dealloc frees the levels allocated so far */
    self->latency = PyMem_Calloc(n, sizeof(double));
    self->top_depth = PyMem_Calloc(n, sizeof(double));
    self->parent = PyMem_Calloc(n, sizeof(int));
    self->write_back = PyMem_Calloc(n, 1);
    self->role = PyMem_Calloc(n, 1);
    self->evict_duty = PyMem_Calloc(n, 1);
    self->agent_of = PyMem_Calloc(n, sizeof(int));
    self->agent_slot = PyMem_Calloc(n, sizeof(int));
    self->agent_tops = PyMem_Calloc(n, sizeof(int));
    self->child_start = PyMem_Calloc(n + 1, sizeof(int));
    self->child_list = PyMem_Calloc(n, sizeof(int));
    self->leaf_index = PyMem_Calloc(n, sizeof(int));
    self->path_start = PyMem_Calloc(n + 1, sizeof(int));
    self->path_list = PyMem_Calloc(n * n, sizeof(int));
    self->private_start = PyMem_Calloc(n + 1, sizeof(int));
    self->private_list = PyMem_Calloc(n * n, sizeof(int));
    self->top_position = PyMem_Calloc(n, sizeof(int));
    self->accesses = PyMem_Calloc(n, sizeof(uint64_t));
    self->hits = PyMem_Calloc(n, sizeof(uint64_t));
    self->misses = PyMem_Calloc(n, sizeof(uint64_t));
    self->evictions = PyMem_Calloc(n, sizeof(uint64_t));
    self->writebacks = PyMem_Calloc(n, sizeof(uint64_t));
    self->invalidations = PyMem_Calloc(n, sizeof(uint64_t));
    self->links = PyMem_Calloc(links, sizeof(uint64_t));
    self->link_order = PyMem_Calloc(links, sizeof(uint32_t));
    self->stack = PyMem_Calloc(n, sizeof(int));
    if (self->caches == NULL || self->latency == NULL || self->top_depth == NULL ||
        self->parent == NULL || self->write_back == NULL || self->role == NULL ||
        self->evict_duty == NULL || self->agent_of == NULL || self->agent_slot == NULL ||
        self->agent_tops == NULL || self->child_start == NULL || self->child_list == NULL ||
        self->leaf_index == NULL || self->path_start == NULL || self->path_list == NULL ||
        self->private_start == NULL || self->private_list == NULL || self->top_position == NULL ||
        self->accesses == NULL || self->hits == NULL || self->misses == NULL ||
        self->evictions == NULL || self->writebacks == NULL || self->invalidations == NULL ||
        self->links == NULL || self->link_order == NULL || self->stack == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    self->directory = directory;
    self->memory_latency = memory_latency;
    self->line_bytes = line_bytes;
    self->line_shift = -1;
    for (int shift = 0; shift < 64; shift++) {
        if (line_bytes == (uint64_t)1 << shift) {
            self->line_shift = shift;
            break;
        }
    }
    /* caches: (sets, ways, latency_s, parent, write_back, role, agent_of, top_depth, duty) */
    for (int index = 0; index < self->count; index++) {
        Py_ssize_t sets, ways;
        double latency, top_depth;
        int parent, write_back, role, agent_of, evict_duty;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(caches, index), "nndipiidp;" ERR_TREE_LAYOUT,
                              &sets, &ways, &latency, &parent, &write_back, &role, &agent_of,
                              &top_depth, &evict_duty)) {
            goto error;
        }
        if (sets <= 0 || ways <= 0 || ways > UINT32_MAX ||
            (size_t)sets > (size_t)PY_SSIZE_T_MAX / sizeof(uint64_t) / (size_t)ways ||
            parent < -1 || parent >= self->count || parent == index || role < 0 || role > 2 ||
            agent_of < -1 || agent_of >= self->count) {
            PyErr_SetString(PyExc_ValueError, ERR_TREE_LAYOUT);
            goto error;
        }
        Level *level = &self->caches[index];
        level->sets = (uint64_t)sets;
        level->ways = (uint32_t)ways;
        level->sets_pow2 = (sets & (sets - 1)) == 0;
        level->tags = PyMem_Malloc((size_t)(sets * ways) * sizeof(uint64_t));
        level->meta = PyMem_Malloc((size_t)(sets * ways) * sizeof(uint64_t));
        level->fill = PyMem_Calloc((size_t)sets, sizeof(uint32_t));
        if (level->tags == NULL || level->meta == NULL || level->fill == NULL) {
            PyErr_NoMemory();
            goto error;
        }
        if (level->ways > self->max_ways) {
            self->max_ways = level->ways;
        }
        self->latency[index] = latency;
        self->top_depth[index] = top_depth;
        self->parent[index] = parent;
        self->write_back[index] = (uint8_t)write_back;
        self->role[index] = (uint8_t)role;
        self->agent_of[index] = agent_of;
        self->evict_duty[index] = (uint8_t)evict_duty;
        self->agent_slot[index] = -1;
        self->leaf_index[index] = -1;
    }
    /* children in index order, as the reference lists them */
    for (int index = 0; index < self->count; index++) {
        if (self->parent[index] >= 0) {
            self->child_start[self->parent[index] + 1]++;
        }
    }
    for (int index = 0; index < self->count; index++) {
        self->child_start[index + 1] += self->child_start[index];
    }
    {
        int *fill = self->stack; /* scratch */
        memcpy(fill, self->child_start, n * sizeof(int));
        for (int index = 0; index < self->count; index++) {
            if (self->parent[index] >= 0) {
                self->child_list[fill[self->parent[index]]++] = index;
            }
        }
    }
    uint64_t agent_lines = 0;
    if (directory >= 0) {
        for (int at = self->child_start[directory]; at < self->child_start[directory + 1]; at++) {
            int top = self->child_list[at];
            self->agent_slot[top] = self->agents;
            self->agent_tops[self->agents++] = top;
            agent_lines += self->caches[top].sets * self->caches[top].ways;
        }
    }
    for (int index = 0; index < self->count; index++) {
        int top = self->agent_of[index];
        if ((top >= 0 && self->agent_slot[top] < 0) ||
            (self->role[index] == ROLE_AGENT_TOP && self->agent_slot[index] < 0)) {
            PyErr_SetString(PyExc_ValueError, ERR_TREE_LAYOUT);
            goto error;
        }
    }
    /* leaves: (leaf, path, top_position, private path) */
    self->leaves = (int)leaf_count;
    for (int index = 0; index < self->leaves; index++) {
        int leaf, top_position;
        PyObject *path, *private_path;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(leaves, index), "iOiO;" ERR_TREE_LAYOUT,
                              &leaf, &path, &top_position, &private_path)) {
            goto error;
        }
        if (leaf < 0 || leaf >= self->count || self->leaf_index[leaf] >= 0) {
            PyErr_SetString(PyExc_ValueError, ERR_TREE_LAYOUT);
            goto error;
        }
        self->leaf_index[leaf] = index;
        int length = read_indices(self, path, self->path_list + self->path_start[index],
                                  self->count);
        if (length < 0) {
            goto error;
        }
        self->path_start[index + 1] = self->path_start[index] + length;
        int private_length = read_indices(
            self, private_path, self->private_list + self->private_start[index], self->count);
        if (private_length < 0) {
            goto error;
        }
        self->private_start[index + 1] = self->private_start[index] + private_length;
        const int *chain = self->path_list + self->path_start[index];
        /* the path must be the leaf's chain to a root; the agent's top must have D above it */
        int valid = chain[0] == leaf && top_position >= -1 && top_position < length - 1;
        for (int at = 0; valid && at < length; at++) {
            valid = self->parent[chain[at]] == (at + 1 < length ? chain[at + 1] : MEMORY);
        }
        if (valid && top_position >= 0) {
            valid = chain[top_position + 1] == directory &&
                    self->agent_slot[chain[top_position]] >= 0;
        }
        if (!valid) {
            PyErr_SetString(PyExc_ValueError, ERR_TREE_LAYOUT);
            goto error;
        }
        self->top_position[index] = top_position;
    }
    /* The directory lists the lines the agents' top caches hold: at most agent_lines. */
    self->dir.words = self->agents > 0 ? (self->agents + 63) / 64 : 1;
    self->dir.capacity = 16;
    self->dir.shift = 60;
    while (self->dir.capacity < 2 * agent_lines) {
        self->dir.capacity <<= 1;
        self->dir.shift--;
    }
    self->dir.stride = 2 + self->dir.words;
    if (self->dir.stride <= 4) {
        self->dir.stride = 4; /* 32 bytes: an entry never straddles two cache lines */
    }
    self->dir.slots =
        PyMem_Calloc((size_t)self->dir.capacity * (size_t)self->dir.stride, sizeof(uint64_t));
    self->sharers = PyMem_Calloc((size_t)self->dir.words, sizeof(uint64_t));
    self->order = PyMem_Calloc(2 * (size_t)self->max_ways, sizeof(uint64_t));
    if (self->dir.slots == NULL ||
        self->sharers == NULL || self->order == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    Py_DECREF(caches);
    Py_DECREF(leaves);
    return (PyObject *)self;

error:
    Py_XDECREF(self);
    Py_DECREF(caches);
    Py_DECREF(leaves);
    return NULL;
}

/* Return the leaf number of the cache index `leaf`, or -1 with ValueError. */
static int
tree_leaf(Tree *self, PyObject *leaf)
{
    long cache = PyLong_AsLong(leaf);
    if (cache == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (cache < 0 || cache >= self->count || self->leaf_index[cache] < 0) {
        PyErr_Format(PyExc_ValueError, "cache %R is not a leaf of the tree", leaf);
        return -1;
    }
    return self->leaf_index[cache];
}

static void
leaf_run_start(Tree *self, LeafRun *run, int leaf)
{
    int cache = self->path_list[self->path_start[leaf]];
    run->leaf = leaf;
    run->cache = cache;
    run->path = self->path_list + self->path_start[leaf];
    run->length = self->path_start[leaf + 1] - self->path_start[leaf];
    run->level = &self->caches[cache];
    run->writes_in_place = self->write_back[cache];
    run->agent = self->agent_of[cache];
    run->fast_hits = 0;
}

/* The reference's `finally`: the fast hits count after the slow accesses, errors or not. */
static void
leaf_run_end(Tree *self, LeafRun *run)
{
    uint64_t fast = run->fast_hits;
    self->accesses[run->cache] += fast;
    self->hits[run->cache] += fast;
    self->latency_sum += (double)fast * self->latency[run->cache];
    self->access_count += fast;
    run->fast_hits = 0;
}

/* One access given as Python objects, as the reference's `run` loop takes it; 0 or -1. */
static int
tree_object_access(Tree *self, LeafRun *run, PyObject *address, PyObject *is_write)
{
    uint64_t line;
    int found;
    int fast = PyLong_CheckExact(address);
    if (fast) {
        found = line_of_value(self->line_bytes, self->line_shift, address, &line);
    }
    else if (PyBool_Check(address) || !PyIndex_Check(address)) {
        found = LINE_NEGATIVE; /* _line_of's ERR_ADDRESS */
    }
    else {
        PyObject *value = PyNumber_Index(address);
        if (value == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
                return -1;
            }
            PyErr_Clear();
            found = LINE_NEGATIVE;
        }
        else {
            found = line_of_value(self->line_bytes, self->line_shift, value, &line);
            Py_DECREF(value);
        }
    }
    switch (found) {
    case LINE_FITS:
        break;
    case LINE_NEGATIVE:
        address_error(address);
        return -1;
    case LINE_TOO_LARGE:
        PyErr_Format(PyExc_OverflowError, ERR_LINE_RANGE, address);
        return -1;
    default:
        return -1;
    }
    int write = PyObject_IsTrue(is_write);
    if (write < 0) {
        return -1;
    }
    if (fast) {
        tree_step(self, run, line, write);
    }
    else {
        tree_access(self, run->leaf, line, write);
    }
    return 0;
}

PyDoc_STRVAR(tree_run_pairs_doc,
"run_pairs(leaf, stream) -> None\n\n"
"Perform every (address, is_write) access of an iterable entering at cache `leaf`.");

static PyObject *
Tree_run_pairs(Tree *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "run_pairs(leaf, stream) takes 2 arguments");
        return NULL;
    }
    int leaf = tree_leaf(self, args[0]);
    if (leaf < 0) {
        return NULL;
    }
    PyObject *iterator = PyObject_GetIter(args[1]);
    if (iterator == NULL) {
        return NULL;
    }
    LeafRun run;
    leaf_run_start(self, &run, leaf);
    PyObject *item;
    uint64_t done = 0;
    while ((item = PyIter_Next(iterator)) != NULL) {
        PyObject *address, *is_write;
        int failed = unpack_pair(item, &address, &is_write);
        Py_DECREF(item);
        if (failed) {
            break;
        }
        failed = tree_object_access(self, &run, address, is_write);
        Py_DECREF(address);
        Py_DECREF(is_write);
        if (failed || ((++done & SIGNAL_CHECK_MASK) == 0 && PyErr_CheckSignals() < 0)) {
            break;
        }
    }
    leaf_run_end(self, &run);
    Py_DECREF(iterator);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(tree_run_lists_doc,
"run_lists(leaf, addresses, writes) -> None\n\n"
"Perform the accesses of two lists of one length (writes None: all reads) entering at `leaf`.");

static PyObject *
Tree_run_lists(Tree *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "run_lists(leaf, addresses, writes) takes 3 arguments");
        return NULL;
    }
    int leaf = tree_leaf(self, args[0]);
    if (leaf < 0) {
        return NULL;
    }
    PyObject *addresses = args[1], *writes = args[2];
    if (!PyList_Check(addresses) || (writes != Py_None && !PyList_Check(writes))) {
        PyErr_SetString(PyExc_TypeError, "run_lists takes lists");
        return NULL;
    }
    LeafRun run;
    leaf_run_start(self, &run, leaf);
    /* Item calls may run Python code that changes the lists: re-read their sizes. */
    for (Py_ssize_t index = 0; index < PyList_GET_SIZE(addresses); index++) {
        if (writes != Py_None && index >= PyList_GET_SIZE(writes)) {
            break;
        }
        PyObject *address = Py_NewRef(PyList_GET_ITEM(addresses, index));
        PyObject *is_write =
            Py_NewRef(writes == Py_None ? Py_False : PyList_GET_ITEM(writes, index));
        int failed = tree_object_access(self, &run, address, is_write);
        Py_DECREF(address);
        Py_DECREF(is_write);
        if (failed || (((uint64_t)index & SIGNAL_CHECK_MASK) == SIGNAL_CHECK_MASK &&
                       PyErr_CheckSignals() < 0)) {
            break;
        }
    }
    leaf_run_end(self, &run);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(tree_run_buffers_doc,
"run_buffers(leaf, addresses, writes=None) -> None\n\n"
"Perform the accesses of two one-dimensional integer buffers of one length entering at\n"
"`leaf`: address i, written when writes[i] is non-zero (None: all reads). No Python object is\n"
"made per access; the accesses before an error count.");

static PyObject *
Tree_run_buffers(Tree *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "run_buffers(leaf, addresses, writes=None)");
        return NULL;
    }
    int leaf = tree_leaf(self, args[0]);
    if (leaf < 0) {
        return NULL;
    }
    PyObject *writes_arg = nargs > 2 ? args[2] : Py_None;
    Items addresses, writes;
    int with_writes = writes_arg != Py_None;
    if (items_open(args[1], "addresses", &addresses) < 0) {
        return NULL;
    }
    if (with_writes && items_open(writes_arg, "writes", &writes) < 0) {
        PyBuffer_Release(&addresses.view);
        return NULL;
    }
    Py_ssize_t count = addresses.view.shape[0];
    PyObject *result = NULL;
    if (with_writes && writes.view.shape[0] != count) {
        PyErr_Format(PyExc_ValueError,
                     "addresses and writes must have the same length, got %zd and %zd", count,
                     writes.view.shape[0]);
        goto done;
    }
    int line_shift = self->line_shift;
    uint64_t line_bytes = self->line_bytes;
    LeafRun run;
    leaf_run_start(self, &run, leaf);
    for (Py_ssize_t ahead = 0; ahead < PREFETCH_DISTANCE && ahead < count; ahead++) {
        int negative = 0;
        uint64_t address = item_at(&addresses, ahead, &negative);
        tree_prefetch(self, &run, line_shift >= 0 ? address >> line_shift : address / line_bytes);
    }
    for (Py_ssize_t index = 0; index < count; index++) {
        if (index + PREFETCH_DISTANCE < count) {
            int negative = 0;
            uint64_t address = item_at(&addresses, index + PREFETCH_DISTANCE, &negative);
            tree_prefetch(self, &run,
                          line_shift >= 0 ? address >> line_shift : address / line_bytes);
        }
        int negative = 0;
        uint64_t address = item_at(&addresses, index, &negative);
        if (negative) {
            PyObject *value = PyLong_FromLongLong((long long)(int64_t)address);
            if (value != NULL) {
                address_error(value);
                Py_DECREF(value);
            }
            break;
        }
        uint64_t line = line_shift >= 0 ? address >> line_shift : address / line_bytes;
        int is_write = 0;
        if (with_writes) {
            int ignored;
            is_write = item_at(&writes, index, &ignored) != 0;
        }
        tree_step(self, &run, line, is_write);
        if (((uint64_t)index & SIGNAL_CHECK_MASK) == SIGNAL_CHECK_MASK &&
            PyErr_CheckSignals() < 0) {
            break;
        }
    }
    leaf_run_end(self, &run);
    if (!PyErr_Occurred()) {
        result = Py_NewRef(Py_None);
    }

done:
    PyBuffer_Release(&addresses.view);
    if (with_writes) {
        PyBuffer_Release(&writes.view);
    }
    return result;
}

PyDoc_STRVAR(tree_flush_doc,
"flush(leaf) -> None\n\n"
"Write back and invalidate every line of the private path of cache `leaf`.");

static PyObject *
Tree_flush(Tree *self, PyObject *leaf_arg)
{
    int leaf = tree_leaf(self, leaf_arg);
    if (leaf < 0) {
        return NULL;
    }
    tree_flush(self, leaf);
    Py_RETURN_NONE;
}

/* Read (cache, line) arguments; 0 on success. */
static int
cache_and_line(Tree *self, PyObject *const *args, Py_ssize_t nargs, const char *name, int *cache,
               uint64_t *line)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "%s(cache, line) takes 2 arguments", name);
        return -1;
    }
    long value = PyLong_AsLong(args[0]);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (value < 0 || value >= self->count) {
        PyErr_Format(PyExc_ValueError, "cache %R is not the index of a cache", args[0]);
        return -1;
    }
    *cache = (int)value;
    *line = PyLong_AsUnsignedLongLong(args[1]);
    if (*line == (uint64_t)-1 && PyErr_Occurred()) {
        return -1;
    }
    return 0;
}

static const char *const STATE_NAMES[] = {"I", "M", "E", "S"};

PyDoc_STRVAR(tree_state_doc,
"state(cache, line) -> str\n\n"
"Return \"M\", \"E\", \"S\" or \"I\" for the copy of line number `line` in `cache`.");

static PyObject *
Tree_state(Tree *self, PyObject *const *args, Py_ssize_t nargs)
{
    int cache;
    uint64_t line, *meta;
    if (cache_and_line(self, args, nargs, "state", &cache, &line) < 0) {
        return NULL;
    }
    if (tree_find(self, cache, line, &meta) < 0) {
        return PyUnicode_FromString("I");
    }
    int top = self->agent_of[cache];
    if (top >= 0) {
        Py_ssize_t at = dir_find(&self->dir, line);
        int slot = self->agent_slot[top];
        if (at < 0 || !(dir_mask(&self->dir, at)[slot / 64] >> (slot % 64) & 1)) {
            PyErr_Format(PyExc_KeyError, "%d", top); /* the reference's self._lines[line][top] */
            return NULL;
        }
        return PyUnicode_FromString(STATE_NAMES[DIR_STATE(&self->dir, at)]);
    }
    return PyUnicode_FromString(*meta & 1 ? "M" : "E");
}

/* {top cache: state} of the directory entry at `at`. */
static PyObject *
holders_dict(Tree *self, Py_ssize_t at)
{
    PyObject *result = PyDict_New();
    if (result == NULL || at < 0) {
        return result;
    }
    const uint64_t *mask = dir_mask(&self->dir, at);
    PyObject *state = PyUnicode_FromString(STATE_NAMES[DIR_STATE(&self->dir, at)]);
    if (state == NULL) {
        Py_DECREF(result);
        return NULL;
    }
    for (int agent = 0; agent < self->agents; agent++) {
        if (!(mask[agent / 64] >> (agent % 64) & 1)) {
            continue;
        }
        PyObject *top = PyLong_FromLong(self->agent_tops[agent]);
        if (top == NULL || PyDict_SetItem(result, top, state) < 0) {
            Py_XDECREF(top);
            Py_DECREF(state);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(top);
    }
    Py_DECREF(state);
    return result;
}

PyDoc_STRVAR(tree_holders_doc,
"holders(line) -> dict\n\n"
"Return the directory entry of line number `line`: {agent top cache: state}.");

static PyObject *
Tree_holders(Tree *self, PyObject *line_arg)
{
    uint64_t line = PyLong_AsUnsignedLongLong(line_arg);
    if (line == (uint64_t)-1 && PyErr_Occurred()) {
        return NULL;
    }
    return holders_dict(self, dir_find(&self->dir, line));
}

PyDoc_STRVAR(tree_directory_doc,
"directory_entries() -> dict\n\n"
"Return the whole directory: {line: {agent top cache: state}}.");

static PyObject *
Tree_directory_entries(Tree *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *result = PyDict_New();
    if (result == NULL) {
        return NULL;
    }
    for (uint64_t at = 0; at < self->dir.capacity; at++) {
        if (DIR_STATE(&self->dir, at) == STATE_NONE) {
            continue;
        }
        PyObject *line = PyLong_FromUnsignedLongLong(DIR_KEY(&self->dir, at));
        PyObject *holders = holders_dict(self, (Py_ssize_t)at);
        if (line == NULL || holders == NULL || PyDict_SetItem(result, line, holders) < 0) {
            Py_XDECREF(line);
            Py_XDECREF(holders);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(line);
        Py_DECREF(holders);
    }
    return result;
}

PyDoc_STRVAR(tree_contents_doc,
"contents(cache) -> list\n\n"
"Return, per set of `cache`, its (line, dirty) pairs, least recently used first.");

static PyObject *
Tree_contents(Tree *self, PyObject *cache_arg)
{
    long cache = PyLong_AsLong(cache_arg);
    if (cache == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (cache < 0 || cache >= self->count) {
        PyErr_Format(PyExc_ValueError, "cache %R is not the index of a cache", cache_arg);
        return NULL;
    }
    Level *level = &self->caches[cache];
    PyObject *result = PyList_New((Py_ssize_t)level->sets);
    if (result == NULL) {
        return NULL;
    }
    uint64_t *order = self->order;
    for (uint64_t set = 0; set < level->sets; set++) {
        uint32_t count = level->fill[set];
        uint64_t base = set * level->ways;
        for (uint32_t slot = 0; slot < count; slot++) { /* insertion sort by meta word */
            uint64_t meta = level->meta[base + slot];
            uint64_t line = level->tags[base + slot];
            uint32_t at = slot;
            while (at > 0 && order[2 * (at - 1)] > meta) {
                order[2 * at] = order[2 * (at - 1)];
                order[2 * at + 1] = order[2 * (at - 1) + 1];
                at--;
            }
            order[2 * at] = meta;
            order[2 * at + 1] = line;
        }
        PyObject *lines = PyList_New(count);
        if (lines == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)set, lines);
        for (uint32_t slot = 0; slot < count; slot++) {
            PyObject *pair = Py_BuildValue("(KO)", (unsigned long long)order[2 * slot + 1],
                                           order[2 * slot] & 1 ? Py_True : Py_False);
            if (pair == NULL) {
                Py_DECREF(result);
                return NULL;
            }
            PyList_SET_ITEM(lines, slot, pair);
        }
    }
    return result;
}

static PyObject *
tree_counter_list(const uint64_t *values, Py_ssize_t count)
{
    return counter_list(values, count);
}

PyDoc_STRVAR(tree_counters_doc,
"counters() -> tuple\n\n"
"Return (accesses, hits, misses, evictions, writebacks, invalidations, line_transfers,\n"
"messages, memory_reads, memory_writes, latency_s, access_count): per-cache lists, a dict\n"
"{(from, to): lines} with None for memory in first-use order, a list of message counts in\n"
"MESSAGES order, then the totals.");

static PyObject *
Tree_counters(Tree *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t count = self->count;
    PyObject *lists[6] = {
        tree_counter_list(self->accesses, count),   tree_counter_list(self->hits, count),
        tree_counter_list(self->misses, count),     tree_counter_list(self->evictions, count),
        tree_counter_list(self->writebacks, count), tree_counter_list(self->invalidations, count),
    };
    PyObject *transfers = PyDict_New();
    PyObject *messages = tree_counter_list(self->messages, MESSAGE_KINDS);
    PyObject *result = NULL;
    for (int index = 0; index < 6; index++) {
        if (lists[index] == NULL) {
            goto done;
        }
    }
    if (transfers == NULL || messages == NULL) {
        goto done;
    }
    uint64_t width = (uint64_t)count + 1;
    for (uint64_t used = 0; used < self->links_used; used++) {
        uint64_t index = self->link_order[used];
        long from = (long)(index / width) - 1, to = (long)(index % width) - 1;
        PyObject *source = from < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(from);
        PyObject *target = to < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(to);
        PyObject *key = source != NULL && target != NULL ? PyTuple_Pack(2, source, target) : NULL;
        PyObject *lines = PyLong_FromUnsignedLongLong(self->links[index]);
        int failed = key == NULL || lines == NULL || PyDict_SetItem(transfers, key, lines) < 0;
        Py_XDECREF(source);
        Py_XDECREF(target);
        Py_XDECREF(key);
        Py_XDECREF(lines);
        if (failed) {
            goto done;
        }
    }
    result = Py_BuildValue("(OOOOOOOOKKdK)", lists[0], lists[1], lists[2], lists[3], lists[4],
                           lists[5], transfers, messages, (unsigned long long)self->memory_reads,
                           (unsigned long long)self->memory_writes, self->latency_sum,
                           (unsigned long long)self->access_count);

done:
    for (int index = 0; index < 6; index++) {
        Py_XDECREF(lists[index]);
    }
    Py_XDECREF(transfers);
    Py_XDECREF(messages);
    return result;
}

static PyMethodDef Tree_methods[] = {
    {"run_pairs", (PyCFunction)(void (*)(void))Tree_run_pairs, METH_FASTCALL, tree_run_pairs_doc},
    {"run_lists", (PyCFunction)(void (*)(void))Tree_run_lists, METH_FASTCALL, tree_run_lists_doc},
    {"run_buffers", (PyCFunction)(void (*)(void))Tree_run_buffers, METH_FASTCALL,
     tree_run_buffers_doc},
    {"flush", (PyCFunction)Tree_flush, METH_O, tree_flush_doc},
    {"state", (PyCFunction)(void (*)(void))Tree_state, METH_FASTCALL, tree_state_doc},
    {"holders", (PyCFunction)Tree_holders, METH_O, tree_holders_doc},
    {"directory_entries", (PyCFunction)Tree_directory_entries, METH_NOARGS, tree_directory_doc},
    {"contents", (PyCFunction)Tree_contents, METH_O, tree_contents_doc},
    {"counters", (PyCFunction)Tree_counters, METH_NOARGS, tree_counters_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Tree_doc,
"Tree(caches, leaves, directory, memory_latency_s, line_bytes)\n\n"
"The core of simulator.models.coherence.CacheTree, built by it from a validated layout:\n"
"caches are (sets, ways, latency_s, parent, write_back, role, agent_of, top_depth,\n"
"evict_duty) with -1 for none, leaves (leaf, path, top_position, private_path).");

static PyTypeObject Tree_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "simulator._cachesim.Tree",
    .tp_basicsize = sizeof(Tree),
    .tp_dealloc = (destructor)Tree_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Tree_doc,
    .tp_methods = Tree_methods,
    .tp_new = Tree_new,
};

static struct PyModuleDef cachesim_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simulator._cachesim",
    .m_doc = "The cache simulators' cores in C (simulator/models/cache.py and coherence.py hold "
              "the references).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__cachesim(void)
{
    if (PyType_Ready(&Hierarchy_type) < 0 || PyType_Ready(&Tree_type) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&cachesim_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Hierarchy", (PyObject *)&Hierarchy_type) < 0 ||
        PyModule_AddObjectRef(module, "Tree", (PyObject *)&Tree_type) < 0 ||
        PyModule_AddIntConstant(module, "TREE_MAX_CACHES", TREE_MAX_CACHES) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
