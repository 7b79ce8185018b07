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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <math.h>

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

/* The cache is a plain array, so it is only used by a thread holding the GIL; CPython may free a
 * thread state's chunks without it (PyThreadState_Delete), and those go straight through. */
static void *
chunk_alloc(void *ctx, size_t size)
{
    if (size == CHUNK_SIZE && chunk_cache_len > 0 && PyGILState_Check()) {
        chunk_cache_hits++;
        return chunk_cache[--chunk_cache_len];
    }
    return base_arena.alloc(base_arena.ctx, size);
}

static void
chunk_free(void *ctx, void *ptr, size_t size)
{
    if (size == CHUNK_SIZE && chunk_cache_len < CHUNK_CACHE_MAX && PyGILState_Check()) {
        chunk_cache[chunk_cache_len++] = ptr;
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
    return Py_BuildValue("{s:O,s:n,s:K,s:n}", "installed", chunk_cache_installed ? Py_True : Py_False,
                         "cached", chunk_cache_len, "hits", chunk_cache_hits, "capacity",
                         (Py_ssize_t)CHUNK_CACHE_MAX);
}

/* -- the scheduling core ----------------------------------------------------------------------- */

static PyTypeObject *process_type = NULL; /* simulator.engine.Process, set by set_process_type */
static PyObject *str_waiting = NULL;

typedef struct {
    double when;
    unsigned long long seq;
    PyObject *target; /* a Process to resume or start, or a callback */
    PyObject *arg;
} Entry;

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
    PyObject *loop;    /* the greenlet running Engine.run, or NULL */
    PyObject *start;   /* a new process the loop must start, or NULL */
    PyObject *failure; /* the exception a callback raised, or NULL */
} Core;

static inline int
entry_before(const Entry *a, const Entry *b)
{
    return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

/* Steals nothing: takes new references to target and arg. */
static int
core_push(Core *self, double when, PyObject *target, PyObject *arg)
{
    if (self->size == self->capacity) {
        Py_ssize_t capacity = self->capacity ? self->capacity * 2 : 64;
        Entry *heap = PyMem_Realloc(self->heap, (size_t)capacity * sizeof(Entry));
        if (heap == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->heap = heap;
        self->capacity = capacity;
    }
    Entry item = {when, self->seq++, Py_NewRef(target), Py_NewRef(arg)};
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
    Entry last = heap[--self->size];
    Py_ssize_t size = self->size, pos = 0;
    if (size > 0) {
        for (;;) {
            Py_ssize_t child = 2 * pos + 1;
            if (child >= size)
                break;
            if (child + 1 < size && entry_before(&heap[child + 1], &heap[child]))
                child++;
            if (!entry_before(&heap[child], &last))
                break;
            heap[pos] = heap[child];
            pos = child;
        }
        heap[pos] = last;
    }
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
    if (process_type == NULL || Py_TYPE(current) != process_type) {
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
        if (Py_TYPE(entry.target) == process_type) {
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

static PyObject *
Core_pause(Core *self, PyObject *duration_obj)
{
    double duration = PyFloat_AsDouble(duration_obj);
    if (duration == -1.0 && PyErr_Occurred())
        return NULL;
    if (check_delay(duration, duration_obj) < 0)
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
        PyObject *result;
        if (Py_TYPE(entry.target) == process_type) /* back when a process ends, starts or runs dry */
            result = switch_to(entry.target, entry.arg);
        else
            result = PyObject_CallOneArg(entry.target, entry.arg);
        Py_DECREF(entry.target);
        Py_DECREF(entry.arg);
        if (result == NULL)
            return NULL;
        Py_DECREF(result);
        while (self->start != NULL) {
            PyObject *start = self->start;
            self->start = NULL;
            result = switch_to(start, Py_None);
            Py_DECREF(start);
            if (result == NULL)
                return NULL;
            Py_DECREF(result);
        }
        if (self->failure != NULL) {
            PyObject *failure = self->failure;
            self->failure = NULL;
            PyErr_SetObject((PyObject *)Py_TYPE(failure), failure);
            Py_DECREF(failure);
            return NULL;
        }
    }
}

static PyObject *
Core_get_pending(Core *self, void *closure)
{
    return PyLong_FromSsize_t(self->size);
}

static PyObject *
Core_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    Core *self = (Core *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->now = 0.0;
        self->until = INFINITY;
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
    Py_VISIT(self->loop);
    Py_VISIT(self->start);
    Py_VISIT(self->failure);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int
Core_clear(Core *self)
{
    /* detach the queue first: a decref below may run code that schedules on this engine */
    Entry *heap = self->heap;
    Py_ssize_t size = self->size;
    self->heap = NULL;
    self->size = self->capacity = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_DECREF(heap[i].target);
        Py_DECREF(heap[i].arg);
    }
    PyMem_Free(heap);
    Py_CLEAR(self->loop);
    Py_CLEAR(self->start);
    Py_CLEAR(self->failure);
    return 0;
}

static void
Core_dealloc(Core *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    do { /* again if a decref scheduled something on the dying engine */
        Core_clear(self);
    } while (self->heap != NULL);
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

static PyMethodDef module_methods[] = {
    {"set_process_type", set_process_type, METH_O,
     "Tell the core which class is a simulated process."},
    {"install_chunk_cache", install_chunk_cache, METH_NOARGS,
     "Keep freed 16 KiB frame-stack chunks for the next greenlet instead of unmapping them."},
    {"chunk_cache_stats", chunk_cache_stats, METH_NOARGS,
     "Return the chunk cache's state: installed, cached, hits, capacity."},
    {NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simulator._speedups",
    .m_doc = "The engine's scheduling core in C and a frame-stack chunk cache.",
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
    if (str_waiting == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL)
        return NULL;
    PyObject *core = PyType_FromSpec(&Core_spec);
    if (core == NULL || PyModule_AddObject(module, "Core", core) < 0) {
        Py_XDECREF(core);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "CHUNK_SIZE", (long)CHUNK_SIZE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
