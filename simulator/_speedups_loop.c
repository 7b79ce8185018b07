/* simulator._speedups: the event loop (Core: the event queue, pause, suspend, wake, run_loop).
 *
 * Python reference: simulator/engine.py _PythonCore.
 * Differential test: tests/simulator/test_engine.py, which runs every engine test on both cores.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

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

/* Put `item` at `pos` of the heap or above it: up past every parent it comes before. */
static inline void
heap_sift_up(Entry *heap, Py_ssize_t pos, Entry item)
{
    while (pos > 0) {
        Py_ssize_t parent = (pos - 1) >> 1;
        if (!entry_before(&item, &heap[parent]))
            break;
        heap[pos] = heap[parent];
        pos = parent;
    }
    heap[pos] = item;
}

/* heap_sift_down for the heap's last entry, put at the top once the top is taken: a leaf, so
 * usually among the latest and due near the bottom again. Down to a leaf along the earlier
 * children without comparing them with it, then up to its place: about half the comparisons
 * (as CPython's heapq does). The order of (when, seq) is total, so the pops are the same. */
static inline void
heap_sift_last(Entry *heap, Py_ssize_t size, Entry item)
{
    Py_ssize_t pos = 0, child;
    while ((child = 2 * pos + 1) < size) {
        if (child + 1 < size && entry_before(&heap[child + 1], &heap[child]))
            child++;
        heap[pos] = heap[child];
        pos = child;
    }
    heap_sift_up(heap, pos, item);
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
    heap_sift_up(heap, pos, item);
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
        heap_sift_last(heap, self->size, last);
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

static PyObject *Core_spawn_stackless(Core *self, PyObject *const *args, Py_ssize_t nargs);

static PyMethodDef Core_methods[] = {
    {"spawn_stackless", (PyCFunction)(void (*)(void))Core_spawn_stackless, METH_FASTCALL,
     "Return a new stackless process that starts running `generator` at the current time."},
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
