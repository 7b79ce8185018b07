/* simulator._cachesim: one chain of caches (Hierarchy), the Python type of
 * simulator.models.cache.CacheHierarchy, on the tree's core.
 *
 * Python reference: simulator/models/cache.py _PythonCore.
 * Differential test: tests/simulator/models/test_cache_speedups.py.
 *
 * A chain is a tree: level k is cache k, whose parent is level k + 1 (the outermost level's is
 * memory), every cache writes back, and the one leaf, level 0, has the whole chain as its path.
 * The tree core's rules for such a tree are the chain's (cache.py's docstring): a miss probes
 * the levels outwards and fills the ones that missed, outermost first; an evicted line
 * back-invalidates its copies in the levels inside (the caches below it) and, if dirty, marks
 * the next level's copy modified without touching its LRU order. So `Hierarchy` keeps no sets
 * of its own: it builds a `Tree` (simulator/_cachesim_tree_type.c) and maps its API onto it;
 * served[k] is the hits of cache k, memory's is the tree's memory reads, back_invalidations
 * are the tree's invalidations. The latencies stay in Python (cache.py's `result`), so the
 * tree's are zero.
 *
 * Compiled as one translation unit: simulator/_cachesim.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_cachesim.h"

typedef struct {
    PyObject_HEAD
    Py_ssize_t depth; /* 0 until __init__ has run */
    Tree *tree;
    int busy; /* a method that may run Python code is under way: __init__ must wait */
} Hierarchy;

/* -- the type ------------------------------------------------------------------------------- */

