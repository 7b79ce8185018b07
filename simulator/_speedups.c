/* The engine's scheduling core in C, and a cache for CPython's frame-stack chunks.
 *
 * simulator/engine.py holds the reference implementation of the same core in Python
 * (_PythonCore) and uses this one when it has been built (python -m simulator.build_speedups,
 * which ./studio setup runs). Both order events by (time, sequence) and raise the same errors
 * with the same messages; tests/simulator/test_engine.py runs every engine test on both.
 *
 * Why C (bench/RESULTS.md has the measurements):
 *  - A process that pauses runs the scheduler itself and switches straight to the next process
 *    (KnightSim's contexts, 002 section 2.2). Done in Python, that switch happens inside a fresh
 *    Python frame (`_dispatch`), which greenlet turns into a frame object on every switch; done
 *    here, the innermost Python frame at a switch is the model's own, which lives on.
 *  - Every greenlet gets its own CPython data-stack chunk (16 KiB), which CPython maps with
 *    mmap when the greenlet starts and unmaps when it ends: two system calls and a page fault
 *    per simulated process. install_chunk_cache() keeps up to CHUNK_CACHE_MAX freed chunks for
 *    the next greenlet (arena allocator hook, PyObject_SetArenaAllocator).
 *  - The same hook hands out CPython's 1 MiB object arenas from regions advised for huge pages,
 *    so that a run's objects fault their memory in 2 MiB at a time rather than 4 KiB.
 *  - A memoized `sim.computation` (the call an application model makes most) costs the engine's
 *    own event plus a memo lookup: SimCore.computation reads the memo, keeps the node's Usage
 *    (a C type, simulator/results.py holds its Python reference) and pauses, without a Python
 *    frame; every other call goes to the Python code it mirrors (simulator/api.py
 *    _PythonSimCore.computation).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <frameobject.h> /* PyFrame_Type, for the attribute guard */

#include <math.h>
#include <stdint.h>
#include <sys/mman.h>

#include "greenlet.h"

/* -- the data-stack chunk cache --------------------------------------------------------------- */

/* CPython's DATA_STACK_CHUNK_SIZE (Python/pystate.c, 3.11 to 3.13); no other arena request has
 * this size (object arenas are 1 MiB), so the cache only ever holds frame-stack chunks. */
#define CHUNK_SIZE ((size_t)16 * 1024)
/* At most 16 MiB kept: a process with a shallow stack touched one page of its chunk, a deep
 * one all four; 1024 covers the processes of most runs and bounds an idle worker's memory. */
#define CHUNK_CACHE_MAX 1024

static PyObjectArenaAllocator base_arena;
static int chunk_cache_installed = 0;
static void *chunk_cache[CHUNK_CACHE_MAX];
static Py_ssize_t chunk_cache_len = 0;
static unsigned long long chunk_cache_hits = 0;

/* -- object arenas on huge pages --
 * pymalloc's object arenas (ARENA_SIZE, 1 MiB on 64-bit builds of 3.10 to 3.13) are mapped one
 * by one, and each 4 KiB page costs a page fault when first touched: about 800 in the sandbox
 * child of a run of 1,000 processes, 2,300 in the GPU example's 1,000 pairs, a microsecond or
 * more each on a virtual machine (bench/RESULTS.md). Carved from regions of ARENA_REGION_BYTES
 * aligned to 2 MiB and advised MADV_HUGEPAGE, they fault in 2 MiB at a time where transparent
 * huge pages are enabled ("always" or "madvise"); where not, as before. A freed arena is kept
 * for the next (up to ARENA_CACHE_MAX), else unmapped: the kernel splits the huge page. A region
 * the data limit refuses falls back to an arena alone, so a run still uses memory to its limit.
 * The last region's unused part counts in the data limit (simulator.runner reserves it). */
#define ARENA_BYTES ((size_t)1 << 20)
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
#define ARENA_REGION_BYTES ((size_t)16 << 20)
#define ARENA_CACHE_MAX 64

static char *region_next = NULL, *region_end = NULL;
static void *arena_cache[ARENA_CACHE_MAX];
static Py_ssize_t arena_cache_len = 0;
static unsigned long long arena_regions = 0, arenas_carved = 0;

/* Map a region aligned to a huge page and advise huge pages for it; 0, or -1 when refused. */
static int
map_arena_region(void)
{
    size_t span = ARENA_REGION_BYTES + HUGE_PAGE_BYTES;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return -1;
    uintptr_t mask = (uintptr_t)(HUGE_PAGE_BYTES - 1);
    char *start = (char *)(((uintptr_t)raw + mask) & ~mask);
    char *end = start + ARENA_REGION_BYTES;
    if (start > raw)
        munmap(raw, (size_t)(start - raw));
    if (raw + span > end)
        munmap(end, (size_t)(raw + span - end));
    (void)madvise(start, ARENA_REGION_BYTES, MADV_HUGEPAGE); /* EINVAL without THP: still memory */
    region_next = start;
    region_end = end;
    arena_regions++;
    return 0;
}

/* An object arena: a kept one, else the next of the region (a new region when it is used up),
 * else one mapped alone. */
static void *
arena_alloc(size_t size)
{
    if (arena_cache_len > 0)
        return arena_cache[--arena_cache_len];
    if ((region_next == NULL || region_next + ARENA_BYTES > region_end) && map_arena_region() < 0)
        return base_arena.alloc(base_arena.ctx, size);
    void *arena = region_next;
    region_next += ARENA_BYTES;
    arenas_carved++;
    return arena;
}

/* The caches are plain arrays, so they are only used by a thread holding the GIL; CPython may
 * free a thread state's chunks without it (PyThreadState_Delete), and those go straight
 * through. */
static void *
chunk_alloc(void *ctx, size_t size)
{
    if (size == CHUNK_SIZE && chunk_cache_len > 0 && PyGILState_Check()) {
        chunk_cache_hits++;
        return chunk_cache[--chunk_cache_len];
    }
    if (size == ARENA_BYTES && PyGILState_Check())
        return arena_alloc(size);
    return base_arena.alloc(base_arena.ctx, size);
}

static void
chunk_free(void *ctx, void *ptr, size_t size)
{
    if (size == CHUNK_SIZE && chunk_cache_len < CHUNK_CACHE_MAX && PyGILState_Check()) {
        chunk_cache[chunk_cache_len++] = ptr;
        return;
    }
    if (size == ARENA_BYTES && arena_cache_len < ARENA_CACHE_MAX && PyGILState_Check()) {
        arena_cache[arena_cache_len++] = ptr;
        return;
    }
    base_arena.free(base_arena.ctx, ptr, size);
}

/* The module keeps its state in C globals (the process class, the cache), so it serves the main
 * interpreter only; a subinterpreter's engine runs on the pure-Python core. */
static int
check_main_interpreter(void)
{
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        PyErr_SetString(PyExc_ImportError,
                        "simulator._speedups serves the main interpreter only");
        return -1;
    }
    return 0;
}

static PyObject *
install_chunk_cache(PyObject *module, PyObject *unused)
{
    if (check_main_interpreter() < 0)
        return NULL;
    if (!chunk_cache_installed) {
        PyObjectArenaAllocator cache = {NULL, chunk_alloc, chunk_free};
        PyObject_GetArenaAllocator(&base_arena);
        PyObject_SetArenaAllocator(&cache);
        chunk_cache_installed = 1;
    }
    Py_RETURN_NONE;
}

static PyObject *
chunk_cache_stats(PyObject *module, PyObject *unused)
{
    return Py_BuildValue("{s:O,s:n,s:K,s:n,s:K,s:K,s:n}", "installed",
                         chunk_cache_installed ? Py_True : Py_False, "cached", chunk_cache_len,
                         "hits", chunk_cache_hits, "capacity", (Py_ssize_t)CHUNK_CACHE_MAX,
                         "arena_regions", arena_regions, "arenas_carved", arenas_carved,
                         "arenas_kept", arena_cache_len);
}

/* -- the scheduling core ----------------------------------------------------------------------- */

static PyTypeObject *process_type = NULL; /* simulator.engine.Process, set by set_process_type */
/* simulator.engine.StacklessProcess, set by set_stackless_types: a process that is a generator,
 * resumed by calling it, on the loop's greenlet only; and simulator.engine._Carrier, the
 * Process subclass whose greenlet such a process borrows for a call that blocks */
static PyTypeObject *stackless_type = NULL;
static PyTypeObject *carrier_type = NULL;
#define IS_PROCESS(object) \
    (Py_TYPE(object) == process_type || (Py_TYPE(object) == carrier_type && carrier_type != NULL))
static PyObject *wait_marker = NULL; /* WAIT: what a stackless process yields to wait */
/* a stackless wait's `then` that gives None for the message (a collective's receive) */
static PyObject *no_value_marker = NULL;
static PyObject *str_waiting = NULL;
/* Resume stackless process `target` with `value` (StacklessCore, below): None, or NULL with an
 * exception set. */
static PyObject *stackless_resume(PyObject *target, PyObject *value);

/* The event queue: a binary heap ordered by (when, seq), seq counting pushes, so that events at
 * the same time run in the order they were scheduled (FIFO). Events that share a time with one
 * already queued wait behind it in that event's chain instead of in the heap (a bulk-synchronous
 * model's thousands of processes wake at a handful of times): the heap holds the first of them,
 * and popping it puts the next of its chain in its place. The order is the heap's own: a chain
 * holds events of one time in seq order, each later than its head, so the head's successor is
 * still the least of what is left; two heap entries of one time (the lookup below is a cache,
 * which may have forgotten the first) are ordered by seq as before. */
typedef struct {
    double when;
    unsigned long long seq;
    PyObject *target; /* a Process to resume or start, or a callback */
    PyObject *arg;
    Py_ssize_t chain; /* the index of the chain of events queued behind this one at `when` */
} Entry;

typedef struct {
    unsigned long long seq;
    PyObject *target;
    PyObject *arg;
} Chained;

typedef struct {
    Chained *items;  /* items[head:size] wait, in seq order */
    Py_ssize_t head;
    Py_ssize_t size;
    Py_ssize_t capacity;
    Py_ssize_t next_free; /* the next free chain while this one is free */
    unsigned int generation; /* counts the chain's uses: a cached reference names one */
} Chain;

/* Where the chain of an event at a given time was last seen: a direct-mapped cache. */
typedef struct {
    double when;
    Py_ssize_t chain; /* -1: none */
    unsigned int generation;
} ChainSlot;

#define CHAIN_SLOTS 256 /* a power of 2 */

typedef struct {
    PyObject_HEAD
    double now;
    double until;
    long long events;
    Py_ssize_t live;
    unsigned long long seq;
    Entry *heap;
    Py_ssize_t size;
    Py_ssize_t capacity;
    Chain *chains;
    Py_ssize_t chains_used;     /* chains[0:chains_used] were ever taken */
    Py_ssize_t chains_capacity;
    Py_ssize_t free_chain;      /* -1: none */
    Py_ssize_t chained;         /* events waiting in chains (not in the heap) */
    ChainSlot chain_slots[CHAIN_SLOTS];
    PyObject *loop;    /* the greenlet running Engine.run, or NULL */
    PyObject *start;   /* a new process the loop must start, or NULL */
    PyObject *failure; /* the exception a callback raised, or NULL */
    PyObject *resume;     /* a stackless process (or callable) the loop must call next, or NULL */
    PyObject *resume_arg; /* ... with this argument */
} Core;

static inline int
entry_before(const Entry *a, const Entry *b)
{
    return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static inline ChainSlot *
chain_slot(Core *self, double when)
{
    unsigned long long bits;
    memcpy(&bits, &when, sizeof bits);
    return &self->chain_slots[(bits * 0x9E3779B97F4A7C15ULL) >> 56 & (CHAIN_SLOTS - 1)];
}

/* Make room for one more item in `*array` of `*capacity` items of `item_size` bytes, full:
 * double it (`first` items the first time); -1 with MemoryError set. */
static int
grow_array(void **array, Py_ssize_t *capacity, size_t item_size, Py_ssize_t first)
{
    Py_ssize_t larger = *capacity ? *capacity * 2 : first;
    void *grown = PyMem_Realloc(*array, (size_t)larger * item_size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *array = grown;
    *capacity = larger;
    return 0;
}

/* A free chain's index (its items empty), or -1 with MemoryError set. */
static Py_ssize_t
chain_take(Core *self)
{
    Py_ssize_t index = self->free_chain;
    if (index >= 0) {
        self->free_chain = self->chains[index].next_free;
        return index;
    }
    if (self->chains_used == self->chains_capacity &&
        grow_array((void **)&self->chains, &self->chains_capacity, sizeof(Chain), 64) < 0)
        return -1;
    index = self->chains_used++;
    self->chains[index] = (Chain){NULL, 0, 0, 0, -1, 0};
    return index;
}

static inline void
chain_give_back(Core *self, Py_ssize_t index)
{
    Chain *chain = &self->chains[index];
    chain->generation++; /* cached references to it are stale now */
    chain->head = chain->size = 0;
    chain->next_free = self->free_chain;
    self->free_chain = index;
}

static inline void
heap_sift_down(Entry *heap, Py_ssize_t size, Entry item)
{
    Py_ssize_t pos = 0;
    for (;;) {
        Py_ssize_t child = 2 * pos + 1;
        if (child >= size)
            break;
        if (child + 1 < size && entry_before(&heap[child + 1], &heap[child]))
            child++;
        if (!entry_before(&heap[child], &item))
            break;
        heap[pos] = heap[child];
        pos = child;
    }
    heap[pos] = item;
}

/* Steals nothing: takes new references to target and arg. */
static int
core_push(Core *self, double when, PyObject *target, PyObject *arg)
{
    ChainSlot *slot = chain_slot(self, when);
    if (slot->chain >= 0 && slot->when == when) {
        Chain *chain = &self->chains[slot->chain];
        if (chain->generation == slot->generation) { /* its head is queued: wait behind it */
            if (chain->size == chain->capacity &&
                grow_array((void **)&chain->items, &chain->capacity, sizeof(Chained), 16) < 0)
                return -1;
            chain->items[chain->size++] =
                (Chained){self->seq++, Py_NewRef(target), Py_NewRef(arg)};
            self->chained++;
            return 0;
        }
    }
    if (self->size == self->capacity &&
        grow_array((void **)&self->heap, &self->capacity, sizeof(Entry), 64) < 0)
        return -1;
    Py_ssize_t chain = chain_take(self);
    if (chain < 0)
        return -1;
    *slot = (ChainSlot){when, chain, self->chains[chain].generation};
    Entry item = {when, self->seq++, Py_NewRef(target), Py_NewRef(arg), chain};
    Entry *heap = self->heap;
    Py_ssize_t pos = self->size++;
    while (pos > 0) {
        Py_ssize_t parent = (pos - 1) >> 1;
        if (!entry_before(&item, &heap[parent]))
            break;
        heap[pos] = heap[parent];
        pos = parent;
    }
    heap[pos] = item;
    return 0;
}

/* The caller owns the references of the returned entry. */
static Entry
core_pop(Core *self)
{
    Entry *heap = self->heap;
    Entry top = heap[0];
    Chain *chain = &self->chains[top.chain];
    if (chain->head < chain->size) { /* the next event at this time takes its place */
        Chained next = chain->items[chain->head++];
        if (chain->head == chain->size)
            chain->head = chain->size = 0;
        self->chained--;
        heap_sift_down(heap, self->size, (Entry){top.when, next.seq, next.target, next.arg,
                                                  top.chain});
        return top;
    }
    chain_give_back(self, top.chain);
    Entry last = heap[--self->size];
    if (self->size > 0)
        heap_sift_down(heap, self->size, last);
    return top;
}

static int
check_delay(double delay, PyObject *given)
{
    if (!(delay >= 0.0)) {
        PyErr_Format(PyExc_ValueError, "a delay cannot be negative or NaN (got %R)", given);
        return -1;
    }
    return 0;
}

static PyObject *
current_process(const char *primitive)
{
    PyGreenlet *current = PyGreenlet_GetCurrent();
    if (current == NULL)
        return NULL;
    if (process_type == NULL || !IS_PROCESS(current)) {
        Py_DECREF(current);
        PyErr_Format(PyExc_RuntimeError, "%s can only be called from inside a simulated process",
                     primitive);
        return NULL;
    }
    return (PyObject *)current;
}

static PyObject *
switch_to(PyObject *glet, PyObject *value)
{
    PyObject *args = value == NULL ? NULL : PyTuple_Pack(1, value);
    if (value != NULL && args == NULL)
        return NULL;
    PyObject *result = PyGreenlet_Switch((PyGreenlet *)glet, args, NULL);
    Py_XDECREF(args);
    return result;
}

/* Run events from inside `current` until it is resumed; return what it is resumed with. */
static PyObject *
core_dispatch(Core *self, PyObject *current)
{
    while (self->size > 0 && self->heap[0].when <= self->until) {
        Entry entry = core_pop(self);
        self->now = entry.when;
        self->events++;
        if (entry.target == current) {
            Py_DECREF(entry.target);
            return entry.arg;
        }
        if (Py_TYPE(entry.target) == stackless_type) {
            /* a stackless process runs on the loop's greenlet, whose stack is shallow and
             * which no process waits inside: hand it over */
            if (self->resume != NULL) { /* cannot happen: the loop takes each one at once */
                Py_DECREF(entry.target);
                Py_DECREF(entry.arg);
                PyErr_SetString(PyExc_RuntimeError, "two stackless processes handed over");
                return NULL;
            }
            self->resume = entry.target;
            self->resume_arg = entry.arg;
            break;
        }
        if (IS_PROCESS(entry.target)) {
            if (PyGreenlet_ACTIVE((PyGreenlet *)entry.target)) { /* started: jump straight to it */
                PyObject *result = switch_to(entry.target, entry.arg);
                Py_DECREF(entry.target);
                Py_DECREF(entry.arg);
                return result;
            }
            /* a new greenlet inherits the stack depth of whoever starts it, so starts go
             * through the loop, whose stack is shallow */
            Py_DECREF(entry.arg);
            Py_XSETREF(self->start, entry.target);
            break;
        }
        PyObject *result = PyObject_CallOneArg(entry.target, entry.arg);
        Py_DECREF(entry.target);
        Py_DECREF(entry.arg);
        if (result == NULL) { /* a callback failed: the run ends in Engine.run */
            PyObject *type, *value, *traceback;
            PyErr_Fetch(&type, &value, &traceback);
            PyErr_NormalizeException(&type, &value, &traceback);
            if (traceback != NULL && value != NULL)
                PyException_SetTraceback(value, traceback);
            Py_XDECREF(type);
            Py_XDECREF(traceback);
            Py_XSETREF(self->failure, value);
            break;
        }
        Py_DECREF(result);
    }
    if (self->loop == NULL || self->loop == Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "the engine is not running (call Engine.run)");
        return NULL;
    }
    return switch_to(self->loop, NULL);
}

/* Pause the calling process for `duration` seconds (`given`: the object it came from, for the
 * error message); return what it is resumed with. */
static PyObject *
core_pause(Core *self, double duration, PyObject *given)
{
    if (check_delay(duration, given) < 0)
        return NULL;
    PyObject *current = current_process("pause");
    if (current == NULL)
        return NULL;
    if (core_push(self, self->now + duration, current, Py_None) < 0) {
        Py_DECREF(current);
        return NULL;
    }
    PyObject *result = core_dispatch(self, current);
    Py_DECREF(current);
    return result;
}

static PyObject *
Core_pause(Core *self, PyObject *duration_obj)
{
    double duration = PyFloat_AsDouble(duration_obj);
    if (duration == -1.0 && PyErr_Occurred())
        return NULL;
    return core_pause(self, duration, duration_obj);
}

static PyObject *
Core_suspend(Core *self, PyObject *waiting)
{
    PyObject *current = current_process("a blocking call");
    if (current == NULL)
        return NULL;
    if (PyObject_SetAttr(current, str_waiting, waiting) < 0) {
        Py_DECREF(current);
        return NULL;
    }
    PyObject *result = core_dispatch(self, current);
    Py_DECREF(current);
    return result;
}

static PyObject *
Core_push(Core *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_push(when, target, arg) takes 3 arguments");
        return NULL;
    }
    double when = PyFloat_AsDouble(args[0]);
    if (when == -1.0 && PyErr_Occurred())
        return NULL;
    if (core_push(self, when, args[1], args[2]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
Core_schedule(Core *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "schedule(delay, callback, arg=None) takes 2 or 3 arguments");
        return NULL;
    }
    double delay = PyFloat_AsDouble(args[0]);
    if (delay == -1.0 && PyErr_Occurred())
        return NULL;
    if (check_delay(delay, args[0]) < 0)
        return NULL;
    if (core_push(self, self->now + delay, args[1], nargs == 3 ? args[2] : Py_None) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
Core_wake(Core *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "wake(proc, value=None) takes 1 or 2 arguments");
        return NULL;
    }
    if (PyObject_SetAttr(args[0], str_waiting, Py_None) < 0)
        return NULL;
    if (core_push(self, self->now, args[0], nargs == 2 ? args[1] : Py_None) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* What a process left the loop when it switched back to it: a failed callback (raised here), a
 * process to start, a stackless process to resume (core_dispatch, Core.hand_over); each may
 * leave another. -1 with an exception set on failure. */
static int
core_settle(Core *self)
{
    for (;;) {
        PyObject *result;
        if (self->failure != NULL) {
            PyObject *failure = self->failure;
            self->failure = NULL;
            PyErr_SetObject((PyObject *)Py_TYPE(failure), failure);
            Py_DECREF(failure);
            return -1;
        }
        if (self->start != NULL) {
            PyObject *start = self->start;
            self->start = NULL;
            result = switch_to(start, Py_None);
            Py_DECREF(start);
        }
        else if (self->resume != NULL) {
            PyObject *target = self->resume, *arg = self->resume_arg;
            self->resume = self->resume_arg = NULL;
            result = Py_TYPE(target) == stackless_type ? stackless_resume(target, arg)
                                                       : PyObject_CallOneArg(target, arg);
            Py_DECREF(target);
            Py_DECREF(arg);
        }
        else
            return 0;
        if (result == NULL)
            return -1;
        Py_DECREF(result);
    }
}

/* Core.hand_over(target, arg): have the loop call `target(arg)` as soon as control reaches it,
 * before any other event (a stackless process's borrowed greenlet, when its call is done). */
static PyObject *
Core_hand_over(Core *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "hand_over(target, arg) takes 2 arguments");
        return NULL;
    }
    if (self->resume != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the loop already has a process to resume");
        return NULL;
    }
    self->resume = Py_NewRef(args[0]);
    self->resume_arg = Py_NewRef(args[1]);
    Py_RETURN_NONE;
}

static void prefetch_next_events(const Core *self);

/* The loop of Engine.run: returns True when the queue ran dry, False when the next event lies
 * past `until` (the clock is then at `until`). */
static PyObject *
Core_run_loop(Core *self, PyObject *unused)
{
    for (;;) {
        if (self->size == 0)
            Py_RETURN_TRUE;
        if (self->heap[0].when > self->until) {
            self->now = self->until;
            Py_RETURN_FALSE;
        }
        Entry entry = core_pop(self);
        self->now = entry.when;
        self->events++;
        prefetch_next_events(self);
        PyObject *result;
        if (IS_PROCESS(entry.target)) /* back when a process ends, starts or runs dry */
            result = switch_to(entry.target, entry.arg);
        else if (Py_TYPE(entry.target) == stackless_type)
            result = stackless_resume(entry.target, entry.arg);
        else
            result = PyObject_CallOneArg(entry.target, entry.arg);
        Py_DECREF(entry.target);
        Py_DECREF(entry.arg);
        if (result == NULL)
            return NULL;
        Py_DECREF(result);
        if (core_settle(self) < 0)
            return NULL;
    }
}

static PyObject *
Core_get_pending(Core *self, void *closure)
{
    return PyLong_FromSsize_t(self->size + self->chained);
}

static PyObject *
Core_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    Core *self = (Core *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->now = 0.0;
        self->until = INFINITY;
        self->free_chain = -1;
        for (int i = 0; i < CHAIN_SLOTS; i++)
            self->chain_slots[i].chain = -1;
    }
    return (PyObject *)self;
}

