/* simulator._cachesim: one chain of caches (Hierarchy): the levels, an access, the bulk runs.
 *
 * Python reference: simulator/models/cache.py _PythonCore.
 * Differential test: tests/simulator/models/test_cache_speedups.py.
 *
 * Compiled as one translation unit: simulator/_cachesim.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_cachesim.h"

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
