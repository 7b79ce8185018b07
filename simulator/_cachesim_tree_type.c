/* simulator._cachesim: the cache tree's Python type (Tree: layout, runs, inspection).
 *
 * Python reference: simulator/models/coherence.py PythonCacheTree.
 * Differential test: tests/simulator/models/test_coherence_speedups.py.
 *
 * Compiled as one translation unit: simulator/_cachesim.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_cachesim.h"

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
        self->latency,      self->top_depth,     self->parent,        self->write_back,
        self->role,         self->evict_duty,    self->agent_of,      self->agent_slot,
        self->agent_tops,   self->child_start,   self->child_list,    self->leaf_index,
        self->path_start,   self->path_list,     self->path_latency,  self->private_start,
        self->private_list, self->top_position,  self->accesses,      self->hits,
        self->misses,       self->evictions,     self->writebacks,    self->invalidations,
        self->links,        self->link_order,    self->dir.slots,     self->chain_links,
        self->stack,        self->sharers,       self->order,
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
    self->path_latency = PyMem_Calloc(n * n, sizeof(double));
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
        self->path_latency == NULL || self->private_start == NULL || self->private_list == NULL ||
        self->top_position == NULL ||
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
        double *latency = self->path_latency + self->path_start[index];
        double sum = 0.0;
        for (int at = 0; at < length; at++) {
            sum += self->latency[chain[at]];
            latency[at] = sum;
        }
    }
    /* A chain (see chain_access): one leaf whose path holds every cache, no directory, and
     * every cache plain and writing back. */
    self->chain = directory < 0 && self->leaves == 1 && self->path_start[1] == self->count;
    for (int index = 0; index < self->count; index++) {
        if (!self->write_back[index] || self->role[index] != ROLE_PLAIN) {
            self->chain = 0;
        }
    }
    if (self->chain) {
        const int *path = self->path_list;
        self->chain_links = PyMem_Calloc(2 * n, sizeof(uint32_t));
        if (self->chain_links == NULL) {
            PyErr_NoMemory();
            goto error;
        }
        for (int position = 0; position < self->count; position++) {
            int next = position + 1 < self->count ? path[position + 1] : MEMORY;
            self->chain_links[2 * position] = link_index(self, next, path[position]);
            self->chain_links[2 * position + 1] = link_index(self, path[position], next);
        }
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

/* Perform the accesses of two integer buffers entering at leaf number `leaf` (writes Py_None:
 * all reads); Tree.run_buffers and Hierarchy.run_buffers run through it. */
static PyObject *
tree_run_buffers(Tree *self, int leaf, PyObject *addresses_arg, PyObject *writes_arg)
{
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
    /* The line prefetched last: a run of accesses to one line prefetches it once. A chain is not
     * prefetched: the look-ahead costs its hit-heavy traces more than it saves its random ones
     * (bench/bench_cache.py measures both parts). */
    uint64_t prefetched = UINT64_MAX;
    for (Py_ssize_t ahead = 0; ahead < PREFETCH_DISTANCE && ahead < count; ahead++) {
        int negative = 0;
        uint64_t address = item_at(&addresses, ahead, &negative);
        uint64_t line = line_shift >= 0 ? address >> line_shift : address / line_bytes;
        if (!self->chain && line != prefetched) {
            tree_prefetch(self, &run, line);
            prefetched = line;
        }
    }
    for (Py_ssize_t index = 0; index < count; index++) {
        if (!self->chain && index + PREFETCH_DISTANCE < count) {
            int negative = 0;
            uint64_t address = item_at(&addresses, index + PREFETCH_DISTANCE, &negative);
            uint64_t line = line_shift >= 0 ? address >> line_shift : address / line_bytes;
            if (line != prefetched) {
                tree_prefetch(self, &run, line);
                prefetched = line;
            }
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
    return tree_run_buffers(self, leaf, args[1], nargs > 2 ? args[2] : Py_None);
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