static int
Core_traverse(Core *self, visitproc visit, void *arg)
{
    for (Py_ssize_t i = 0; i < self->size; i++) {
        Py_VISIT(self->heap[i].target);
        Py_VISIT(self->heap[i].arg);
    }
    for (Py_ssize_t c = 0; c < self->chains_used; c++) {
        const Chain *chain = &self->chains[c];
        for (Py_ssize_t i = chain->head; i < chain->size; i++) {
            Py_VISIT(chain->items[i].target);
            Py_VISIT(chain->items[i].arg);
        }
    }
    Py_VISIT(self->loop);
    Py_VISIT(self->start);
    Py_VISIT(self->failure);
    Py_VISIT(self->resume);
    Py_VISIT(self->resume_arg);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
Core_clear(Core *self)
{
    /* detach the queue first: a decref below may run code that schedules on this engine */
    Entry *heap = self->heap;
    Py_ssize_t size = self->size;
    Chain *chains = self->chains;
    Py_ssize_t chains_used = self->chains_used;
    self->heap = NULL;
    self->size = self->capacity = 0;
    self->chains = NULL;
    self->chains_used = self->chains_capacity = self->chained = 0;
    self->free_chain = -1;
    for (int i = 0; i < CHAIN_SLOTS; i++)
        self->chain_slots[i].chain = -1;
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_DECREF(heap[i].target);
        Py_DECREF(heap[i].arg);
    }
    PyMem_Free(heap);
    for (Py_ssize_t c = 0; c < chains_used; c++) {
        for (Py_ssize_t i = chains[c].head; i < chains[c].size; i++) {
            Py_DECREF(chains[c].items[i].target);
            Py_DECREF(chains[c].items[i].arg);
        }
        PyMem_Free(chains[c].items);
    }
    PyMem_Free(chains);
    Py_CLEAR(self->loop);
    Py_CLEAR(self->start);
    Py_CLEAR(self->failure);
    Py_CLEAR(self->resume);
    Py_CLEAR(self->resume_arg);
    return 0;
}

static void
Core_dealloc(Core *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    do { /* again if a decref scheduled something on the dying engine */
        Core_clear(self);
    } while (self->heap != NULL || self->chains != NULL);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMethodDef Core_methods[] = {
    {"pause", (PyCFunction)Core_pause, METH_O,
     "Let simulated time pass for the calling process (KnightSim `pause`)."},
    {"suspend", (PyCFunction)Core_suspend, METH_O,
     "Block the calling process until someone `wake`s it; return the value it is woken with."},
    {"schedule", (PyCFunction)(void (*)(void))Core_schedule, METH_FASTCALL,
     "Run `callback(arg)` `delay` seconds from now; it must not block."},
    {"wake", (PyCFunction)(void (*)(void))Core_wake, METH_FASTCALL,
     "Resume the blocked process `proc` at the current time; `suspend` returns `value`."},
    {"_push", (PyCFunction)(void (*)(void))Core_push, METH_FASTCALL, NULL},
    {"_run_loop", (PyCFunction)Core_run_loop, METH_NOARGS, NULL},
    {"hand_over", (PyCFunction)(void (*)(void))Core_hand_over, METH_FASTCALL,
     "Have the loop call target(arg) as soon as control reaches it, before any other event."},
    {NULL},
};

static PyMemberDef Core_members[] = {
    {"now", T_DOUBLE, offsetof(Core, now), 0, "The simulated time, in seconds."},
    {"events", T_LONGLONG, offsetof(Core, events), 0, "How many events have run."},
    {"_until", T_DOUBLE, offsetof(Core, until), 0, NULL},
    {"_live", T_PYSSIZET, offsetof(Core, live), 0, NULL},
    {"_loop", T_OBJECT, offsetof(Core, loop), 0, NULL}, /* set by Engine.run, never to None */
    {NULL},
};

static PyGetSetDef Core_getset[] = {
    {"pending", (getter)Core_get_pending, NULL, "How many events are scheduled and not yet run.",
     NULL},
    {NULL},
};

static PyType_Slot Core_slots[] = {
    {Py_tp_doc, "The event queue, the clock and the scheduler, in C (see simulator/engine.py)."},
    {Py_tp_new, Core_new},
    {Py_tp_dealloc, Core_dealloc},
    {Py_tp_traverse, Core_traverse},
    {Py_tp_clear, Core_clear},
    {Py_tp_methods, Core_methods},
    {Py_tp_members, Core_members},
    {Py_tp_getset, Core_getset},
    {0, NULL},
};

static PyType_Spec Core_spec = {
    .name = "simulator._speedups.Core",
    .basicsize = sizeof(Core),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = Core_slots,
};

/* -- a component instance's usage (simulator/results.py Usage, its Python reference) ---------- */

static PyTypeObject *core_type = NULL;  /* Core, made at import */
static PyTypeObject *sim_core_type = NULL; /* SimCore, made at import */
static PyTypeObject *usage_type = NULL; /* Usage, made at import */
static PyObject *str_add_busy = NULL;

typedef struct {
    PyObject_HEAD
    PyObject *node;
    PyObject *instance;
    Py_ssize_t capacity;
    Py_ssize_t active;
    double busy_s;
    double load_s;
    double since;
    double busy_from; /* the busy period not recorded yet: [busy_from, busy_to] */
    double busy_to;
    PyObject *track; /* the run's Timeline, or NULL / None */
} Usage;

static int
Usage_init(Usage *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"node", "instance", "capacity", NULL};
    PyObject *node, *instance;
    Py_ssize_t capacity;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOn", names, &node, &instance, &capacity))
        return -1;
    Py_XSETREF(self->node, Py_NewRef(node));
    Py_XSETREF(self->instance, Py_NewRef(instance));
    self->capacity = capacity > 1 ? capacity : 1;
    self->active = 0;
    self->busy_s = self->load_s = self->since = self->busy_from = self->busy_to = 0.0;
    Py_CLEAR(self->track);
    return 0;
}

static inline int
usage_tracked(Usage *self)
{
    return self->track != NULL && self->track != Py_None;
}

/* timeline.add_busy(node, instance, start, end), in C where the timeline is results.Timeline
 * (below, with the timeline's entries); -1 on error. */
static int keep_busy(PyObject *timeline, PyObject *node, PyObject *instance, double start,
                     double end);

static int
usage_record_busy(Usage *self)
{
    if (!usage_tracked(self) || !(self->busy_to > self->busy_from))
        return 0;
    return keep_busy(self->track, self->node, self->instance, self->busy_from, self->busy_to);
}

/* The load a busy instance carries: processes on it / its capacity, at most 1. */
static inline double
usage_load(Usage *self, Py_ssize_t active)
{
    Py_ssize_t loaded = active < self->capacity ? active : self->capacity;
    return (double)loaded / (double)self->capacity;
}

static int
usage_start(Usage *self, double now)
{
    Py_ssize_t active = self->active;
    if (active) {
        double elapsed = now - self->since;
        self->busy_s += elapsed;
        self->load_s += elapsed * usage_load(self, active);
    }
    else if (usage_tracked(self) && now > self->busy_to) { /* after a break: a new period */
        if (usage_record_busy(self) < 0)
            return -1;
        self->busy_from = now;
    }
    self->since = now;
    self->active = active + 1;
    return 0;
}

static void
usage_stop(Usage *self, double now)
{
    Py_ssize_t active = self->active;
    double elapsed = now - self->since;
    self->busy_s += elapsed;
    self->load_s += elapsed * usage_load(self, active);
    self->since = now;
    self->active = active - 1;
    if (active == 1)
        self->busy_to = now;
}