static void
Hierarchy_dealloc(Hierarchy *self)
{
    Py_CLEAR(self->tree);
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

/* The tree layout of a chain of `depth` levels of (sets, ways) (see the top of this file). */
static PyObject *
chain_layout(const uint64_t *geometry, Py_ssize_t depth, uint64_t line_bytes)
{
    PyObject *caches = PyTuple_New(depth);
    PyObject *path = PyTuple_New(depth);
    PyObject *result = NULL;
    if (caches == NULL || path == NULL) {
        goto done;
    }
    for (Py_ssize_t index = 0; index < depth; index++) {
        int parent = index + 1 < depth ? (int)index + 1 : MEMORY;
        /* (sets, ways, latency_s, parent, write_back, role, agent_of, top_depth, evict_duty) */
        PyObject *cache = Py_BuildValue("(KKdiiiidi)", (unsigned long long)geometry[2 * index],
                                        (unsigned long long)geometry[2 * index + 1], 0.0, parent,
                                        1, ROLE_PLAIN, -1, 0.0, index > 0);
        PyObject *position = PyLong_FromSsize_t(index);
        if (cache == NULL || position == NULL) {
            Py_XDECREF(cache);
            Py_XDECREF(position);
            goto done;
        }
        PyTuple_SET_ITEM(caches, index, cache);
        PyTuple_SET_ITEM(path, index, position);
    }
    /* Tree(caches, leaves, directory, memory_latency_s, line_bytes); leaf 0's private path is
     * the whole chain */
    result = Py_BuildValue("(O((iOiO))idK)", caches, 0, path, -1, path, -1, 0.0,
                           (unsigned long long)line_bytes);

done:
    Py_XDECREF(caches);
    Py_XDECREF(path);
    return result;
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
    self->depth = 0;
    Py_CLEAR(self->tree);
    uint64_t *geometry = PyMem_Calloc((size_t)depth * 2, sizeof(uint64_t));
    PyObject *layout = NULL;
    if (geometry == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    uint64_t line_bytes = 0;
    for (Py_ssize_t index = 0; index < depth; index++) {
        PyObject *spec = PySequence_Fast_GET_ITEM(levels, index);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 3) {
            PyErr_SetString(PyExc_TypeError, "each level must be a (sets, ways, line_bytes) tuple");
            goto error;
        }
        uint64_t sets, ways, level_line_bytes;
        if (positive(PyTuple_GET_ITEM(spec, 0), (uint64_t)PY_SSIZE_T_MAX, &sets) < 0 ||
            positive(PyTuple_GET_ITEM(spec, 1), UINT32_MAX, &ways) < 0 ||
            positive(PyTuple_GET_ITEM(spec, 2), UINT64_MAX, &level_line_bytes) < 0) {
            goto error;
        }
        if (index == 0) {
            line_bytes = level_line_bytes;
        }
        else if (level_line_bytes != line_bytes) {
            PyErr_SetString(PyExc_ValueError, "all cache levels must share one line size");
            goto error;
        }
        if (sets > (uint64_t)PY_SSIZE_T_MAX / sizeof(uint64_t) / ways) {
            PyErr_NoMemory();
            goto error;
        }
        geometry[2 * index] = sets;
        geometry[2 * index + 1] = ways;
    }
    layout = chain_layout(geometry, depth, line_bytes);
    if (layout == NULL) {
        goto error;
    }
    self->tree = (Tree *)Tree_new(&Tree_type, layout, NULL);
    if (self->tree == NULL) {
        goto error;
    }
    self->depth = depth;
    PyMem_Free(geometry);
    Py_DECREF(layout);
    Py_DECREF(levels);
    return 0;

error:
    PyMem_Free(geometry);
    Py_XDECREF(layout);
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

/* The line of an access's address, a non-negative int that is not a bool (else ERR_ADDRESS);
 * 0 on success. (The tree's runs also take other integers through __index__; the chain's
 * reference takes ints only.) */
static int
access_line(Hierarchy *self, PyObject *address, uint64_t *line)
{
    int found = LINE_NEGATIVE;
    if (PyLong_Check(address) && !PyBool_Check(address)) {
        found = line_of_value(self->tree->line_bytes, self->tree->line_shift, address, line);
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

/* Whether reading the truth of `flag` runs no Python code. */
static inline int
plain_flag(PyObject *flag)
{
    return flag == Py_True || flag == Py_False || flag == Py_None || PyLong_CheckExact(flag);
}

/* One access of `line` whose flag's truth may run Python code (which may use this hierarchy):
 * read it after the access, as the reference does (it marks the innermost copy after the
 * fills), then mark level 0's copy modified when it is true; return the serving level, or -1
 * with an error set. */
static Py_ssize_t
access_then_write(Hierarchy *self, uint64_t line, PyObject *is_write)
{
    Tree *tree = self->tree;
    int served = tree_access(tree, 0, line, 0);
    self->busy++;
    int write = PyObject_IsTrue(is_write);
    self->busy--;
    if (write < 0) {
        return -1;
    }
    if (write) {
        tree_receive(tree, 0, line);
    }
    return served;
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
    uint64_t line;
    if (access_line(self, address, &line) < 0) {
        return NULL;
    }
    Py_ssize_t served;
    if (plain_flag(is_write)) {
        served = tree_access(self->tree, 0, line, PyObject_IsTrue(is_write));
    }
    else {
        served = access_then_write(self, line, is_write);
        if (served < 0) {
            return NULL;
        }
    }
    return PyLong_FromSsize_t(served);
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
    Tree *tree = self->tree;
    LeafRun run;
    leaf_run_start(tree, &run, 0);
    PyObject *item;
    uint64_t done = 0;
    while ((item = PyIter_Next(iterator)) != NULL) {
        PyObject *address, *is_write;
        int failed = unpack_pair(item, &address, &is_write);
        Py_DECREF(item);
        if (failed) {
            break;
        }
        uint64_t line;
        failed = access_line(self, address, &line);
        if (!failed) {
            if (plain_flag(is_write)) {
                tree_step(tree, &run, line, PyObject_IsTrue(is_write));
            }
            else {
                int served = tree_access(tree, 0, line, 0);
                int write = PyObject_IsTrue(is_write);
                if (write > 0) {
                    tree_receive(tree, 0, line);
                }
                /* The reference's L1 fast path (an exact int hitting level 0) reads is_write
                 * before it counts the hit; its other accesses are counted before. */
                failed = write < 0;
                if (failed && served == 0 && PyLong_CheckExact(address)) {
                    tree->accesses[0]--;
                    tree->hits[0]--;
                    tree->access_count--;
                }
            }
        }
        Py_DECREF(address);
        Py_DECREF(is_write);
        if (failed || ((++done & SIGNAL_CHECK_MASK) == 0 && PyErr_CheckSignals() < 0)) {
            break;
        }
    }
    leaf_run_end(tree, &run);
    self->busy--;
    Py_DECREF(iterator);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_RETURN_NONE;
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
    PyObject *addresses, *writes = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:run_buffers", keywords, &addresses,
                                     &writes)) {
        return NULL;
    }
    if (check_ready(self) < 0) {
        return NULL;
    }
    self->busy++; /* a signal handler may run Python code */
    PyObject *result = tree_run_buffers(self->tree, 0, addresses, writes);
    self->busy--;
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
    int found = line_of_value(self->tree->line_bytes, self->tree->line_shift, address, &line);
    if (found != LINE_FITS) {
        return found == LINE_ERROR ? -1 : 0;
    }
    Level *level = &self->tree->caches[index];
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
    Tree *tree = self->tree;
    PyObject *served = counter_list(tree->hits, depth);
    if (served != NULL) {
        PyObject *memory = PyLong_FromUnsignedLongLong(tree->memory_reads);
        if (memory == NULL || PyList_Append(served, memory) < 0) {
            Py_CLEAR(served);
        }
        Py_XDECREF(memory);
    }
    PyObject *evictions = counter_list(tree->evictions, depth);
    PyObject *writebacks = counter_list(tree->writebacks, depth);
    PyObject *back_invalidations = counter_list(tree->invalidations, depth);
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