static PyObject *
Usage_start(Usage *self, PyObject *now_obj)
{
    double now = PyFloat_AsDouble(now_obj);
    if (now == -1.0 && PyErr_Occurred())
        return NULL;
    if (usage_start(self, now) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
Usage_stop(Usage *self, PyObject *now_obj)
{
    double now = PyFloat_AsDouble(now_obj);
    if (now == -1.0 && PyErr_Occurred())
        return NULL;
    usage_stop(self, now);
    Py_RETURN_NONE;
}

static PyObject *
Usage_close(Usage *self, PyObject *now_obj)
{
    double now = PyFloat_AsDouble(now_obj);
    if (now == -1.0 && PyErr_Occurred())
        return NULL;
    if (self->active)
        self->busy_to = now;
    if (usage_record_busy(self) < 0)
        return NULL;
    self->busy_from = self->busy_to;
    Py_RETURN_NONE;
}

static PyObject *
Usage_record_busy(Usage *self, PyObject *unused)
{
    if (usage_record_busy(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int
Usage_traverse(Usage *self, visitproc visit, void *arg)
{
    Py_VISIT(self->node);
    Py_VISIT(self->instance);
    Py_VISIT(self->track);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
Usage_clear(Usage *self)
{
    Py_CLEAR(self->node);
    Py_CLEAR(self->instance);
    Py_CLEAR(self->track);
    return 0;
}

static void
Usage_dealloc(Usage *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Usage_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMethodDef Usage_methods[] = {
    {"start", (PyCFunction)Usage_start, METH_O,
     "Record that one more process or transfer keeps the instance busy from `now`."},
    {"stop", (PyCFunction)Usage_stop, METH_O,
     "Record that one process or transfer stopped using the instance at `now`."},
    {"close", (PyCFunction)Usage_close, METH_O,
     "Record the last busy period on the track at the end of the run (`now`)."},
    {"_record_busy", (PyCFunction)Usage_record_busy, METH_NOARGS, NULL},
    {NULL},
};

static PyMemberDef Usage_members[] = {
    {"node", T_OBJECT, offsetof(Usage, node), 0, NULL},
    {"instance", T_OBJECT, offsetof(Usage, instance), 0, NULL},
    {"capacity", T_PYSSIZET, offsetof(Usage, capacity), 0, NULL},
    {"active", T_PYSSIZET, offsetof(Usage, active), 0, NULL},
    {"busy_s", T_DOUBLE, offsetof(Usage, busy_s), 0, NULL},
    {"load_s", T_DOUBLE, offsetof(Usage, load_s), 0, NULL},
    {"_since", T_DOUBLE, offsetof(Usage, since), 0, NULL},
    {"_busy_from", T_DOUBLE, offsetof(Usage, busy_from), 0, NULL},
    {"_busy_to", T_DOUBLE, offsetof(Usage, busy_to), 0, NULL},
    {"track", T_OBJECT, offsetof(Usage, track), 0, NULL},
    {NULL},
};

static PyType_Slot Usage_slots[] = {
    {Py_tp_doc, "Busy time and load integral of one component instance, in C (see "
                "simulator/results.py PythonUsage, the reference)."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, Usage_init},
    {Py_tp_dealloc, Usage_dealloc},
    {Py_tp_traverse, Usage_traverse},
    {Py_tp_clear, Usage_clear},
    {Py_tp_methods, Usage_methods},
    {Py_tp_members, Usage_members},
    {0, NULL},
};

static PyType_Spec Usage_spec = {
    .name = "simulator._speedups.Usage",
    .basicsize = sizeof(Usage),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = Usage_slots,
};

/* -- the sim API's hot path (simulator/api.py _PythonSimCore, its Python reference) ----------- */

static PyTypeObject *plain_params_type = NULL; /* simulator.api.HashMap, besides dict */
static PyObject *str_computation_time = NULL, *str_computation_fallback = NULL,
                *str_computation_memo = NULL,
                *str_record_computation = NULL, *str_compute_s = NULL, *str_full = NULL,
                *str_dropped = NULL, *str_pause = NULL, *str_start = NULL, *str_stop = NULL,
                *empty_tuple = NULL;
/* a timeline entry's keys and what keeping one reads (simulator/results.py Timeline) */
static PyObject *str_process = NULL, *str_kind = NULL, *str_compute = NULL, *str_start_s = NULL,
                *str_end_s = NULL, *str_entries = NULL, *str_limit = NULL,
                *str_cuda_core_instructions = NULL, *str_index = NULL, *str_receive = NULL,
                *str_size = NULL, *str_collectives = NULL, *str_barrier = NULL, *one_int = NULL,
                *str_sent_at = NULL, *str_wait_s = NULL, *str_comm_s = NULL,
                *str_index_room = NULL, *str_targets = NULL, *str_state = NULL,
                *str_p2p_send_fallback = NULL;

/* -- a `__slots__` attribute read and written without the attribute protocol's lookups -------- */

/* Where one named slot lies in instances of the last class it was found in: `slot_address`
 * finds the class's member descriptor once (and again only when the class changes or is
 * modified), then reads the instance's slot at its offset, as the descriptor would. */
typedef struct {
    PyObject **name;       /* the attribute's interned name (a str_* global) */
    PyTypeObject *type;    /* the class last seen (a borrowed pointer, compared only) */
    unsigned int version;  /* its tp_version_tag then: a change to the class makes it differ */
    Py_ssize_t offset;     /* the slot's offset in its instances */
} SlotCache;

/* The address of `owner`'s slot named `cache->name`, or NULL (no error) when the attribute is
 * not a plain writable slot of a class with the default attribute protocol: the caller then
 * uses the attribute protocol itself. */
static PyObject **
slot_address(PyObject *owner, SlotCache *cache)
{
    PyTypeObject *type = Py_TYPE(owner);
    if (type != cache->type || type->tp_version_tag != cache->version ||
        !(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) {
        cache->type = NULL;
        if (type->tp_getattro != PyObject_GenericGetAttr ||
            type->tp_setattro != PyObject_GenericSetAttr)
            return NULL;
        PyObject *descriptor = _PyType_Lookup(type, *cache->name); /* borrowed; sets the tag */
        if (descriptor == NULL || !Py_IS_TYPE(descriptor, &PyMemberDescr_Type) ||
            !(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
            return NULL;
        PyMemberDef *member = ((PyMemberDescrObject *)descriptor)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY))
            return NULL;
        cache->type = type;
        cache->version = type->tp_version_tag;
        cache->offset = member->offset;
    }
    return (PyObject **)((char *)owner + cache->offset);
}

/* `owner.<name>` as a new reference (the slot's value, or the attribute protocol's). */
static PyObject *
slot_get(PyObject *owner, SlotCache *cache)
{
    PyObject **slot = slot_address(owner, cache);
    if (slot != NULL && *slot != NULL)
        return Py_NewRef(*slot);
    return PyObject_GetAttr(owner, *cache->name); /* no slot, or unset: its error */
}

/* `owner.<name> = value`; -1 on error. */
static int
slot_set(PyObject *owner, SlotCache *cache, PyObject *value)
{
    PyObject **slot = slot_address(owner, cache);
    if (slot == NULL)
        return PyObject_SetAttr(owner, *cache->name, value);
    Py_XSETREF(*slot, Py_NewRef(value));
    return 0;
}

static SlotCache compute_s_slot = {&str_compute_s}, full_slot = {&str_full},
                 dropped_slot = {&str_dropped}, entries_slot = {&str_entries},
                 limit_slot = {&str_limit}, index_slot = {&str_index},
                 sent_at_slot = {&str_sent_at}, wait_s_slot = {&str_wait_s},
                 comm_s_slot = {&str_comm_s}, index_room_slot = {&str_index_room},
                 targets_slot = {&str_targets}, state_slot = {&str_state};

/* -- the memo's index: a computation's duration found from its params without a key --------- */

static PyTypeObject *memo_type = NULL; /* simulator.shallow.Memo, set by set_memo_type */

/* Whether `memo` is a memo SimCore reads: a dict (tests give one) or a Memo. */
static inline int
is_memo(PyObject *memo)
{
    return PyDict_CheckExact(memo) || (memo_type != NULL && Py_TYPE(memo) == memo_type);
}

/* The memo's value for params of `count` items, from its index (simulator.shallow.Memo.index):
 * index[count][name0][value0][name1][value1]... is the value of memo_key("computationTime",
 * (), params), and it holds only keys the memo held (index_insert), so a value found here is
 * the memo's. Returns a borrowed float, or NULL: not indexed (no error), or an error (an
 * unhashable parameter raises TypeError, as the memo's lookup would). */
static PyObject *
index_lookup(PyObject *index, PyObject *params)
{
    Py_ssize_t count = PyDict_GET_SIZE(params), position = 0;
    PyObject *count_obj = PyLong_FromSsize_t(count);
    if (count_obj == NULL)
        return NULL;
    PyObject *level = PyDict_GetItemWithError(index, count_obj);
    Py_DECREF(count_obj);
    PyObject *name, *value;
    while (level != NULL && PyDict_Next(params, &position, &name, &value)) {
        if (!PyDict_CheckExact(level))
            return NULL;
        level = PyDict_GetItemWithError(level, name);
        if (level == NULL)
            return NULL;
        if (!PyDict_CheckExact(level))
            return NULL;
        level = PyDict_GetItemWithError(level, value);
    }
    return level != NULL && PyFloat_CheckExact(level) ? level : NULL;
}

/* Put the memo's `duration` for `params` in the index, creating the levels it needs while
 * `*room` (the dicts the index may still make) allows: without room the params stay out of
 * the index (their lookups build the key). -1 on error. Called only with a value just read
 * from the memo under the same params. */
static int
index_insert(PyObject *index, PyObject *params, PyObject *duration, Py_ssize_t *room)
{
    Py_ssize_t count = PyDict_GET_SIZE(params), position = 0, seen = 0;
    PyObject *key = PyLong_FromSsize_t(count);
    if (key == NULL)
        return -1;
    PyObject *level = index; /* borrowed throughout: each level is held by the one above */
    PyObject *name, *value;
    /* the keys in turn: count, then name0, value0, name1, value1...; the last one's value is
     * the duration, every other's a dict */
    int status = 0;
    for (;;) {
        PyObject *next_key = NULL;
        int last;
        if (key == NULL) { /* the next name or value */
            if (seen % 2 == 0) {
                if (!PyDict_Next(params, &position, &name, &value))
                    break;
                next_key = Py_NewRef(name);
            } else
                next_key = Py_NewRef(value);
            seen++;
            key = next_key;
        }
        last = seen == 2 * count;
        if (last) {
            status = PyDict_SetItem(level, key, duration);
            Py_DECREF(key);
            return status;
        }
        PyObject *below = PyDict_GetItemWithError(level, key);
        if (below == NULL) {
            if (PyErr_Occurred()) {
                Py_DECREF(key);
                return -1;
            }
            if (*room <= 0) { /* the index is as large as it may grow */
                Py_DECREF(key);
                return 0;
            }
            --*room;
            below = PyDict_New();
            if (below == NULL || PyDict_SetItem(level, key, below) < 0) {
                Py_XDECREF(below);
                Py_DECREF(key);
                return -1;
            }
            Py_DECREF(below); /* `level` holds it */
        } else if (!PyDict_CheckExact(below)) {
            Py_DECREF(key);
            return 0; /* not an index this code made: leave it */
        }
        Py_DECREF(key);
        key = NULL;
        level = below;
    }
    return status;
}

/* index_insert with the room the memo gives (Memo.index_room, updated); -1 on error. */
static int
index_insert_bounded(PyObject *memo, PyObject *index, PyObject *params, PyObject *duration)
{
    PyObject *room_obj = slot_get(memo, &index_room_slot);
    if (room_obj == NULL)
        return -1;
    Py_ssize_t room = PyLong_AsSsize_t(room_obj);
    Py_DECREF(room_obj);
    if (room == -1 && PyErr_Occurred())
        return -1;
    Py_ssize_t before = room;
    if (index_insert(index, params, duration, &room) < 0)
        return -1;
    if (room == before)
        return 0;
    room_obj = PyLong_FromSsize_t(room);
    if (room_obj == NULL)
        return -1;
    int status = slot_set(memo, &index_room_slot, room_obj);
    Py_DECREF(room_obj);
    return status;
}

typedef struct {
    PyObject_HEAD
    PyObject *details;
    PyObject *engine;
    PyObject *figures;
    PyObject *memo;
    PyObject *process; /* the process's name, for its timeline entries */
    PyObject *timeline;
    PyObject *usage;
    PyObject *stackless;      /* the process when it is a StacklessProcess, else NULL / None */
    PyObject *pending;        /* a stackless computation's duration while it runs, or NULL */
    PyObject *pending_params; /* ... its params */
    PyObject *pending_detail; /* ... the model's computationDetail for it, or NULL */
    PyObject *continuation;   /* what turns a stackless wait's value into the call's, or NULL */
    double pending_start;     /* ... and when it started */
    PyObject *receive_then;   /* a stackless receive's `then(message)` while it waits, or NULL */
    double receive_started;   /* ... and when the receive began */
} SimCore;

/* Return the memo key of computationTime(params) (simulator.shallow.memo_key), or NULL. */
static PyObject *
computation_key(PyObject *params)
{
    Py_ssize_t count = PyDict_GET_SIZE(params), index = 0, position = 0;
    PyObject *items = PyTuple_New(count);
    if (items == NULL)
        return NULL;
    PyObject *name, *value;
    while (PyDict_Next(params, &position, &name, &value)) {
        if (index == count) { /* cannot happen: nothing runs between here and PyTuple_New */
            Py_DECREF(items);
            PyErr_SetString(PyExc_RuntimeError, "params changed size during the lookup");
            return NULL;
        }
        PyObject *pair = PyTuple_Pack(2, name, value);
        if (pair == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        PyTuple_SET_ITEM(items, index++, pair);
    }
    PyObject *key = PyTuple_Pack(3, str_computation_time, empty_tuple, items);
    Py_DECREF(items);
    return key;
}

/* Add `value` (a number) to the attribute of `owner` that `cache` names (a slot, read and
 * written in place, or any attribute through the attribute protocol). */
static int
add_to_attribute(PyObject *owner, SlotCache *cache, PyObject *value)
{
    PyObject *old = slot_get(owner, cache);
    if (old == NULL)
        return -1;
    PyObject *sum = PyNumber_Add(old, value);
    Py_DECREF(old);
    if (sum == NULL)
        return -1;
    int status = slot_set(owner, cache, sum);
    Py_DECREF(sum);
    return status;
}

static PyObject *str_busy = NULL, *str_busy_dropped = NULL, *str_node_key = NULL,
                *str_instance_key = NULL;
static SlotCache busy_slot = {&str_busy}, busy_dropped_slot = {&str_busy_dropped};

/* Timeline.add_busy(node, instance, start, end) (results.py, its Python reference): one busy
 * period of a component instance kept in `busy`, or counted in `busy_dropped` once `busy`
 * holds `limit` of them; a timeline of another kind is asked by name. -1 on error. */
static int
keep_busy(PyObject *timeline, PyObject *node, PyObject *instance, double start, double end)
{
    PyObject *start_obj = PyFloat_FromDouble(start);
    PyObject *end_obj = start_obj == NULL ? NULL : PyFloat_FromDouble(end);
    if (end_obj == NULL) {
        Py_XDECREF(start_obj);
        return -1;
    }
    int status = -1;
    PyObject *busy = slot_get(timeline, &busy_slot);
    if (busy == NULL || !PyList_CheckExact(busy)) { /* not a results.Timeline: its method */
        Py_XDECREF(busy);
        PyErr_Clear();
        PyObject *call[] = {timeline, node, instance, start_obj, end_obj};
        PyObject *result = PyObject_VectorcallMethod(str_add_busy, call,
                                                     5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        status = result == NULL ? -1 : 0;
        Py_XDECREF(result);
    } else {
        PyObject *limit_obj = slot_get(timeline, &limit_slot);
        Py_ssize_t limit = limit_obj == NULL ? -1 : PyLong_AsSsize_t(limit_obj);
        Py_XDECREF(limit_obj);
        if (!(limit == -1 && PyErr_Occurred())) {
            if (PyList_GET_SIZE(busy) >= limit)
                status = add_to_attribute(timeline, &busy_dropped_slot, one_int);
            else {
                /* the keys in add_busy's order: the JSON of the result is the same */
                PyObject *entry = PyDict_New();
                if (entry != NULL && PyDict_SetItem(entry, str_node_key, node) == 0 &&
                    PyDict_SetItem(entry, str_instance_key, instance) == 0 &&
                    PyDict_SetItem(entry, str_start_s, start_obj) == 0 &&
                    PyDict_SetItem(entry, str_end_s, end_obj) == 0)
                    status = PyList_Append(busy, entry);
                Py_XDECREF(entry);
            }
        }
        Py_DECREF(busy);
    }
    Py_DECREF(start_obj);
    Py_DECREF(end_obj);
    return status;
}

/* Call `owner.<name>(now)`; -1 on error. */
static int
call_with_time(PyObject *owner, PyObject *name, double now)
{
    PyObject *time = PyFloat_FromDouble(now);
    if (time == NULL)
        return -1;
    PyObject *result = PyObject_CallMethodOneArg(owner, name, time);
    Py_DECREF(time);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* `_PythonSimCore._pause_computing` without its timeline entry: keep the usage busy while the
 * process pauses `duration` seconds and count them as its computing; the start and end times
 * in *start and *end. */
static int
pause_held(PyObject *engine, PyObject *usage, PyObject *figures, PyObject *duration_obj,
           double *start, double *end);

static int
pause_computing(SimCore *self, PyObject *duration_obj, double *start, double *end)
{
    if (self->engine == NULL || self->usage == NULL || self->figures == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "sim.computation: the process is not set up");
        return -1;
    }
    /* Strong references for the pause: other code runs while this process waits. */
    PyObject *engine = Py_NewRef(self->engine);
    PyObject *usage = Py_NewRef(self->usage);
    PyObject *figures = Py_NewRef(self->figures);
    int status = pause_held(engine, usage, figures, duration_obj, start, end);
    Py_DECREF(engine);
    Py_DECREF(usage);
    Py_DECREF(figures);
    return status;
}

static int
pause_held(PyObject *engine, PyObject *usage, PyObject *figures, PyObject *duration_obj,
           double *start, double *end)
{
    double duration = PyFloat_AS_DOUBLE(duration_obj);
    int is_core = PyObject_TypeCheck(engine, core_type);
    int is_usage = Py_TYPE(usage) == usage_type;
    double now;
    if (is_core)
        now = ((Core *)engine)->now;
    else {
        PyObject *clock = PyObject_GetAttrString(engine, "now");
        now = clock == NULL ? -1.0 : PyFloat_AsDouble(clock);
        Py_XDECREF(clock);
        if (now == -1.0 && PyErr_Occurred())
            return -1;
    }
    *start = now;
    if (is_usage ? usage_start((Usage *)usage, now) : call_with_time(usage, str_start, now))
        return -1;
    PyObject *resumed = is_core ? core_pause((Core *)engine, duration, duration_obj)
                                : PyObject_CallMethodOneArg(engine, str_pause, duration_obj);
    if (resumed == NULL)
        return -1;
    Py_DECREF(resumed);
    if (is_core)
        now = ((Core *)engine)->now;
    else {
        PyObject *clock = PyObject_GetAttrString(engine, "now");
        now = clock == NULL ? -1.0 : PyFloat_AsDouble(clock);
        Py_XDECREF(clock);
        if (now == -1.0 && PyErr_Occurred())
            return -1;
    }
    *end = now;
    if (is_usage)
        usage_stop((Usage *)usage, now);
    else if (call_with_time(usage, str_stop, now) < 0)
        return -1;
    return add_to_attribute(figures, &compute_s_slot, duration_obj);
}

/* The memoized computation: `duration`, or NULL without an error when the Python code must
 * answer (not plain params, no memo, a detail to add, a value not known). */
static PyObject *
memoized_duration(SimCore *self, PyObject *params)
{
    if (!PyDict_CheckExact(params) && Py_TYPE(params) != plain_params_type)
        return NULL;
    PyObject *memo = self->memo;
    if (memo == NULL || memo == Py_None)
        return NULL;
    if (!is_memo(memo)) { /* api._MEMO_UNKNOWN: the process's first computation */
        memo = PyObject_CallMethodNoArgs((PyObject *)self, str_computation_memo);
        if (memo == NULL)
            return NULL;
        Py_XSETREF(self->memo, memo);
        if (!is_memo(memo)) /* None: the model is asked every time, in Python */
            return NULL;
    }
    if (self->details != NULL && self->details != Py_None)
        return NULL;
    PyObject *index = NULL; /* the memo's index, when it has one (simulator.shallow.Memo) */
    if (Py_TYPE(memo) == memo_type) {
        index = slot_get(memo, &index_slot);
        if (index == NULL)
            return NULL;
        if (!PyDict_CheckExact(index))
            Py_CLEAR(index);
    }
    if (index != NULL) {
        PyObject *found = index_lookup(index, params);
        if (found != NULL) {
            Py_DECREF(index);
            return Py_NewRef(found);
        }
        if (PyErr_Occurred()) { /* an unhashable parameter (a list): the general path */
            Py_DECREF(index);
            if (PyErr_ExceptionMatches(PyExc_TypeError))
                PyErr_Clear();
            return NULL;
        }
    }
    PyObject *key = computation_key(params);
    if (key == NULL) {
        Py_XDECREF(index);
        if (PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_Clear();
        return NULL;
    }
    PyObject *duration = PyDict_GetItemWithError(memo, key);
    Py_DECREF(key);
    if (duration == NULL || !PyFloat_CheckExact(duration)) {
        /* not known, or not a float (the memo holds floats: anything else, Python decides) */
        Py_XDECREF(index);
        if (duration == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) /* unhashable */
            PyErr_Clear();
        return NULL;
    }
    Py_INCREF(duration);
    if (index != NULL) { /* the next lookup of these params needs no key */
        int status = index_insert_bounded(memo, index, params, duration);
        Py_DECREF(index);
        if (status < 0) {
            Py_DECREF(duration);
            return NULL;
        }
    }
    return duration;
}

static int keep_entry_with(PyObject *timeline, PyObject *process, PyObject *kind, double start,
                           double end, PyObject *keys, PyObject *const *values);

/* `Timeline.add(process, kind, start, end)` on a timeline that is not full: append the entry
 * and note whether the timeline is now full; -1 on error. */
static int
keep_entry(PyObject *timeline, PyObject *process, PyObject *kind, double start, double end)
{
    return keep_entry_with(timeline, process, kind, start, end, NULL, NULL);
}

/* `keep_entry` with the entry's further items: `keys` (a tuple of str, or NULL for none) and
 * their `values`, in that order after the four of every entry: `Timeline.add(process, kind,
 * start, end, **dict(zip(keys, values)))` for a kind that is not "compute". */
static int
keep_entry_with(PyObject *timeline, PyObject *process, PyObject *kind, double start, double end,
                PyObject *keys, PyObject *const *values)
{
    PyObject *entries = slot_get(timeline, &entries_slot);
    if (entries == NULL)
        return -1;
    if (!PyList_CheckExact(entries)) {
        Py_DECREF(entries);
        PyErr_SetString(PyExc_TypeError, "the timeline's entries are not a list");
        return -1;
    }
    PyObject *entry = PyDict_New();
    PyObject *start_obj = entry == NULL ? NULL : PyFloat_FromDouble(start);
    PyObject *end_obj = start_obj == NULL ? NULL : PyFloat_FromDouble(end);
    int status = -1;
    /* the keys in Timeline.add's order: the JSON of the result is the same */
    if (end_obj != NULL && PyDict_SetItem(entry, str_process, process) == 0 &&
        PyDict_SetItem(entry, str_kind, kind) == 0 &&
        PyDict_SetItem(entry, str_start_s, start_obj) == 0 &&
        PyDict_SetItem(entry, str_end_s, end_obj) == 0) {
        status = 0;
        Py_ssize_t count = keys == NULL ? 0 : PyTuple_GET_SIZE(keys);
        for (Py_ssize_t index = 0; index < count && status == 0; index++)
            status = PyDict_SetItem(entry, PyTuple_GET_ITEM(keys, index), values[index]);
        if (status == 0)
            status = PyList_Append(entries, entry);
    }
    Py_XDECREF(entry);
    Py_XDECREF(start_obj);
    Py_XDECREF(end_obj);
    Py_ssize_t kept = PyList_GET_SIZE(entries);
    Py_DECREF(entries);
    if (status < 0)
        return -1;
    PyObject *limit_obj = slot_get(timeline, &limit_slot);
    if (limit_obj == NULL)
        return -1;
    Py_ssize_t limit = PyLong_AsSsize_t(limit_obj);
    Py_DECREF(limit_obj);
    if (limit == -1 && PyErr_Occurred())
        return -1;
    return kept >= limit ? slot_set(timeline, &full_slot, Py_True) : 0;
}

/* Timeline.add's first step: when the timeline is full, count one more dropped entry and
 * return 1; 0 when it keeps entries; -1 on error. */
static int
counted_as_dropped(PyObject *timeline)
{
    PyObject *full = slot_get(timeline, &full_slot);
    int is_full = full == NULL ? -1 : PyObject_IsTrue(full);
    Py_XDECREF(full);
    if (is_full <= 0)
        return is_full;
    PyObject *one = PyLong_FromLong(1);
    int status = one == NULL ? -1 : add_to_attribute(timeline, &dropped_slot, one);
    Py_XDECREF(one);
    return status < 0 ? -1 : 1;
}

/* Put the memoized computation that ran from `start` to `end` on the timeline (not full): here
 * when its params cannot be a GPU kernel's (no CUDACoreInstructions, `kernel_inputs`'s own
 * first test), else through `_PythonSimCore._record_computation`. */
static int
record_computation(SimCore *self, PyObject *timeline, PyObject *params, double start, double end)
{
    if (self->process != NULL && PyUnicode_CheckExact(self->process)) {
        /* params is a dict or api.HashMap (memoized_duration): `in` is dict's */
        int is_kernel = PyDict_Contains(params, str_cuda_core_instructions);
        if (is_kernel < 0)
            return -1;
        if (!is_kernel)
            return keep_entry(timeline, self->process, str_compute, start, end);
    }
    PyObject *start_obj = PyFloat_FromDouble(start);
    if (start_obj == NULL)
        return -1;
    PyObject *call[] = {(PyObject *)self, start_obj, Py_None, params};
    PyObject *result = PyObject_VectorcallMethod(str_record_computation, call,
                                                 4 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(start_obj);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* 1 when the caller runs on a process's greenlet (a stackless process's borrowed one: it
 * blocks as a greenlet does), 0 on the loop's, -1 on error. */
static int
stackless_on_process(void)
{
    PyGreenlet *current = PyGreenlet_GetCurrent();
    if (current == NULL)
        return -1;
    int on_process = process_type != NULL && IS_PROCESS(current);
    Py_DECREF(current);
    return on_process;
}

/* A stackless process's computation of `duration` seconds (stolen; the model's detail or NULL):
 * keep the usage busy from now and wake the process when it ends, where SimCore._resumed
 * finishes it; return WAIT. */
static PyObject *
start_stackless(SimCore *self, PyObject *duration, PyObject *params, PyObject *detail)
{
    if (self->engine == NULL || !PyObject_TypeCheck(self->engine, core_type) ||
        self->usage == NULL || Py_TYPE(self->usage) != usage_type || self->pending != NULL) {
        Py_DECREF(duration);
        PyErr_SetString(PyExc_RuntimeError, "sim.computation: the stackless process is not set up");
        return NULL;
    }
    Core *core = (Core *)self->engine;
    double seconds = PyFloat_AsDouble(duration);
    if ((seconds == -1.0 && PyErr_Occurred()) || check_delay(seconds, duration) < 0) {
        Py_DECREF(duration);
        return NULL;
    }
    double now = core->now;
    if (usage_start((Usage *)self->usage, now) < 0 ||
        core_push(core, now + seconds, self->stackless, Py_None) < 0) {
        Py_DECREF(duration);
        return NULL;
    }
    self->pending = duration;
    self->pending_params = Py_NewRef(params);
    self->pending_detail = Py_XNewRef(detail);
    self->pending_start = now;
    return Py_NewRef(wait_marker);
}

/* SimCore._start_computing(duration, detail, params): a stackless process's computation that
 * Python evaluated (api.StacklessSim): start it as the memoized path does; return WAIT. */
static PyObject *
SimCore_start_computing(SimCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_start_computing(duration, detail, params)");
        return NULL;
    }
    return start_stackless(self, Py_NewRef(args[0]), args[2], args[1] == Py_None ? NULL : args[1]);
}

/* Put a computation that ran from `start` to `end` on the timeline, with the model's `detail`
 * (or NULL), or count it dropped when the timeline is full; -1 on error. Both kinds of process
 * end their computations here (SimCore.computation, SimCore._resumed). */
static int
keep_or_count(SimCore *self, PyObject *params, PyObject *detail, double start, double end)
{
    PyObject *timeline = self->timeline;
    if (timeline == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "sim.computation: the process is not set up");
        return -1;
    }
    int dropped = counted_as_dropped(timeline);
    if (dropped != 0) /* the timeline keeps no more entries (or an error) */
        return dropped < 0 ? -1 : 0;
    if (detail == NULL)
        return record_computation(self, timeline, params, start, end);
    /* the model's detail: _PythonSimCore._record_computation keeps the entry */
    PyObject *start_obj = PyFloat_FromDouble(start);
    if (start_obj == NULL)
        return -1;
    PyObject *call[] = {(PyObject *)self, start_obj, detail, params};
    PyObject *result = PyObject_VectorcallMethod(str_record_computation, call,
                                                 4 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(start_obj);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* Account a receive that began at `started` and got `message` now (api._PythonSimCore._received,
 * its Python reference): the wait for the message to be sent, then its flight, and the
 * timeline's "receive" entry; -1 on error. */
static int
received(SimCore *self, double started, PyObject *message)
{
    if (self->engine == NULL || self->figures == NULL || self->timeline == NULL ||
        self->process == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a receive: the process is not set up");
        return -1;
    }
    double now;
    if (PyObject_TypeCheck(self->engine, core_type))
        now = ((Core *)self->engine)->now;
    else {
        PyObject *clock = PyObject_GetAttrString(self->engine, "now");
        now = clock == NULL ? -1.0 : PyFloat_AsDouble(clock);
        Py_XDECREF(clock);
        if (now == -1.0 && PyErr_Occurred())
            return -1;
    }
    if (!(now > started))
        return 0;
    PyObject *sent_obj = slot_get(message, &sent_at_slot);
    if (sent_obj == NULL)
        return -1;
    double sent_at = PyFloat_AsDouble(sent_obj);
    Py_DECREF(sent_obj);
    if (sent_at == -1.0 && PyErr_Occurred())
        return -1;
    double in_flight_from = sent_at > started ? sent_at : started; /* max(started, sent_at) */
    PyObject *waited = PyFloat_FromDouble(in_flight_from - started);
    if (waited == NULL)
        return -1;
    int status = add_to_attribute(self->figures, &wait_s_slot, waited);
    Py_DECREF(waited);
    if (status < 0)
        return -1;
    PyObject *flew = PyFloat_FromDouble(now - in_flight_from);
    if (flew == NULL)
        return -1;
    status = add_to_attribute(self->figures, &comm_s_slot, flew);
    Py_DECREF(flew);
    if (status < 0)
        return -1;
    int dropped = counted_as_dropped(self->timeline);
    if (dropped != 0) /* counted here: a receive is as frequent as a computation */
        return dropped < 0 ? -1 : 0;
    return keep_entry(self->timeline, self->process, str_receive, started, now);
}

/* SimCore._received(started, message): account the receive (`received`); return message. */
static PyObject *
SimCore_received(SimCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_received(started, message)");
        return NULL;
    }
    double started = PyFloat_AsDouble(args[0]);
    if (started == -1.0 && PyErr_Occurred())
        return NULL;
    if (received(self, started, args[1]) < 0)
        return NULL;
    return Py_NewRef(args[1]);
}

/* SimCore._await_message(started, then): the stackless receive that began at `started` waits
 * in its mailbox; when the message comes, `_resumed` accounts it (`received`) and gives
 * `then(message)` (api.StacklessSim._wait_for_message). */
static PyObject *
SimCore_await_message(SimCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_await_message(started, then)");
        return NULL;
    }
    double started = PyFloat_AsDouble(args[0]);
    if (started == -1.0 && PyErr_Occurred())
        return NULL;
    Py_XSETREF(self->receive_then, Py_NewRef(args[1]));
    self->receive_started = started;
    Py_RETURN_NONE;
}

/* SimCore._resumed(value): what a stackless process's wait gives back. After a computation
 * (SimCore.computation's stackless path) the rest of `_pause_computing`: the usage stops, the
 * seconds count as computing, the timeline keeps the entry; its duration is the value. After
 * another wait, what its continuation (`_continuation`, set by the call) makes of the value
 * (a receive: the message's size); else the value. */
static PyObject *
SimCore_resumed(SimCore *self, PyObject *value)
{
    PyObject *duration = self->pending;
    if (duration == NULL && self->receive_then != NULL) { /* a receive's message came */
        PyObject *then = self->receive_then;
        self->receive_then = NULL; /* its one use; `then` may wait again and set the next */
        /* None: a receive of the C core's (`stackless_receive_fast`), whose value is the
         * message's size */
        PyObject *result = received(self, self->receive_started, value) < 0 ? NULL
                           : then == Py_None         ? PyObject_GetAttr(value, str_size)
                           : then == no_value_marker ? Py_NewRef(Py_None)
                                                     : PyObject_CallOneArg(then, value);
        Py_DECREF(then);
        return result;
    }
    if (duration == NULL) {
        PyObject *continuation = self->continuation;
        if (continuation == NULL || continuation == Py_None)
            return Py_NewRef(value);
        self->continuation = NULL; /* its one use; the call may set the next */
        PyObject *result = PyObject_CallOneArg(continuation, value);
        Py_DECREF(continuation);
        return result;
    }
    PyObject *params = self->pending_params, *detail = self->pending_detail;
    self->pending = self->pending_params = self->pending_detail = NULL;
    double end = ((Core *)self->engine)->now;
    usage_stop((Usage *)self->usage, end);
    int status = add_to_attribute(self->figures, &compute_s_slot, duration);
    if (status == 0)
        status = keep_or_count(self, params, detail, self->pending_start, end);
    Py_DECREF(params);
    Py_XDECREF(detail);
    if (status < 0) {
        Py_DECREF(duration);
        return NULL;
    }
    return duration;
}

static PyObject *
SimCore_computation(SimCore *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *duration = NULL;
    if (nargs == 1 && kwnames == NULL) {
        duration = memoized_duration(self, args[0]);
        if (duration == NULL && PyErr_Occurred())
            return NULL;
    }
    if (duration == NULL) { /* the general case, in Python */
        PyObject *fallback = PyObject_GetAttr((PyObject *)self, str_computation_fallback);
        if (fallback == NULL)
            return NULL;
        PyObject *result = PyObject_Vectorcall(fallback, args, nargs, kwnames);
        Py_DECREF(fallback);
        return result;
    }
    if (self->stackless != NULL && self->stackless != Py_None) {
        int on_process = stackless_on_process();
        if (on_process < 0) {
            Py_DECREF(duration);
            return NULL;
        }
        if (!on_process) /* on the loop: start it and let the process yield WAIT */
            return start_stackless(self, duration, args[0], NULL);
    }
    double start = 0.0, end = 0.0;
    if (pause_computing(self, duration, &start, &end) < 0) {
        Py_DECREF(duration);
        return NULL;
    }
    if (keep_or_count(self, args[0], NULL, start, end) < 0) {
        Py_DECREF(duration);
        return NULL;
    }
    return duration;
}

static int
SimCore_traverse(SimCore *self, visitproc visit, void *arg)
{
    Py_VISIT(self->details);
    Py_VISIT(self->engine);
    Py_VISIT(self->figures);
    Py_VISIT(self->memo);
    Py_VISIT(self->process);
    Py_VISIT(self->timeline);
    Py_VISIT(self->usage);
    Py_VISIT(self->stackless);
    Py_VISIT(self->pending);
    Py_VISIT(self->pending_params);
    Py_VISIT(self->pending_detail);
    Py_VISIT(self->continuation);
    Py_VISIT(self->receive_then);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
SimCore_clear(SimCore *self)
{
    Py_CLEAR(self->details);
    Py_CLEAR(self->engine);
    Py_CLEAR(self->figures);
    Py_CLEAR(self->memo);
    Py_CLEAR(self->process);
    Py_CLEAR(self->timeline);
    Py_CLEAR(self->usage);
    Py_CLEAR(self->stackless);
    Py_CLEAR(self->pending);
    Py_CLEAR(self->pending_params);
    Py_CLEAR(self->pending_detail);
    Py_CLEAR(self->continuation);
    Py_CLEAR(self->receive_then);
    return 0;
}

static void
SimCore_dealloc(SimCore *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    SimCore_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

/* SimCore._collective_channel(key): the channel of this process's next collective of `key`,
 * (key, n) for its n-th such call, counted in its ProcessState's `collectives` (a dict) (api
 * _PythonSimCore._collective_channel, its Python reference). */
static PyObject *
SimCore_collective_channel(SimCore *self, PyObject *key)
{
    PyObject *state = slot_get((PyObject *)self, &state_slot);
    PyObject *counts = state == NULL ? NULL : PyObject_GetAttr(state, str_collectives);
    Py_XDECREF(state);
    if (counts == NULL)
        return NULL;
    if (!PyDict_CheckExact(counts)) {
        Py_DECREF(counts);
        PyErr_SetString(PyExc_TypeError, "a process's collectives are a dict");
        return NULL;
    }
    PyObject *result = NULL;
    PyObject *sequence = PyDict_GetItemWithError(counts, key); /* borrowed */
    if (sequence != NULL)
        Py_INCREF(sequence);
    else if (!PyErr_Occurred())
        sequence = PyLong_FromLong(0);
    PyObject *next = sequence == NULL ? NULL : PyNumber_Add(sequence, one_int);
    if (next != NULL && PyDict_SetItem(counts, key, next) == 0)
        result = PyTuple_Pack(2, key, sequence);
    Py_XDECREF(next);
    Py_XDECREF(sequence);
    Py_DECREF(counts);
    return result;
}

/* SimCore._barrier_waited(started, value=None): account a wait at a barrier from `started` to
 * now: the process's wait_s, and the timeline's "barrier" entry (or its drop counted) (api
 * _PythonSimCore._barrier_waited, its Python reference). */
static PyObject *
SimCore_barrier_waited(SimCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "_barrier_waited(started, value=None)");
        return NULL;
    }
    if (self->engine == NULL || !PyObject_TypeCheck(self->engine, core_type) ||
        self->figures == NULL || self->timeline == NULL || self->process == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a barrier: the process is not set up");
        return NULL;
    }
    double started = PyFloat_AsDouble(args[0]);
    if (started == -1.0 && PyErr_Occurred())
        return NULL;
    double now = ((Core *)self->engine)->now;
    if (!(now > started))
        Py_RETURN_NONE;
    PyObject *waited = PyFloat_FromDouble(now - started);
    if (waited == NULL)
        return NULL;
    int status = add_to_attribute(self->figures, &wait_s_slot, waited);
    Py_DECREF(waited);
    if (status == 0) {
        int dropped = counted_as_dropped(self->timeline);
        status = dropped != 0 ? (dropped < 0 ? -1 : 0)
                              : keep_entry(self->timeline, self->process, str_barrier, started, now);
    }
    if (status < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *SimCore_p2p_send(SimCore *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames); /* with the message path, below */
static PyObject *SimCore_stackless_receive(SimCore *self, PyObject *const *args, size_t nargsf,
                                           PyObject *kwnames); /* with the mailbox, below */
static PyObject *SimCore_take_or_wait(SimCore *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *SimCore_stackless_broadcast(SimCore *self, PyObject *const *args, size_t nargsf,
                                             PyObject *kwnames); /* with the collectives, below */
static PyObject *SimCore_stackless_scatter(SimCore *self, PyObject *const *args, size_t nargsf,
                                           PyObject *kwnames);
static PyObject *SimCore_stackless_gather(SimCore *self, PyObject *const *args, size_t nargsf,
                                          PyObject *kwnames);

static PyMethodDef SimCore_methods[] = {
    {"computation", (PyCFunction)(void (*)(void))SimCore_computation,
     METH_FASTCALL | METH_KEYWORDS,
     "computation(params=None, software_stack=None, optimization=None, memory=None)\n--\n\n"
     "Run the node model's `computationTime(params)`; return the seconds it took (see "
     "simulator.api.Sim)."},
    {"_start_computing", (PyCFunction)(void (*)(void))SimCore_start_computing, METH_FASTCALL,
     "Start a stackless process's computation of `duration` s (detail, params); WAIT."},
    {"_resumed", (PyCFunction)SimCore_resumed, METH_O,
     "What a stackless process's wait gives back: a computation's end, or `value`."},
    {"p2pCommunicationSend", (PyCFunction)(void (*)(void))SimCore_p2p_send,
     METH_FASTCALL | METH_KEYWORDS,
     "p2pCommunicationSend(size, target_label, direction=None, target_rank=None, "
     "hostMemory=None)\n--\n\n"
     "Send `size` bytes to a process of `target_label` without waiting for delivery (see "
     "simulator.api.Sim)."},
    {"_received", (PyCFunction)(void (*)(void))SimCore_received, METH_FASTCALL,
     "Account a receive that began at `started` and got `message` now; return message."},
    {"_await_message", (PyCFunction)(void (*)(void))SimCore_await_message, METH_FASTCALL,
     "A stackless receive begun at `started` waits; `_resumed` gives then(message)."},
    {"_stackless_receive", (PyCFunction)(void (*)(void))SimCore_stackless_receive,
     METH_FASTCALL | METH_KEYWORDS,
     "p2pCommunicationReceive(source_label, source_rank=None)\n--\n\n"
     "A stackless process's receive (see simulator.api.StacklessSim): the message's size, "
     "or WAIT."},
    {"_collective_channel", (PyCFunction)SimCore_collective_channel, METH_O,
     "The channel of this process's next collective of `key`: (key, n) for its n-th call."},
    {"_barrier_waited", (PyCFunction)(void (*)(void))SimCore_barrier_waited, METH_FASTCALL,
     "Account a wait at a barrier from `started` to now (wait_s, the timeline's entry)."},
    {"_stackless_broadcast", (PyCFunction)(void (*)(void))SimCore_stackless_broadcast,
     METH_FASTCALL | METH_KEYWORDS,
     "broadcast(size, root_label, root_rank=0, labels=None)\n--\n\n"
     "A stackless process's broadcast (see simulator.api.Sim)."},
    {"_stackless_scatter", (PyCFunction)(void (*)(void))SimCore_stackless_scatter,
     METH_FASTCALL | METH_KEYWORDS,
     "scatter(size, root_label, root_rank=0, labels=None)\n--\n\n"
     "A stackless process's scatter (see simulator.api.Sim)."},
    {"_stackless_gather", (PyCFunction)(void (*)(void))SimCore_stackless_gather,
     METH_FASTCALL | METH_KEYWORDS,
     "gather(size, root_label, root_rank=0, labels=None)\n--\n\n"
     "A stackless process's gather (see simulator.api.Sim)."},
    {"_take_or_wait", (PyCFunction)(void (*)(void))SimCore_take_or_wait, METH_FASTCALL,
     "StacklessSim._wait_for_message in C: then(message) or WAIT; NotImplemented: Python's."},
    {NULL},
};

static PyMemberDef SimCore_members[] = {
    {"_details", T_OBJECT, offsetof(SimCore, details), 0, NULL},
    {"_engine", T_OBJECT, offsetof(SimCore, engine), 0, NULL},
    {"_figures", T_OBJECT, offsetof(SimCore, figures), 0, NULL},
    {"_memo", T_OBJECT, offsetof(SimCore, memo), 0, NULL},
    {"_process", T_OBJECT, offsetof(SimCore, process), 0, NULL},
    {"_timeline", T_OBJECT, offsetof(SimCore, timeline), 0, NULL},
    {"_usage", T_OBJECT, offsetof(SimCore, usage), 0, NULL},
    {"_stackless", T_OBJECT, offsetof(SimCore, stackless), 0, NULL},
    {"_continuation", T_OBJECT, offsetof(SimCore, continuation), 0, NULL},
    {NULL},
};

static PyType_Slot SimCore_slots[] = {
    {Py_tp_doc, "The hot path of `sim.computation`, in C (see simulator/api.py _PythonSimCore)."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, SimCore_dealloc},
    {Py_tp_traverse, SimCore_traverse},
    {Py_tp_clear, SimCore_clear},
    {Py_tp_methods, SimCore_methods},
    {Py_tp_members, SimCore_members},
    {0, NULL},
};

static PyType_Spec SimCore_spec = {
    .name = "simulator._speedups.SimCore",
    .basicsize = sizeof(SimCore),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = SimCore_slots,
};

/* -- stackless processes (simulator/engine.py StacklessProcess subclasses this) -------------- */

static PyObject *str_end = NULL, *str_failed = NULL, *str_throw = NULL;

typedef struct {
    PyObject_HEAD
    PyObject *generator; /* the model's generator (simulator.sandbox.stackless) */
    PyObject *sim;       /* its `sim` (a SimCore: SimCore._resumed ends its computations) */
} StacklessCore;

/* Ask the memory system for what the next events will read, while this one runs: with
 * thousands of processes, each event's process, generator, sim, usage and figures lie far
 * from the last event's, and waiting for each of them in turn took most of an event's time
 * (perf: the loads of those objects' first fields). A pipeline along the events queued at
 * the next time: the third's process, the second's generator and sim (its process came in
 * the event before), the next one's usage and figures (its sim came in the event before).
 * Prefetching reads nothing it could fault on: every pointer followed is a live object's. */
static void
prefetch_next_events(const Core *self)
{
    if (self->size == 0)
        return;
    const Entry *top = &self->heap[0];
    const Chain *chain = &self->chains[top->chain];
    PyObject *next = top->target, *second = NULL;
    if (chain->head < chain->size) {
        second = chain->items[chain->head].target;
        if (chain->head + 1 < chain->size)
            __builtin_prefetch(chain->items[chain->head + 1].target);
    }
    if (second != NULL && Py_TYPE(second) == stackless_type) {
        const StacklessCore *process = (const StacklessCore *)second;
        if (process->sim != NULL) {
            __builtin_prefetch(process->sim);
            __builtin_prefetch((const char *)process->sim + 64);
            __builtin_prefetch((const char *)process->sim + 128);
        }
        if (process->generator != NULL) /* a generator holds its frame: its locals follow */
            for (int line = 0; line < 5; line++)
                __builtin_prefetch((const char *)process->generator + 64 * line);
    }
    if (Py_TYPE(next) == stackless_type) {
        PyObject *sim = ((const StacklessCore *)next)->sim;
        if (sim != NULL && PyObject_TypeCheck(sim, sim_core_type)) {
            const SimCore *core = (const SimCore *)sim;
            if (core->usage != NULL) {
                __builtin_prefetch(core->usage);
                __builtin_prefetch((const char *)core->usage + 64);
            }
            if (core->figures != NULL) {
                __builtin_prefetch(core->figures);
                __builtin_prefetch((const char *)core->figures + 64);
            }
        }
    }
}

/* Run the process's generator from `out`/`status` (what a send or throw gave) until it yields
 * WAIT (None), returns (StacklessProcess._end) or raises (StacklessProcess._failed reports
 * it: NULL). Steals `out`. */
static PyObject *
stackless_drive(StacklessCore *self, PySendResult status, PyObject *out)
{
    for (;;) {
        if (status == PYGEN_NEXT) {
            if (out == wait_marker) {
                Py_DECREF(out);
                Py_RETURN_NONE;
            }
            PyObject *value = out; /* a call that did not wait: its value goes straight back */
            status = PyIter_Send(self->generator, value, &out);
            Py_DECREF(value);
            continue;
        }
        if (status == PYGEN_RETURN) {
            Py_DECREF(out);
            return PyObject_CallMethodNoArgs((PyObject *)self, str_end);
        }
        /* PYGEN_ERROR: what the model raised, reported by the Python side */
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_NormalizeException(&type, &value, &traceback);
        if (traceback != NULL && value != NULL)
            PyException_SetTraceback(value, traceback);
        Py_XDECREF(type);
        Py_XDECREF(traceback);
        if (value == NULL) {
            PyErr_SetString(PyExc_SystemError, "a stackless process failed without an error");
            return NULL;
        }
        PyObject *result = PyObject_CallMethodOneArg((PyObject *)self, str_failed, value);
        Py_DECREF(value);
        return result;
    }
}

static PyObject *
stackless_resume(PyObject *target, PyObject *value)
{
    StacklessCore *self = (StacklessCore *)target;
    if (self->generator == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a stackless process without a generator");
        return NULL;
    }
    PyObject *given;
    if (self->sim != NULL && PyObject_TypeCheck(self->sim, sim_core_type)) {
        given = SimCore_resumed((SimCore *)self->sim, value);
        if (given == NULL)
            return NULL;
        if (given == wait_marker) { /* the call waits again (a gather's next message) */
            Py_DECREF(given);
            Py_RETURN_NONE;
        }
    }
    else
        given = Py_NewRef(value);
    PyObject *out;
    PySendResult status = PyIter_Send(self->generator, given, &out);
    Py_DECREF(given);
    return stackless_drive(self, status, out);
}

/* StacklessCore._resume(value) / (the loop's call) */
static PyObject *
StacklessCore_resume(StacklessCore *self, PyObject *value)
{
    return stackless_resume((PyObject *)self, value);
}

/* StacklessCore._throw(error): raise `error` where the process waits, then drive it on. */
static PyObject *
StacklessCore_throw(StacklessCore *self, PyObject *error)
{
    if (self->generator == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a stackless process without a generator");
        return NULL;
    }
    PyObject *out = PyObject_CallMethodOneArg(self->generator, str_throw, error);
    if (out != NULL)
        return stackless_drive(self, PYGEN_NEXT, out);
    if (PyErr_ExceptionMatches(PyExc_StopIteration)) {
        PyErr_Clear();
        return stackless_drive(self, PYGEN_RETURN, Py_NewRef(Py_None));
    }
    return stackless_drive(self, PYGEN_ERROR, NULL);
}

static int
StacklessCore_traverse(StacklessCore *self, visitproc visit, void *arg)
{
    Py_VISIT(self->generator);
    Py_VISIT(self->sim);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
StacklessCore_clear(StacklessCore *self)
{
    Py_CLEAR(self->generator);
    Py_CLEAR(self->sim);
    return 0;
}

static void
StacklessCore_dealloc(StacklessCore *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    StacklessCore_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMethodDef StacklessCore_methods[] = {
    {"_resume", (PyCFunction)StacklessCore_resume, METH_O,
     "Resume the process with `value` until it waits again or ends (what the loop does)."},
    {"_throw", (PyCFunction)StacklessCore_throw, METH_O,
     "Raise `error` where the process waits, then run it until it waits again or ends."},
    {NULL},
};

static PyMemberDef StacklessCore_members[] = {
    {"generator", T_OBJECT, offsetof(StacklessCore, generator), 0,
     "The model's generator (simulator.sandbox.stackless)."},
    {"_sim", T_OBJECT, offsetof(StacklessCore, sim), 0, NULL},
    {NULL},
};

static PyType_Slot StacklessCore_slots[] = {
    {Py_tp_doc, "What the C loop reads of a stackless process (simulator/engine.py "
                "StacklessProcess): its generator and its sim."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, StacklessCore_dealloc},
    {Py_tp_traverse, StacklessCore_traverse},
    {Py_tp_clear, StacklessCore_clear},
    {Py_tp_methods, StacklessCore_methods},
    {Py_tp_members, StacklessCore_members},
    {0, NULL},
};

static PyType_Spec StacklessCore_spec = {
    .name = "simulator._speedups.StacklessCore",
    .basicsize = sizeof(StacklessCore),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = StacklessCore_slots,
};


/* -- a message crossing its hops (simulator/platform.py `_Transfer`, its Python reference) ---- */

/* `fifo.request(grant, arg)`, `fifo.release()` and `mailbox.put(item)`: the C cores' own
 * methods called at once when the object's class keeps them (defined with the cores). */
static PyObject *fifo_request(PyObject *fifo, PyObject *grant, PyObject *arg);
static PyObject *fifo_release(PyObject *fifo);
static PyObject *mailbox_put(PyObject *mailbox, PyObject *item);

static PyObject *str_transfer_time = NULL, *str_transfer_times = NULL, *str___init__ = NULL,
                *str_release = NULL, *str_request = NULL,
                *str_mailbox = NULL, *str_put = NULL,
                *str_direction = NULL, *str_host_memory = NULL, *str_source = NULL,
                *str_name = NULL, *str_id = NULL, *str_transfer = NULL,
                *transfer_keys = NULL;

typedef struct {
    PyObject_HEAD
    PyObject *engine;   /* the run's Engine (a Core) */
    PyObject *timeline; /* the run's Timeline */
    PyObject *message;  /* platform.Message */
    PyObject *hops;     /* tuple of (node, instance, link FIFO, usage) */
    PyObject *target;   /* the receiving ProcessState */
    Py_ssize_t index;   /* the hop under way */
    double hop_start;
    vectorcallfunc vectorcall;
} Transfer;

static inline double
engine_now(PyObject *engine)
{
    return ((Core *)engine)->now;
}

/* The current hop's (node, instance, link, usage), borrowed. */
static PyObject *
transfer_hop(Transfer *self)
{
    PyObject *hop = PyTuple_GET_ITEM(self->hops, self->index);
    if (!PyTuple_CheckExact(hop) || PyTuple_GET_SIZE(hop) != 4) {
        PyErr_SetString(PyExc_TypeError, "a hop is a (node, instance, link, usage) tuple");
        return NULL;
    }
    return hop;
}

static SlotCache transfer_times_slot = {&str_transfer_times},
                 transfer_message_slots[4] = {{&str_size}, {&str_direction}, {&str_host_memory},
                                              {&str_source}};

/* What NodeRuntime.transfer_time(size, direction, memory) returns when it has it in its memo
 * (`_transfer_times`, keyed by its arguments), new; NULL with no error when it has not, or the
 * node keeps no such memo: the method then computes it. */
static PyObject *
remembered_transfer_time(PyObject *node, PyObject *key)
{
    PyObject **times = slot_address(node, &transfer_times_slot);
    if (times == NULL || *times == NULL || !PyDict_CheckExact(*times))
        return NULL;
    PyObject *seconds = PyDict_GetItemWithError(*times, key); /* borrowed */
    if (seconds == NULL) {
        PyErr_Clear(); /* e.g. an unhashable key: the method says so */
        return NULL;
    }
    return Py_NewRef(seconds);
}

/* Start the current hop: `_Transfer._start`. */
static int
transfer_start(Transfer *self)
{
    PyObject *hop = transfer_hop(self);
    if (hop == NULL)
        return -1;
    PyObject *node = PyTuple_GET_ITEM(hop, 0), *usage = PyTuple_GET_ITEM(hop, 3);
    PyObject *key = PyTuple_New(3); /* (size, direction, host memory), NodeRuntime's memo key */
    if (key == NULL)
        return -1;
    for (int index = 0; index < 3; index++) {
        PyObject *value = slot_get(self->message, &transfer_message_slots[index]);
        if (value == NULL) {
            Py_DECREF(key);
            return -1;
        }
        PyTuple_SET_ITEM(key, index, value);
    }
    PyObject *duration = remembered_transfer_time(node, key);
    if (duration == NULL) {
        PyObject *call[] = {node, PyTuple_GET_ITEM(key, 0), PyTuple_GET_ITEM(key, 1),
                            PyTuple_GET_ITEM(key, 2)};
        duration = PyObject_VectorcallMethod(str_transfer_time, call,
                                             4 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    }
    Py_DECREF(key);
    if (duration == NULL)
        return -1;
    double seconds = PyFloat_AsDouble(duration);
    if ((seconds == -1.0 && PyErr_Occurred()) || check_delay(seconds, duration) < 0) {
        Py_DECREF(duration);
        return -1;
    }
    Py_DECREF(duration);
    double now = self->hop_start = engine_now(self->engine);
    if (Py_TYPE(usage) == usage_type) {
        if (usage_start((Usage *)usage, now) < 0)
            return -1;
    }
    else if (call_with_time(usage, str_start, now) < 0)
        return -1;
    /* the hop's end: this transfer called with True */
    return core_push((Core *)self->engine, now + seconds, (PyObject *)self, Py_True);
}

/* `timeline.add(source, "transfer", start, now, node=, instance=, size=, direction=, to=)`, or
 * the drop counted when the timeline is full. */
static int
transfer_record(Transfer *self, PyObject *node, PyObject *instance, double now)
{
    PyObject *timeline = self->timeline;
    int dropped = counted_as_dropped(timeline);
    if (dropped != 0) /* the timeline keeps no more entries (or an error) */
        return dropped < 0 ? -1 : 0;
    PyObject *message = self->message;
    PyObject *source = slot_get(message, &transfer_message_slots[3]);
    PyObject *process = source == NULL ? NULL : PyObject_GetAttr(source, str_name);
    Py_XDECREF(source);
    PyObject *node_id = process == NULL ? NULL : PyObject_GetAttr(node, str_id);
    PyObject *size = node_id == NULL ? NULL : slot_get(message, &transfer_message_slots[0]);
    PyObject *direction = size == NULL ? NULL : slot_get(message, &transfer_message_slots[1]);
    PyObject *to = direction == NULL ? NULL : PyObject_GetAttr(self->target, str_name);
    int status = -1;
    if (to != NULL) {
        PyObject *extra[] = {node_id, instance, size, direction, to};
        status = keep_entry_with(timeline, process, str_transfer, self->hop_start, now,
                                 transfer_keys, extra);
    }
    Py_XDECREF(process);
    Py_XDECREF(node_id);
    Py_XDECREF(size);
    Py_XDECREF(direction);
    Py_XDECREF(to);
    return status;
}

/* End the current hop: `_Transfer._end`. */
static int
transfer_end(Transfer *self)
{
    PyObject *hop = transfer_hop(self);
    if (hop == NULL)
        return -1;
    Py_INCREF(hop); /* the next hop's start may run below */
    PyObject *node = PyTuple_GET_ITEM(hop, 0), *instance = PyTuple_GET_ITEM(hop, 1);
    PyObject *link = PyTuple_GET_ITEM(hop, 2), *usage = PyTuple_GET_ITEM(hop, 3);
    double now = engine_now(self->engine);
    int status = 0;
    if (Py_TYPE(usage) == usage_type)
        usage_stop((Usage *)usage, now);
    else
        status = call_with_time(usage, str_stop, now);
    if (status == 0) {
        PyObject *released = fifo_release(link);
        status = released == NULL ? -1 : 0;
        Py_XDECREF(released);
    }
    if (status == 0)
        status = transfer_record(self, node, instance, now);
    Py_DECREF(hop);
    if (status < 0)
        return -1;
    Py_ssize_t index = self->index + 1;
    PyObject *result;
    if (index == PyTuple_GET_SIZE(self->hops)) {
        PyObject *mailbox = PyObject_GetAttr(self->target, str_mailbox);
        if (mailbox == NULL)
            return -1;
        result = mailbox_put(mailbox, self->message);
        Py_DECREF(mailbox);
    }
    else {
        self->index = index;
        PyObject *next = transfer_hop(self);
        if (next == NULL)
            return -1;
        /* the next hop's FIFO: this transfer is called with None when its turn comes */
        result = fifo_request(PyTuple_GET_ITEM(next, 2), (PyObject *)self, Py_None);
    }
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* transfer(None): start the current hop; transfer(True): end it. */
static PyObject *
Transfer_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a transfer is called with one argument");
        return NULL;
    }
    Transfer *self = (Transfer *)callable;
    if (self->hops == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a transfer without hops");
        return NULL;
    }
    int status = args[0] == Py_True ? transfer_end(self) : transfer_start(self);
    if (status < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *transfer_made(PyTypeObject *type, PyObject *engine, PyObject *timeline,
                               PyObject *message, PyObject *hops, PyObject *target);

/* Transfer(engine, timeline, message, hops, target) */
static PyObject *
Transfer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *engine, *timeline, *message, *hops, *target;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Transfer takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "Transfer", 5, 5, &engine, &timeline, &message, &hops, &target))
        return NULL;
    return transfer_made(type, engine, timeline, message, hops, target);
}

/* Transfer_new's transfer of its five arguments (`deliver` calls it without a tuple). */
static PyObject *
transfer_made(PyTypeObject *type, PyObject *engine, PyObject *timeline, PyObject *message,
              PyObject *hops, PyObject *target)
{
    if (!PyObject_TypeCheck(engine, core_type)) {
        PyErr_SetString(PyExc_TypeError, "a transfer's engine runs on the C core");
        return NULL;
    }
    if (!PyTuple_CheckExact(hops) || PyTuple_GET_SIZE(hops) == 0) {
        PyErr_SetString(PyExc_TypeError, "a transfer's hops are a non-empty tuple");
        return NULL;
    }
    Transfer *self = (Transfer *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->engine = Py_NewRef(engine);
    self->timeline = Py_NewRef(timeline);
    self->message = Py_NewRef(message);
    self->hops = Py_NewRef(hops);
    self->target = Py_NewRef(target);
    self->index = 0;
    self->hop_start = 0.0;
    self->vectorcall = Transfer_vectorcall;
    return (PyObject *)self;
}

static int
Transfer_traverse(Transfer *self, visitproc visit, void *arg)
{
    Py_VISIT(self->engine);
    Py_VISIT(self->timeline);
    Py_VISIT(self->message);
    Py_VISIT(self->hops);
    Py_VISIT(self->target);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
Transfer_clear(Transfer *self)
{
    Py_CLEAR(self->engine);
    Py_CLEAR(self->timeline);
    Py_CLEAR(self->message);
    Py_CLEAR(self->hops);
    Py_CLEAR(self->target);
    return 0;
}

static void
Transfer_dealloc(Transfer *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Transfer_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMemberDef Transfer_members[] = {
    {"message", T_OBJECT, offsetof(Transfer, message), READONLY, NULL},
    {"index", T_PYSSIZET, offsetof(Transfer, index), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Transfer, vectorcall), READONLY},
    {NULL},
};

static PyType_Slot Transfer_slots[] = {
    {Py_tp_doc, "A message crossing its hops, store and forward (simulator/platform.py "
                "_Transfer): called with None when a hop's FIFO lets it start, with True when "
                "the hop ends."},
    {Py_tp_new, Transfer_new},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_dealloc, Transfer_dealloc},
    {Py_tp_traverse, Transfer_traverse},
    {Py_tp_clear, Transfer_clear},
    {Py_tp_members, Transfer_members},
    {0, NULL},
};

static PyType_Spec Transfer_spec = {
    .name = "simulator._speedups.Transfer",
    .basicsize = sizeof(Transfer),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = Transfer_slots,
};


/* -- a process's mailbox: delivery (simulator/engine.py Mailbox, `_PythonMailboxCore.put`) ------ */

typedef struct {
    PyObject_HEAD
    PyObject *engine;  /* the run's Engine */
    PyObject *items;   /* messages no getter took yet, oldest first (a list) */
    PyObject *getters; /* waiting [process, accept] pairs, first come first served (a list) */
} MailboxCore;

/* engine.wake(proc, value), on the C core without a method call. */
static int
wake_process(PyObject *engine, PyObject *proc, PyObject *value)
{
    if (PyObject_TypeCheck(engine, core_type)) {
        if (PyObject_SetAttr(proc, str_waiting, Py_None) < 0)
            return -1;
        Core *core = (Core *)engine;
        return core_push(core, core->now, proc, value);
    }
    PyObject *result = PyObject_CallMethod(engine, "wake", "OO", proc, value);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

static int accepts(PyObject *accept, PyObject *item); /* with the message filters, below */

/* put(item): hand `item` to the first waiting getter that accepts it, or keep it. */
static PyObject *
MailboxCore_put(MailboxCore *self, PyObject *item)
{
    PyObject *getters = self->getters, *items = self->items;
    if (getters == NULL || items == NULL || !PyList_CheckExact(getters) ||
        !PyList_CheckExact(items)) {
        PyErr_SetString(PyExc_TypeError, "a mailbox's items and getters are lists");
        return NULL;
    }
    Py_INCREF(getters);
    for (Py_ssize_t index = 0; index < PyList_GET_SIZE(getters); index++) {
        PyObject *getter = PyList_GET_ITEM(getters, index);
        if (!PyList_CheckExact(getter) || PyList_GET_SIZE(getter) != 2) {
            Py_DECREF(getters);
            PyErr_SetString(PyExc_TypeError, "a mailbox's getter is a [process, accept] list");
            return NULL;
        }
        Py_INCREF(getter);
        PyObject *proc = PyList_GET_ITEM(getter, 0), *accept = PyList_GET_ITEM(getter, 1);
        int taken = accept == Py_None ? 1 : accepts(accept, item);
        if (taken > 0) {
            Py_INCREF(proc);
            int status = PySequence_DelItem(getters, index);
            if (status == 0)
                status = wake_process(self->engine, proc, item);
            Py_DECREF(proc);
            Py_DECREF(getter);
            Py_DECREF(getters);
            if (status < 0)
                return NULL;
            Py_RETURN_NONE;
        }
        Py_DECREF(getter);
        if (taken < 0) {
            Py_DECREF(getters);
            return NULL;
        }
    }
    Py_DECREF(getters);
    if (PyList_Append(items, item) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int
MailboxCore_traverse(MailboxCore *self, visitproc visit, void *arg)
{
    Py_VISIT(self->engine);
    Py_VISIT(self->items);
    Py_VISIT(self->getters);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
MailboxCore_clear(MailboxCore *self)
{
    Py_CLEAR(self->engine);
    Py_CLEAR(self->items);
    Py_CLEAR(self->getters);
    return 0;
}

static void
MailboxCore_dealloc(MailboxCore *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    MailboxCore_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMethodDef MailboxCore_methods[] = {
    {"put", (PyCFunction)MailboxCore_put, METH_O,
     "Deliver `item`: hand it to the first waiting getter that accepts it, or keep it."},
    {NULL},
};

static PyMemberDef MailboxCore_members[] = {
    {"engine", T_OBJECT, offsetof(MailboxCore, engine), 0, NULL},
    {"_items", T_OBJECT, offsetof(MailboxCore, items), 0, NULL},
    {"_getters", T_OBJECT, offsetof(MailboxCore, getters), 0, NULL},
    {NULL},
};

static PyType_Slot MailboxCore_slots[] = {
    {Py_tp_doc, "What the C core keeps of a mailbox (simulator/engine.py Mailbox): its engine, "
                "messages and getters, and `put`."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, MailboxCore_dealloc},
    {Py_tp_traverse, MailboxCore_traverse},
    {Py_tp_clear, MailboxCore_clear},
    {Py_tp_methods, MailboxCore_methods},
    {Py_tp_members, MailboxCore_members},
    {0, NULL},
};

static PyType_Spec MailboxCore_spec = {
    .name = "simulator._speedups.MailboxCore",
    .basicsize = sizeof(MailboxCore),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = MailboxCore_slots,
};


/* -- a FIFO server (simulator/engine.py Resource, `_PythonResourceCore`) ----------------------- */

static PyObject *str_append = NULL, *str_popleft = NULL;

typedef struct {
    PyObject_HEAD
    PyObject *engine;
    PyObject *queue; /* (grant, arg) pairs waiting for a slot, oldest first (a deque) */
    Py_ssize_t capacity;
    Py_ssize_t users;
} ResourceCore;

/* request(grant, arg=None): call grant(arg) once a slot is this requester's (FIFO). */
static PyObject *
ResourceCore_request(ResourceCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "request(grant, arg=None) takes 1 or 2 arguments");
        return NULL;
    }
    PyObject *grant = args[0], *arg = nargs == 2 ? args[1] : Py_None;
    if (self->users < self->capacity) {
        self->users++;
        return PyObject_CallOneArg(grant, arg);
    }
    if (self->queue == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a resource without its queue");
        return NULL;
    }
    PyObject *pair = PyTuple_Pack(2, grant, arg);
    if (pair == NULL)
        return NULL;
    PyObject *result = PyObject_CallMethodOneArg(self->queue, str_append, pair);
    Py_DECREF(pair);
    return result;
}

/* release(): give a slot back; the oldest waiting request gets it. */
static PyObject *
ResourceCore_release(ResourceCore *self, PyObject *unused)
{
    if (self->queue == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a resource without its queue");
        return NULL;
    }
    Py_ssize_t waiting = PyObject_Length(self->queue);
    if (waiting < 0)
        return NULL;
    if (waiting > 0) {
        PyObject *pair = PyObject_CallMethodNoArgs(self->queue, str_popleft);
        if (pair == NULL)
            return NULL;
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
            Py_DECREF(pair);
            PyErr_SetString(PyExc_TypeError, "a resource's queue holds (grant, arg) pairs");
            return NULL;
        }
        PyObject *result = PyObject_CallOneArg(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        Py_DECREF(pair);
        return result;
    }
    if (self->users > 0) {
        self->users--;
        Py_RETURN_NONE;
    }
    PyObject *name = PyObject_GetAttrString((PyObject *)self, "name");
    if (name == NULL)
        return NULL;
    PyErr_Format(PyExc_RuntimeError, "%S released more often than acquired", name);
    Py_DECREF(name);
    return NULL;
}

static int
ResourceCore_traverse(ResourceCore *self, visitproc visit, void *arg)
{
    Py_VISIT(self->engine);
    Py_VISIT(self->queue);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
ResourceCore_clear(ResourceCore *self)
{
    Py_CLEAR(self->engine);
    Py_CLEAR(self->queue);
    return 0;
}

static void
ResourceCore_dealloc(ResourceCore *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    ResourceCore_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMethodDef ResourceCore_methods[] = {
    {"request", (PyCFunction)(void (*)(void))ResourceCore_request, METH_FASTCALL,
     "Call `grant(arg)` once a slot is this requester's (requests are served FIFO)."},
    {"release", (PyCFunction)ResourceCore_release, METH_NOARGS,
     "Give a slot back; the oldest waiting request gets it."},
    {NULL},
};

static PyMemberDef ResourceCore_members[] = {
    {"engine", T_OBJECT, offsetof(ResourceCore, engine), 0, NULL},
    {"_queue", T_OBJECT, offsetof(ResourceCore, queue), 0, NULL},
    {"capacity", T_PYSSIZET, offsetof(ResourceCore, capacity), 0, NULL},
    {"users", T_PYSSIZET, offsetof(ResourceCore, users), 0, NULL},
    {NULL},
};

static PyType_Slot ResourceCore_slots[] = {
    {Py_tp_doc, "What the C core keeps of a FIFO server (simulator/engine.py Resource): its "
                "engine, queue, capacity and users, `request` and `release`."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, ResourceCore_dealloc},
    {Py_tp_traverse, ResourceCore_traverse},
    {Py_tp_clear, ResourceCore_clear},
    {Py_tp_methods, ResourceCore_methods},
    {Py_tp_members, ResourceCore_members},
    {0, NULL},
};

static PyType_Spec ResourceCore_spec = {
    .name = "simulator._speedups.ResourceCore",
    .basicsize = sizeof(ResourceCore),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = ResourceCore_slots,
};

/* The cores' classes and their own `request`, `release` and `put`, set at import. */
static PyTypeObject *resource_core_type = NULL;
static PyTypeObject *mailbox_core_type; /* defined below */
static PyObject *resource_request_method = NULL, *resource_release_method = NULL,
                *mailbox_put_method = NULL;

/* Whether `owner`'s `name` is the `core` class's own `method`: its class, a subclass of the core
 * without a __dict__ for its instances, did not replace it (its lookup is cached by type). */
static int
keeps_core_method(PyObject *owner, PyTypeObject *core, PyObject *name, PyObject *method)
{
    PyTypeObject *type = Py_TYPE(owner);
    if (core == NULL || method == NULL || type->tp_dictoffset != 0 ||
        !PyType_IsSubtype(type, core))
        return 0;
    return _PyType_Lookup(type, name) == method;
}

static PyObject *
fifo_request(PyObject *fifo, PyObject *grant, PyObject *arg)
{
    if (keeps_core_method(fifo, resource_core_type, str_request, resource_request_method)) {
        PyObject *args[] = {grant, arg};
        return ResourceCore_request((ResourceCore *)fifo, args, 2);
    }
    PyObject *call[] = {fifo, grant, arg};
    return PyObject_VectorcallMethod(str_request, call, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static PyObject *
fifo_release(PyObject *fifo)
{
    if (keeps_core_method(fifo, resource_core_type, str_release, resource_release_method))
        return ResourceCore_release((ResourceCore *)fifo, NULL);
    return PyObject_CallMethodNoArgs(fifo, str_release);
}

static PyObject *
mailbox_put(PyObject *mailbox, PyObject *item)
{
    if (keeps_core_method(mailbox, mailbox_core_type, str_put, mailbox_put_method))
        return MailboxCore_put((MailboxCore *)mailbox, item);
    return PyObject_CallMethodOneArg(mailbox, str_put, item);
}

/* -- a send (simulator/api.py _PythonSimCore.p2pCommunicationSend, its Python reference) ------ */

static PyTypeObject *mailbox_core_type = NULL; /* MailboxCore, made at import */
static PyObject *str_receivers = NULL, *str_receive_fallback = NULL;
static SlotCache receivers_slot = {&str_receivers};

/* -- message filters: what a receive takes from a mailbox, answered without calling Python -- */

static PyObject *str_channel = NULL, *str_slot = NULL, *str_label = NULL;
static SlotCache channel_slot = {&str_channel}, source_slot = {&str_source},
                 slot_slot = {&str_slot};

/* MessageFilter(channel, label=None, peer=None): `message.channel == channel`, and when given,
 * `message.source.slot.label == label` or `message.source is peer` (api.Sim._receiver's and
 * the collectives' filters; their Python references are the lambdas they replace). */
typedef struct {
    PyObject_HEAD
    PyObject *channel;
    PyObject *label; /* or None */
    PyObject *peer;  /* or None */
    vectorcallfunc vectorcall;
} MessageFilter;

static PyTypeObject *message_filter_type = NULL; /* made at import */

/* 1 when `filter` takes `message`, 0 when not, -1 on error. */
static int
filter_takes(MessageFilter *filter, PyObject *message)
{
    PyObject *channel = slot_get(message, &channel_slot);
    if (channel == NULL)
        return -1;
    int same = channel == filter->channel ? 1
                                          : PyObject_RichCompareBool(channel, filter->channel, Py_EQ);
    Py_DECREF(channel);
    if (same <= 0 || (filter->label == Py_None && filter->peer == Py_None))
        return same;
    PyObject *source = slot_get(message, &source_slot);
    if (source == NULL)
        return -1;
    if (filter->peer != Py_None) {
        same = source == filter->peer;
        Py_DECREF(source);
        return same;
    }
    PyObject *slot = slot_get(source, &slot_slot);
    Py_DECREF(source);
    PyObject *label = slot == NULL ? NULL : PyObject_GetAttr(slot, str_label);
    Py_XDECREF(slot);
    if (label == NULL)
        return -1;
    same = label == filter->label ? 1 : PyObject_RichCompareBool(label, filter->label, Py_EQ);
    Py_DECREF(label);
    return same;
}

/* 1 when `accept` (a MessageFilter or any callable) takes `item`, 0 when not, -1 on error. */
static int
accepts(PyObject *accept, PyObject *item)
{
    if (message_filter_type != NULL && Py_TYPE(accept) == message_filter_type)
        return filter_takes((MessageFilter *)accept, item);
    PyObject *answer = PyObject_CallOneArg(accept, item);
    int taken = answer == NULL ? -1 : PyObject_IsTrue(answer);
    Py_XDECREF(answer);
    return taken;
}

static PyObject *
MessageFilter_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a message filter takes one message");
        return NULL;
    }
    int taken = filter_takes((MessageFilter *)self, args[0]);
    if (taken < 0)
        return NULL;
    return Py_NewRef(taken ? Py_True : Py_False);
}

static PyObject *
MessageFilter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"channel", "label", "peer", NULL};
    PyObject *channel, *label = Py_None, *peer = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:MessageFilter", names, &channel, &label,
                                     &peer))
        return NULL;
    MessageFilter *self = (MessageFilter *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->channel = Py_NewRef(channel);
    self->label = Py_NewRef(label);
    self->peer = Py_NewRef(peer);
    self->vectorcall = MessageFilter_vectorcall;
    return (PyObject *)self;
}

static int
MessageFilter_traverse(MessageFilter *self, visitproc visit, void *arg)
{
    Py_VISIT(self->channel);
    Py_VISIT(self->label);
    Py_VISIT(self->peer);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
MessageFilter_clear(MessageFilter *self)
{
    Py_CLEAR(self->channel);
    Py_CLEAR(self->label);
    Py_CLEAR(self->peer);
    return 0;
}

static void
MessageFilter_dealloc(MessageFilter *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    MessageFilter_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMemberDef MessageFilter_members[] = {
    {"channel", T_OBJECT, offsetof(MessageFilter, channel), READONLY, NULL},
    {"label", T_OBJECT, offsetof(MessageFilter, label), READONLY, NULL},
    {"peer", T_OBJECT, offsetof(MessageFilter, peer), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(MessageFilter, vectorcall), READONLY, NULL},
    {NULL},
};

static PyType_Slot MessageFilter_slots[] = {
    {Py_tp_doc, "MessageFilter(channel, label=None, peer=None): whether a receive takes a "
                "message (its channel, and the source's label or the source itself)."},
    {Py_tp_new, MessageFilter_new},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_dealloc, MessageFilter_dealloc},
    {Py_tp_traverse, MessageFilter_traverse},
    {Py_tp_clear, MessageFilter_clear},
    {Py_tp_members, MessageFilter_members},
    {0, NULL},
};

static PyType_Spec MessageFilter_spec = {
    .name = "simulator._speedups.MessageFilter",
    .basicsize = sizeof(MessageFilter),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = MessageFilter_slots,
};


/* 1 when a stackless process's wait for a message can be done in C (`take_or_wait`), with
 * *mailbox its MailboxCore (a new reference); 0 when Python must do it; -1 on error. */
static int
ready_to_take(SimCore *self, PyObject **mailbox)
{
    if (mailbox_core_type == NULL || self->engine == NULL ||
        !PyObject_TypeCheck(self->engine, core_type) || self->stackless == NULL ||
        self->stackless == Py_None || self->receive_then != NULL)
        return 0;
    int on_process = stackless_on_process();
    if (on_process != 0) /* a borrowed greenlet: Python's receive blocks there */
        return on_process < 0 ? -1 : 0;
    PyObject *state = slot_get((PyObject *)self, &state_slot);
    PyObject *box = state == NULL ? NULL : PyObject_GetAttr(state, str_mailbox);
    Py_XDECREF(state);
    if (box == NULL)
        return -1;
    MailboxCore *core = (MailboxCore *)box;
    if (!PyObject_TypeCheck(box, mailbox_core_type) || core->items == NULL ||
        core->getters == NULL || !PyList_CheckExact(core->items) ||
        !PyList_CheckExact(core->getters)) {
        Py_DECREF(box);
        return 0;
    }
    *mailbox = box;
    return 1;
}

/* A stackless process's wait for the oldest message `accept` takes, on the C core and off any
 * greenlet (api.StacklessSim._wait_for_message, its Python reference): the message is taken
 * at once and accounted (`received`), and *result is `then(message)` (`then` None: the
 * message's size); with none, the process waits in its mailbox and *result is WAIT
 * (`_resumed` accounts the message when it comes and gives the same). 1 when done, 0 when
 * Python must do it (nothing done), -1 on error. */
static int
take_or_wait(SimCore *self, PyObject *accept, PyObject *waiting, PyObject *then,
             PyObject **result)
{
    PyObject *mailbox = NULL;
    int ready = ready_to_take(self, &mailbox);
    if (ready <= 0)
        return ready;
    MailboxCore *box = (MailboxCore *)mailbox;
    double started = ((Core *)self->engine)->now;
    int status = 0;
    /* Mailbox.take: the oldest message the filter takes */
    for (Py_ssize_t index = 0; index < PyList_GET_SIZE(box->items); index++) {
        PyObject *item = Py_NewRef(PyList_GET_ITEM(box->items, index));
        int taken = accepts(accept, item);
        if (taken > 0 && index < PyList_GET_SIZE(box->items) &&
            PyList_GET_ITEM(box->items, index) == item)
            taken = PySequence_DelItem(box->items, index) < 0 ? -1 : 1;
        else if (taken > 0) { /* the filter changed the mailbox: Python's error, not ours */
            PyErr_SetString(PyExc_RuntimeError, "a receive's filter changed the mailbox");
            taken = -1;
        }
        if (taken != 0) {
            if (taken > 0 && received(self, started, item) == 0) {
                *result = then == Py_None           ? PyObject_GetAttr(item, str_size)
                          : then == no_value_marker ? Py_NewRef(Py_None)
                                                    : PyObject_CallOneArg(then, item);
                status = *result == NULL ? -1 : 1;
            } else
                status = -1;
            Py_DECREF(item);
            Py_DECREF(mailbox);
            return status;
        }
        Py_DECREF(item);
    }
    /* Mailbox.wait: `put` wakes the process with the message */
    PyObject *getter = PyList_New(2);
    if (getter == NULL || PyObject_SetAttr(self->stackless, str_waiting, waiting) < 0) {
        Py_XDECREF(getter);
        status = -1;
    } else {
        PyList_SET_ITEM(getter, 0, Py_NewRef(self->stackless));
        PyList_SET_ITEM(getter, 1, Py_NewRef(accept));
        status = PyList_Append(box->getters, getter) < 0 ? -1 : 1;
        Py_DECREF(getter);
    }
    if (status == 1) {
        Py_XSETREF(self->receive_then, Py_NewRef(then)); /* `_resumed`: None gives the size */
        self->receive_started = started;
        *result = Py_NewRef(wait_marker);
    }
    Py_DECREF(mailbox);
    return status;
}

/* A stackless process's receive from a source some process of the run received from before
 * (Sim._receivers holds the source's filter and what a receive from it waits for):
 * `take_or_wait` of its message, whose value is the message's size (StacklessSim
 * ._receive_fallback, its Python reference). 1 when done, 0 when Python must do it, -1 on
 * error. */
static int
stackless_receive_fast(SimCore *self, PyObject *const *args, Py_ssize_t nargs, PyObject **result)
{
    PyObject *rank = nargs == 2 ? args[1] : Py_None;
    PyObject *receivers = slot_get((PyObject *)self, &receivers_slot);
    if (receivers == NULL) {
        PyErr_Clear();
        return 0;
    }
    /* the key of Sim._receivers: (label, rank, type(rank)), so rank 1.0 or True is not 1 */
    PyObject *entry = NULL;
    if (PyDict_CheckExact(receivers)) {
        PyObject *key = PyTuple_Pack(3, args[0], rank, (PyObject *)Py_TYPE(rank));
        if (key == NULL) {
            Py_DECREF(receivers);
            return -1;
        }
        entry = PyDict_GetItemWithError(receivers, key); /* borrowed */
        Py_DECREF(key);
        Py_XINCREF(entry);
    }
    Py_DECREF(receivers);
    if (entry == NULL) {
        if (PyErr_Occurred()) { /* an unhashable label or rank: Python's message */
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return -1;
            PyErr_Clear();
        }
        return 0;
    }
    int status = 0;
    if (PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2)
        status = take_or_wait(self, PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 1),
                              Py_None, result);
    Py_DECREF(entry);
    return status;
}

/* SimCore._take_or_wait(accept, waiting, then): StacklessSim._wait_for_message on the C core
 * (`take_or_wait`; then None: the message's size), or NotImplemented where Python must. */
static PyObject *
SimCore_take_or_wait(SimCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_take_or_wait(accept, waiting, then)");
        return NULL;
    }
    PyObject *result = NULL;
    int done = take_or_wait(self, args[0], args[1], args[2], &result);
    if (done < 0)
        return NULL;
    return done ? result : Py_NewRef(Py_NotImplemented);
}

static PyObject *
SimCore_stackless_receive(SimCore *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && (nargs == 1 || nargs == 2)) {
        PyObject *result = NULL;
        int done = stackless_receive_fast(self, args, nargs, &result);
        if (done < 0)
            return NULL;
        if (done)
            return result;
    }
    PyObject *fallback = PyObject_GetAttr((PyObject *)self, str_receive_fallback);
    if (fallback == NULL)
        return NULL;
    PyObject *result = PyObject_Vectorcall(fallback, args, nargs, kwnames);
    Py_DECREF(fallback);
    return result;
}

static PyTypeObject *message_type = NULL; /* simulator.platform.Message, set by set_message_type */
static PyObject *p2p_channel = NULL;      /* simulator.api.P2P */
static PyObject *transfer_type = NULL;    /* Transfer, made at import */

/* Message's six slots, which its __init__ sets from its arguments and nothing else
 * (simulator/platform.py), in its arguments' order. */
static SlotCache message_slots[6] = {{&str_source}, {&str_size},    {&str_direction},
                                     {&str_channel}, {&str_sent_at}, {&str_host_memory}};
/* message_type's version tag when set_message_type found it made as `message_made` needs
 * (0: never, or not so): a change to the class since (its __init__ replaced, say) changes the
 * tag, and messages are then made by calling the class. */
static unsigned int message_version = 0;

/* A Message of `values` (its __init__'s six arguments) made as the class would make it, its
 * slots set here instead of by its __init__ (a Python call a message: 0.3 us of a ping-pong's
 * 1.7); NULL with no error when the class is not as set_message_type found it. */
static PyObject *
message_made(PyObject *const values[6])
{
    PyTypeObject *type = message_type;
    if (message_version == 0 || type->tp_version_tag != message_version ||
        !(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        return NULL;
    PyObject *message = type->tp_alloc(type, 0);
    if (message == NULL)
        return NULL;
    PyObject **slots[6];
    for (int index = 0; index < 6; index++) {
        slots[index] = slot_address(message, &message_slots[index]);
        if (slots[index] == NULL) {
            Py_DECREF(message);
            message_version = 0; /* not the class it was: call it from now on */
            return NULL;
        }
    }
    for (int index = 0; index < 6; index++)
        *slots[index] = Py_NewRef(values[index]);
    return message;
}

/* Message(source, size, direction, channel, now, None): a message sent now, or NULL. */
static PyObject *
make_message(PyObject *source, PyObject *size, PyObject *direction, PyObject *channel,
             double now)
{
    PyObject *sent_at = PyFloat_FromDouble(now);
    if (sent_at == NULL)
        return NULL;
    PyObject *call[] = {source, size, direction, channel, sent_at, Py_None};
    PyObject *made = message_made(call);
    if (made != NULL || PyErr_Occurred()) {
        Py_DECREF(sent_at);
        return made;
    }
    PyObject *message = PyObject_Vectorcall((PyObject *)message_type, call, 6, NULL);
    Py_DECREF(sent_at);
    return message;
}

/* World.send's delivery of `message` to `target` along `hops` (a tuple): a Transfer asking
 * for the first hop's FIFO, or the target's mailbox at once when the route charges no hop;
 * -1 on error. */
static int
deliver(PyObject *engine, PyObject *timeline, PyObject *message, PyObject *target,
        PyObject *hops)
{
    PyObject *done = NULL;
    if (PyTuple_GET_SIZE(hops) == 0) {
        PyObject *mailbox = PyObject_GetAttr(target, str_mailbox);
        if (mailbox != NULL) {
            done = mailbox_put(mailbox, message);
            Py_DECREF(mailbox);
        }
    } else {
        PyObject *first = PyTuple_GET_ITEM(hops, 0);
        PyObject *fifo = PyTuple_Check(first) && PyTuple_GET_SIZE(first) > 2
                             ? PyTuple_GET_ITEM(first, 2)
                             : NULL;
        if (fifo == NULL)
            PyErr_SetString(PyExc_TypeError, "a hop is (node, instance, fifo, usage)");
        else {
            /* Transfer(engine, timeline, message, hops, target) */
            PyObject *transfer = transfer_made((PyTypeObject *)transfer_type, engine, timeline,
                                               message, hops, target);
            if (transfer != NULL) {
                done = fifo_request(fifo, transfer, Py_None);
                Py_DECREF(transfer);
            }
        }
    }
    if (done == NULL)
        return -1;
    Py_DECREF(done);
    return 0;
}

/* World.send_each's work: a message of `size` (a float) on `channel` from `source` to each
 * (target, hops) of `routes` (a list), in order; -1 on error. */
static int
send_along(PyObject *engine, PyObject *timeline, PyObject *source, PyObject *size,
           PyObject *channel, PyObject *routes)
{
    double now = ((Core *)engine)->now;
    for (Py_ssize_t index = 0; index < PyList_GET_SIZE(routes); index++) {
        PyObject *route = PyList_GET_ITEM(routes, index);
        if (!PyTuple_CheckExact(route) || PyTuple_GET_SIZE(route) != 2 ||
            !PyTuple_CheckExact(PyTuple_GET_ITEM(route, 1))) {
            PyErr_SetString(PyExc_TypeError, "a route is a (target, hops tuple) pair");
            return -1;
        }
        Py_INCREF(route); /* the list may change under a callback */
        PyObject *message = make_message(source, size, Py_None, channel, now);
        int status = message == NULL ? -1
                                     : deliver(engine, timeline, message,
                                               PyTuple_GET_ITEM(route, 0),
                                               PyTuple_GET_ITEM(route, 1));
        Py_XDECREF(message);
        Py_DECREF(route);
        if (status < 0)
            return -1;
    }
    return 0;
}

/* send_each(engine, timeline, source, size, channel, routes): World.send_each on the C core
 * (`send_along`). */
static PyObject *
send_each(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyObject_TypeCheck(args[0], core_type) || !PyFloat_CheckExact(args[3]) ||
        !PyList_CheckExact(args[5]) || message_type == NULL || transfer_type == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "send_each(engine, timeline, source, size: float, channel, routes: list)");
        return NULL;
    }
    if (send_along(args[0], args[1], args[2], args[3], args[4], args[5]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* A send of a plain size (a float or int, not a bool, finite and >= 0) without hostMemory to
 * a target this process sent to before (Sim._targets holds its route), on the C core:
 * World.send's message, handed to the first hop's FIFO (or the target's mailbox when the
 * route charges no hop). 1 when sent, 0 when Python must do it (nothing done), -1 on error. */
static int
p2p_send_fast(SimCore *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (message_type == NULL || transfer_type == NULL || self->engine == NULL ||
        !PyObject_TypeCheck(self->engine, core_type) || self->timeline == NULL)
        return 0;
    if (nargs == 5 && args[4] != Py_None) /* hostMemory: checked in Python */
        return 0;
    PyObject *size = args[0];
    double bytes;
    if (PyFloat_CheckExact(size))
        bytes = PyFloat_AS_DOUBLE(size);
    else if (PyLong_CheckExact(size)) {
        bytes = PyLong_AsDouble(size);
        if (bytes == -1.0 && PyErr_Occurred()) { /* too large for a float: Python says so */
            PyErr_Clear();
            return 0;
        }
    } else
        return 0;
    if (!(bytes >= 0.0 && bytes < Py_HUGE_VAL)) /* _checked_size's test: Python reports */
        return 0;
    PyObject *direction = nargs >= 3 ? args[2] : Py_None;
    PyObject *rank = nargs >= 4 ? args[3] : Py_None;
    PyObject *targets = slot_get((PyObject *)self, &targets_slot);
    if (targets == NULL) {
        PyErr_Clear();
        return 0;
    }
    if (!PyDict_CheckExact(targets)) { /* None: the first send */
        Py_DECREF(targets);
        return 0;
    }
    /* the key of Sim._targets: (label, rank, type(rank)), so rank 1.0 or True is not 1 */
    PyObject *key = PyTuple_Pack(3, args[1], rank, (PyObject *)Py_TYPE(rank));
    if (key == NULL) {
        Py_DECREF(targets);
        return -1;
    }
    PyObject *route = PyDict_GetItemWithError(targets, key); /* borrowed */
    Py_DECREF(key);
    if (route != NULL)
        Py_INCREF(route);
    Py_DECREF(targets);
    if (route == NULL) {
        if (PyErr_Occurred()) { /* an unhashable label or rank: Python's message */
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return -1;
            PyErr_Clear();
        }
        return 0;
    }
    if (!PyTuple_CheckExact(route) || PyTuple_GET_SIZE(route) != 2 ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(route, 1))) {
        Py_DECREF(route);
        return 0;
    }
    PyObject *target = PyTuple_GET_ITEM(route, 0), *hops = PyTuple_GET_ITEM(route, 1);
    PyObject *state = slot_get((PyObject *)self, &state_slot);
    if (state == NULL) {
        Py_DECREF(route);
        return -1;
    }
    PyObject *size_obj = PyFloat_CheckExact(size) ? Py_NewRef(size) : PyFloat_FromDouble(bytes);
    PyObject *message = size_obj == NULL ? NULL
                                         : make_message(state, size_obj, direction, p2p_channel,
                                                        ((Core *)self->engine)->now);
    Py_XDECREF(size_obj);
    Py_DECREF(state);
    int status = message == NULL ? -1 : deliver(self->engine, self->timeline, message, target, hops);
    Py_XDECREF(message);
    Py_DECREF(route);
    return status < 0 ? -1 : 1;
}

static PyObject *
SimCore_p2p_send(SimCore *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && nargs >= 2 && nargs <= 5) {
        int sent = p2p_send_fast(self, args, nargs);
        if (sent < 0)
            return NULL;
        if (sent)
            Py_RETURN_NONE;
    }
    PyObject *fallback = PyObject_GetAttr((PyObject *)self, str_p2p_send_fallback);
    if (fallback == NULL)
        return NULL;
    PyObject *result = PyObject_Vectorcall(fallback, args, nargs, kwnames);
    Py_DECREF(fallback);
    return result;
}

/* -- a stackless participant's rooted collective (api.Sim.broadcast, scatter, gather) ------- */

static PyObject *str_broadcast = NULL, *str_scatter = NULL, *str_gather = NULL,
                *str_collectives_slot = NULL, *str_root = NULL, *str_to_root = NULL,
                *str_broadcast_fallback = NULL, *str_scatter_fallback = NULL,
                *str_gather_fallback = NULL, *zero_int = NULL, *str_waiting_attr = NULL;
static SlotCache collectives_slot = {&str_collectives_slot};

/* The size of a collective call taken at once (api._checked_size's plain case), or -1 where
 * Python must check it. */
static double
plain_size(PyObject *size)
{
    double bytes = -1.0;
    if (PyFloat_CheckExact(size))
        bytes = PyFloat_AS_DOUBLE(size);
    else if (PyLong_CheckExact(size)) {
        bytes = PyLong_AsDouble(size);
        if (bytes == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1.0;
        }
    }
    return bytes >= 0.0 && bytes < Py_HUGE_VAL ? bytes : -1.0;
}

/* `sim.<kind>(size, root_label, root_rank=0, labels=None)` of a stackless process that is not
 * the root, for a collective the run checked before (Sim._rooted keeps it in the world's
 * `collectives`), on the C core: a broadcast's or scatter's receive (`take_or_wait`, whose
 * value is None), or a gather's send to the root along the route the collective keeps for
 * this process (`send_along`). What Python's Sim.<kind> does for such a call, in the same
 * order. 1 when done (*result set), 0 when Python must do it (nothing done), -1 on error. */
static int
rooted_fast(SimCore *self, PyObject *kind, PyObject *const *args, Py_ssize_t nargs,
            PyObject **result)
{
    if (nargs < 2 || nargs > 4 || self->engine == NULL ||
        !PyObject_TypeCheck(self->engine, core_type) || self->timeline == NULL ||
        message_filter_type == NULL)
        return 0;
    double bytes = plain_size(args[0]);
    if (bytes < 0.0)
        return 0;
    PyObject *root_rank = nargs > 2 ? args[2] : zero_int, *labels = nargs > 3 ? args[3] : Py_None;
    PyObject *collectives = slot_get((PyObject *)self, &collectives_slot);
    if (collectives == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *collective = NULL;
    if (PyDict_CheckExact(collectives)) {
        /* Sim._rooted's key: (kind, root_label, root_rank, type(root_rank), labels) */
        PyObject *key = PyTuple_Pack(5, kind, args[1], root_rank, (PyObject *)Py_TYPE(root_rank),
                                     labels);
        if (key == NULL) {
            Py_DECREF(collectives);
            return -1;
        }
        collective = PyDict_GetItemWithError(collectives, key); /* borrowed */
        Py_DECREF(key);
        Py_XINCREF(collective);
    }
    Py_DECREF(collectives);
    if (collective == NULL) {
        if (PyErr_Occurred()) { /* unhashable labels: Python checks every such call */
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return -1;
            PyErr_Clear();
        }
        return 0;
    }
    int status = 0;
    PyObject *state = slot_get((PyObject *)self, &state_slot);
    PyObject *root = state == NULL ? NULL : PyObject_GetAttr(collective, str_root);
    PyObject *channel_key = root == NULL ? NULL : PyObject_GetAttr(collective, str_channel);
    if (channel_key == NULL)
        status = -1;
    else if (root != state) { /* the root's own calls are Python's */
        PyObject *mailbox = NULL, *routes = NULL, *waiting = NULL;
        if (kind == str_gather) { /* the route to the root, once this process made it */
            PyObject *to_root = PyObject_GetAttr(collective, str_to_root);
            if (to_root == NULL)
                status = -1;
            else if (PyDict_CheckExact(to_root)) {
                routes = PyDict_GetItemWithError(to_root, state); /* borrowed */
                Py_XINCREF(routes);
                status = routes != NULL && PyList_CheckExact(routes)
                             ? 1
                             : (PyErr_Occurred() ? -1 : 0);
            }
            Py_XDECREF(to_root);
        } else {
            status = ready_to_take(self, &mailbox);
            Py_XDECREF(mailbox); /* take_or_wait finds it again */
            if (status > 0) {
                waiting = PyObject_GetAttr(collective, str_waiting_attr);
                status = waiting == NULL ? -1 : 1;
            }
        }
        if (status > 0) { /* from here on the call is made here: its channel counted */
            PyObject *channel = SimCore_collective_channel(self, channel_key);
            if (channel == NULL)
                status = -1;
            else if (kind == str_gather) {
                PyObject *size = PyFloat_FromDouble(bytes);
                status = size == NULL ? -1
                                      : send_along(self->engine, self->timeline, state, size,
                                                   channel, routes);
                Py_XDECREF(size);
                if (status == 0) {
                    *result = Py_NewRef(Py_None);
                    status = 1;
                }
            } else {
                PyObject *accept = PyObject_CallOneArg((PyObject *)message_filter_type, channel);
                status = accept == NULL ? -1
                                        : take_or_wait(self, accept, waiting, no_value_marker,
                                                       result);
                Py_XDECREF(accept);
                if (status == 0) { /* cannot happen: ready_to_take said it could */
                    PyErr_SetString(PyExc_RuntimeError, "a collective's receive could not wait");
                    status = -1;
                }
            }
            Py_XDECREF(channel);
        }
        Py_XDECREF(routes);
        Py_XDECREF(waiting);
    }
    Py_XDECREF(channel_key);
    Py_XDECREF(root);
    Py_XDECREF(state);
    Py_DECREF(collective);
    return status;
}

/* SimCore._stackless_<kind>: `rooted_fast`, else the Python method `fallback` names. */
static PyObject *
rooted_call(SimCore *self, PyObject *kind, PyObject *fallback_name, PyObject *const *args,
            size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL) {
        PyObject *result = NULL;
        int done = rooted_fast(self, kind, args, nargs, &result);
        if (done < 0)
            return NULL;
        if (done)
            return result;
    }
    PyObject *fallback = PyObject_GetAttr((PyObject *)self, fallback_name);
    if (fallback == NULL)
        return NULL;
    PyObject *result = PyObject_Vectorcall(fallback, args, nargs, kwnames);
    Py_DECREF(fallback);
    return result;
}

static PyObject *
SimCore_stackless_broadcast(SimCore *self, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames)
{
    return rooted_call(self, str_broadcast, str_broadcast_fallback, args, nargsf, kwnames);
}

static PyObject *
SimCore_stackless_scatter(SimCore *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return rooted_call(self, str_scatter, str_scatter_fallback, args, nargsf, kwnames);
}

static PyObject *
SimCore_stackless_gather(SimCore *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return rooted_call(self, str_gather, str_gather_fallback, args, nargsf, kwnames);
}

static PyObject *
set_message_type(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "set_message_type(Message, P2P)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)args[0];
    Py_XSETREF(message_type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(p2p_channel, Py_NewRef(args[1]));
    /* Made without its __init__ call (`message_made`) only a class made as Message is: its
     * own __init__ (a Python function) on object's __new__, no __dict__, the six slots. */
    message_version = 0;
    PyObject *init = PyDict_GetItemWithError(type->tp_dict, str___init__); /* borrowed */
    if (init == NULL && PyErr_Occurred())
        return NULL;
    int made_as_message = init != NULL && PyFunction_Check(init) &&
                          type->tp_new == PyBaseObject_Type.tp_new &&
                          type->tp_alloc == PyType_GenericAlloc && type->tp_dictoffset == 0 &&
                          type->tp_getattro == PyObject_GenericGetAttr &&
                          type->tp_setattro == PyObject_GenericSetAttr;
    if (made_as_message) {
        _PyType_Lookup(type, str___init__); /* gives the class its version tag */
        for (int index = 0; index < 6; index++) {
            PyObject *descriptor = _PyType_Lookup(type, *message_slots[index].name);
            if (descriptor == NULL || !Py_IS_TYPE(descriptor, &PyMemberDescr_Type) ||
                ((PyMemberDescrObject *)descriptor)->d_common.d_type != type)
                made_as_message = 0;
        }
    }
    if (made_as_message && (type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        message_version = type->tp_version_tag;
    Py_RETURN_NONE;
}

static PyObject *
set_plain_params_type(PyObject *module, PyObject *type)
{
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyDict_Type)) {
        PyErr_SetString(PyExc_TypeError, "set_plain_params_type expects a dict subclass");
        return NULL;
    }
    Py_XSETREF(plain_params_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

static PyObject *
set_memo_type(PyObject *module, PyObject *type)
{
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyDict_Type)) {
        PyErr_SetString(PyExc_TypeError, "set_memo_type expects a dict subclass");
        return NULL;
    }
    Py_XSETREF(memo_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

static PyObject *
set_process_type(PyObject *module, PyObject *type)
{
    if (check_main_interpreter() < 0)
        return NULL;
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "set_process_type expects a class");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)type, &PyGreenlet_Type)) {
        PyErr_SetString(PyExc_TypeError, "the process class must subclass greenlet");
        return NULL;
    }
    Py_XSETREF(process_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

static PyObject *
set_stackless_types(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyType_Check(args[0]) || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "set_stackless_types expects two classes");
        return NULL;
    }
    if (process_type == NULL || !PyType_IsSubtype((PyTypeObject *)args[1], process_type)) {
        PyErr_SetString(PyExc_TypeError, "the carrier class must subclass the process class");
        return NULL;
    }
    Py_XSETREF(stackless_type, (PyTypeObject *)Py_NewRef(args[0]));
    Py_XSETREF(carrier_type, (PyTypeObject *)Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

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

static PyMethodDef module_methods[] = {
    {"set_process_type", set_process_type, METH_O,
     "Tell the core which class is a simulated process."},
    {"set_stackless_types", (PyCFunction)(void (*)(void))set_stackless_types, METH_FASTCALL,
     "Tell the core which class is a stackless process (a generator the loop resumes) and "
     "which the greenlet it borrows for a call that blocks."},
    {"install_chunk_cache", install_chunk_cache, METH_NOARGS,
     "Keep freed 16 KiB frame-stack chunks for the next greenlet instead of unmapping them."},
    {"chunk_cache_stats", chunk_cache_stats, METH_NOARGS,
     "Return the chunk cache's state: installed, cached, hits, capacity."},
    {"set_plain_params_type", set_plain_params_type, METH_O,
     "Tell SimCore which dict subclass it may read as params besides dict (api.HashMap)."},
    {"set_message_type", (PyCFunction)(void (*)(void))set_message_type, METH_FASTCALL,
     "Tell SimCore's send which class is a message and which channel a send's (Message, P2P)."},
    {"set_memo_type", set_memo_type, METH_O,
     "Tell SimCore which dict subclass is a memo with an `index` slot (shallow.Memo)."},
    {"send_each", (PyCFunction)(void (*)(void))send_each, METH_FASTCALL,
     "send_each(engine, timeline, source, size, channel, routes): World.send_each in C."},
    {"set_attribute_guard", (PyCFunction)(void (*)(void))set_attribute_guard, METH_FASTCALL,
     "Tell guarded_getattr the Python guard it defers to and the inspection attributes."},
    {"guarded_getattr", (PyCFunction)(void (*)(void))guarded_getattr,
     METH_FASTCALL | METH_KEYWORDS,
     "getattr(obj, name[, default]) for application models: the Python guard's rules."},
    {NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simulator._speedups",
    .m_doc = "The engine's scheduling core, the sim API's hot path and a frame-stack chunk cache, in C.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyGreenlet_Import();
    if (_PyGreenlet_API == NULL)
        return NULL;
    str_waiting = PyUnicode_InternFromString("waiting");
    str_add_busy = PyUnicode_InternFromString("add_busy");
    str_computation_time = PyUnicode_InternFromString("computationTime");
    str_computation_fallback = PyUnicode_InternFromString("_computation_fallback");
    str_computation_memo = PyUnicode_InternFromString("_computation_memo");
    str_record_computation = PyUnicode_InternFromString("_record_computation");
    str_compute_s = PyUnicode_InternFromString("compute_s");
    str_full = PyUnicode_InternFromString("full");
    str_dropped = PyUnicode_InternFromString("dropped");
    str_pause = PyUnicode_InternFromString("pause");
    str_start = PyUnicode_InternFromString("start");
    str_stop = PyUnicode_InternFromString("stop");
    empty_tuple = PyTuple_New(0);
    str_process = PyUnicode_InternFromString("process");
    str_kind = PyUnicode_InternFromString("kind");
    str_compute = PyUnicode_InternFromString("compute");
    str_start_s = PyUnicode_InternFromString("start_s");
    str_end_s = PyUnicode_InternFromString("end_s");
    str_entries = PyUnicode_InternFromString("entries");
    str_limit = PyUnicode_InternFromString("limit");
    str_cuda_core_instructions = PyUnicode_InternFromString("CUDACoreInstructions");
    str_index = PyUnicode_InternFromString("index");
    str_receive = PyUnicode_InternFromString("receive");
    str_sent_at = PyUnicode_InternFromString("sent_at");
    str_wait_s = PyUnicode_InternFromString("wait_s");
    str_comm_s = PyUnicode_InternFromString("comm_s");
    str_index_room = PyUnicode_InternFromString("index_room");
    str_targets = PyUnicode_InternFromString("_targets");
    str_state = PyUnicode_InternFromString("_state");
    str_p2p_send_fallback = PyUnicode_InternFromString("_p2p_send_fallback");
    str_receivers = PyUnicode_InternFromString("_receivers");
    str_collectives = PyUnicode_InternFromString("collectives");
    str_broadcast = PyUnicode_InternFromString("broadcast");
    str_scatter = PyUnicode_InternFromString("scatter");
    str_gather = PyUnicode_InternFromString("gather");
    str_collectives_slot = PyUnicode_InternFromString("_collectives");
    str_root = PyUnicode_InternFromString("root");
    str_to_root = PyUnicode_InternFromString("_to_root");
    str_waiting_attr = PyUnicode_InternFromString("waiting");
    str_broadcast_fallback = PyUnicode_InternFromString("_broadcast_fallback");
    str_scatter_fallback = PyUnicode_InternFromString("_scatter_fallback");
    str_gather_fallback = PyUnicode_InternFromString("_gather_fallback");
    zero_int = PyLong_FromLong(0);
    if (str_broadcast == NULL || str_scatter == NULL || str_gather == NULL ||
        str_collectives_slot == NULL || str_root == NULL || str_to_root == NULL ||
        str_waiting_attr == NULL || str_broadcast_fallback == NULL ||
        str_scatter_fallback == NULL || str_gather_fallback == NULL || zero_int == NULL)
        return NULL;
    str_busy = PyUnicode_InternFromString("busy");
    str_busy_dropped = PyUnicode_InternFromString("busy_dropped");
    str_node_key = PyUnicode_InternFromString("node");
    str_instance_key = PyUnicode_InternFromString("instance");
    if (str_busy == NULL || str_busy_dropped == NULL || str_node_key == NULL ||
        str_instance_key == NULL)
        return NULL;
    str_barrier = PyUnicode_InternFromString("barrier");
    one_int = PyLong_FromLong(1);
    if (str_collectives == NULL || str_barrier == NULL || one_int == NULL)
        return NULL;
    str_channel = PyUnicode_InternFromString("channel");
    str_slot = PyUnicode_InternFromString("slot");
    str_label = PyUnicode_InternFromString("label");
    if (str_channel == NULL || str_slot == NULL || str_label == NULL)
        return NULL;
    str_receive_fallback = PyUnicode_InternFromString("_receive_fallback");
    if (str_receivers == NULL || str_receive_fallback == NULL)
        return NULL;
    str_end = PyUnicode_InternFromString("_end");
    str_failed = PyUnicode_InternFromString("_failed");
    str_throw = PyUnicode_InternFromString("throw");
    if (str_end == NULL || str_failed == NULL || str_throw == NULL)
        return NULL;
    str_transfer_time = PyUnicode_InternFromString("transfer_time");
    str_transfer_times = PyUnicode_InternFromString("_transfer_times");
    str___init__ = PyUnicode_InternFromString("__init__");
    str_release = PyUnicode_InternFromString("release");
    str_request = PyUnicode_InternFromString("request");
    str_mailbox = PyUnicode_InternFromString("mailbox");
    str_put = PyUnicode_InternFromString("put");
    str_size = PyUnicode_InternFromString("size");
    str_direction = PyUnicode_InternFromString("direction");
    str_host_memory = PyUnicode_InternFromString("host_memory");
    str_source = PyUnicode_InternFromString("source");
    str_name = PyUnicode_InternFromString("name");
    str_id = PyUnicode_InternFromString("id");
    str_transfer = PyUnicode_InternFromString("transfer");
    /* a transfer's timeline entry's further keys, in Timeline.add's order */
    transfer_keys = Py_BuildValue("(sssss)", "node", "instance", "size", "direction", "to");
    for (Py_ssize_t index = 0; transfer_keys != NULL && index < 5; index++)
        PyUnicode_InternInPlace(&PyTuple_GET_ITEM(transfer_keys, index));
    str_append = PyUnicode_InternFromString("append");
    str_popleft = PyUnicode_InternFromString("popleft");
    if (str_append == NULL || str_popleft == NULL)
        return NULL;
    if (str_transfer_time == NULL || str_transfer_times == NULL || str___init__ == NULL ||
        str_release == NULL || str_request == NULL ||
        str_mailbox == NULL || str_put == NULL || str_size == NULL ||
        str_direction == NULL || str_host_memory == NULL || str_source == NULL ||
        str_name == NULL || str_id == NULL || str_transfer == NULL || transfer_keys == NULL)
        return NULL;
    if (str_waiting == NULL || str_add_busy == NULL || str_computation_time == NULL ||
        str_computation_fallback == NULL || str_computation_memo == NULL ||
        str_record_computation == NULL ||
        str_compute_s == NULL || str_full == NULL || str_dropped == NULL || str_pause == NULL ||
        str_start == NULL || str_stop == NULL || empty_tuple == NULL || str_process == NULL ||
        str_kind == NULL || str_compute == NULL || str_start_s == NULL || str_end_s == NULL ||
        str_entries == NULL || str_limit == NULL || str_cuda_core_instructions == NULL ||
        str_index == NULL || str_receive == NULL || str_sent_at == NULL || str_wait_s == NULL ||
        str_comm_s == NULL || str_index_room == NULL || str_targets == NULL ||
        str_state == NULL || str_p2p_send_fallback == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL)
        return NULL;
    /* the globals keep a reference to each type: the module is never unloaded (m_size -1) */
    PyObject *core = PyType_FromSpec(&Core_spec);
    PyObject *usage = core == NULL ? NULL : PyType_FromSpec(&Usage_spec);
    PyObject *sim_core = usage == NULL ? NULL : PyType_FromSpec(&SimCore_spec);
    PyObject *stackless = sim_core == NULL ? NULL : PyType_FromSpec(&StacklessCore_spec);
    PyObject *transfer = stackless == NULL ? NULL : PyType_FromSpec(&Transfer_spec);
    PyObject *mailbox = transfer == NULL ? NULL : PyType_FromSpec(&MailboxCore_spec);
    PyObject *resource = mailbox == NULL ? NULL : PyType_FromSpec(&ResourceCore_spec);
    PyObject *filter = resource == NULL ? NULL : PyType_FromSpec(&MessageFilter_spec);
    if (filter == NULL || PyModule_AddObjectRef(module, "MessageFilter", filter) < 0 ||
        PyModule_AddObjectRef(module, "ResourceCore", resource) < 0 ||
        PyModule_AddObjectRef(module, "MailboxCore", mailbox) < 0 ||
        PyModule_AddObjectRef(module, "Transfer", transfer) < 0 ||
        PyModule_AddObjectRef(module, "Core", core) < 0 ||
        PyModule_AddObjectRef(module, "StacklessCore", stackless) < 0 ||
        PyModule_AddObjectRef(module, "Usage", usage) < 0 ||
        PyModule_AddObjectRef(module, "SimCore", sim_core) < 0 ||
        PyModule_AddIntConstant(module, "ARENA_REGION_BYTES", (long)ARENA_REGION_BYTES) < 0) {
        Py_XDECREF(core);
        Py_XDECREF(usage);
        Py_XDECREF(sim_core);
        Py_XDECREF(stackless);
        Py_XDECREF(transfer);
        Py_XDECREF(mailbox);
        Py_XDECREF(resource);
        Py_XDECREF(filter);
        Py_DECREF(module);
        return NULL;
    }
    message_filter_type = (PyTypeObject *)filter; /* the globals keep this reference */
    core_type = (PyTypeObject *)core;
    transfer_type = transfer; /* the module keeps it, and this reference too */
    mailbox_core_type = (PyTypeObject *)mailbox; /* ... and this one */
    resource_core_type = (PyTypeObject *)resource; /* the module keeps it */
    Py_DECREF(resource);
    resource_request_method = PyDict_GetItemString(resource_core_type->tp_dict, "request");
    resource_release_method = PyDict_GetItemString(resource_core_type->tp_dict, "release");
    mailbox_put_method = PyDict_GetItemString(mailbox_core_type->tp_dict, "put");
    if (resource_request_method == NULL || resource_release_method == NULL ||
        mailbox_put_method == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the cores' request, release and put are missing");
        Py_DECREF(module);
        return NULL;
    }
    /* WAIT: a stackless process yields it to wait (SimCore.computation returns it) */
    no_value_marker = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (no_value_marker == NULL) {
        Py_DECREF(module);
        return NULL;
    }
    wait_marker = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (wait_marker == NULL || PyModule_AddObjectRef(module, "WAIT", wait_marker) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    usage_type = (PyTypeObject *)usage;
    sim_core_type = (PyTypeObject *)sim_core; /* the globals keep these references too */
    Py_DECREF(stackless);
    if (PyModule_AddIntConstant(module, "CHUNK_SIZE", (long)CHUNK_SIZE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
