/* simulator._speedups: stackless processes (StacklessCore, generators the loop resumes).
 *
 * Python reference: simulator/engine.py StacklessProcess and simulator/sandbox/stackless.py.
 * Differential test: tests/simulator/test_stackless.py.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

/* -- stackless processes (simulator/engine.py StacklessProcess subclasses this) -------------- */

static PyObject *str_on_process_end = NULL, *str_failed = NULL, *str_throw = NULL,
                *str_processes = NULL;

/* A run makes one per process: its fields are here rather than Python slots of the subclass,
 * so that making one (StacklessCore_init) and ending it (stackless_end) run no Python code. */
typedef struct {
    PyObject_HEAD
    PyObject *generator;   /* the model's generator (simulator.sandbox.stackless) */
    PyObject *sim;         /* its `sim` (a SimCore: SimCore._resumed ends its computations) */
    PyObject *engine;      /* the Engine (a Core: checked as it is made) */
    PyObject *name;        /* the process's name */
    PyObject *data;        /* what the caller keeps on it (the runner: its ProcessState) */
    PyObject *on_error;    /* on_error(error, name): the error to report, or None */
    PyObject *carrier;     /* the greenlet of a call that blocked, or None */
    PyObject *waiting;     /* what it waits for in a mailbox or an event count, or None */
    PyObject *finish_time; /* the engine's clock when it ended, None before */
    char finished;
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
        if (sim != NULL && IS_SIM_CORE(sim)) {
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

/* The process returned: what simulator.engine.Process.run does after its body (finished, its
 * finish time, one process less alive, the engine's `on_process_end(process)` when set). */
static PyObject *
stackless_end(StacklessCore *self)
{
    if (self->engine == NULL) { /* made without StacklessCore_init: it never ran either */
        PyErr_SetString(PyExc_RuntimeError, "a stackless process without an engine");
        return NULL;
    }
    Core *engine = (Core *)self->engine;
    PyObject *now = PyFloat_FromDouble(engine->now);
    if (now == NULL)
        return NULL;
    self->finished = 1;
    Py_XSETREF(self->finish_time, now);
    engine->live -= 1;
    PyObject *hook = PyObject_GetAttr(self->engine, str_on_process_end);
    if (hook == NULL)
        return NULL;
    if (hook == Py_None) {
        Py_DECREF(hook);
        Py_RETURN_NONE;
    }
    PyObject *result = PyObject_CallOneArg(hook, (PyObject *)self);
    Py_DECREF(hook);
    return result;
}

/* Run the process's generator from `out`/`status` (what a send or throw gave) until it yields
 * WAIT (None), returns (stackless_end) or raises (StacklessProcess._failed reports
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
            return stackless_end(self);
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
    if (self->sim != NULL && IS_SIM_CORE(self->sim)) {
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

/* Set a new process's fields; -1 unless `engine` runs on the C core, the only one that resumes
 * stackless processes. */
static int
stackless_fill(StacklessCore *self, PyObject *engine, PyObject *name, PyObject *generator,
               PyObject *sim)
{
    if (!IS_CORE(engine)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "stackless processes need the C core (simulator._speedups)");
        return -1;
    }
    Py_XSETREF(self->engine, Py_NewRef(engine));
    Py_XSETREF(self->name, Py_NewRef(name));
    Py_XSETREF(self->generator, Py_NewRef(generator));
    Py_XSETREF(self->sim, Py_NewRef(sim));
    Py_XSETREF(self->data, Py_NewRef(Py_None));
    Py_XSETREF(self->on_error, Py_NewRef(Py_None));
    Py_XSETREF(self->carrier, Py_NewRef(Py_None));
    Py_XSETREF(self->waiting, Py_NewRef(Py_None));
    Py_XSETREF(self->finish_time, Py_NewRef(Py_None));
    self->finished = 0;
    return 0;
}

/* StacklessCore(engine, name, generator, sim=None) */
static int
StacklessCore_init(StacklessCore *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"engine", "name", "generator", "sim", NULL};
    PyObject *engine, *name, *generator, *sim = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O:StacklessProcess", keywords, &engine,
                                     &name, &generator, &sim))
        return -1;
    return stackless_fill(self, engine, name, generator, sim);
}

/* Engine.spawn_stackless(name, generator, sim=None) (simulator/engine.py _PythonCore's): a new
 * StacklessProcess, made here without its class's call, in the engine's `processes`, one more
 * alive, started at the current time. */
static PyObject *
Core_spawn_stackless(Core *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "spawn_stackless(name, generator, sim=None)");
        return NULL;
    }
    if (stackless_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the stackless process class is not set");
        return NULL;
    }
    PyObject *processes = PyObject_GetAttr((PyObject *)self, str_processes);
    if (processes == NULL)
        return NULL;
    PyObject *proc = stackless_type->tp_alloc(stackless_type, 0);
    if (proc == NULL ||
        stackless_fill((StacklessCore *)proc, (PyObject *)self, args[0], args[1],
                       nargs == 3 ? args[2] : Py_None) < 0 ||
        PyList_Append(processes, proc) < 0 || core_push(self, self->now, proc, Py_None) < 0) {
        Py_DECREF(processes);
        Py_XDECREF(proc);
        return NULL;
    }
    Py_DECREF(processes);
    self->live += 1;
    return proc;
}

#define StacklessCore_FIELDS(X)                                                                   \
    X(generator) X(sim) X(engine) X(name) X(data) X(on_error) X(carrier) X(waiting) X(finish_time)
GC_TYPE_FUNCTIONS(StacklessCore, StacklessCore_FIELDS)

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
    {"engine", T_OBJECT, offsetof(StacklessCore, engine), READONLY, "The engine it runs on."},
    {"name", T_OBJECT, offsetof(StacklessCore, name), 0, "The process's name."},
    {"data", T_OBJECT, offsetof(StacklessCore, data), 0, "What its maker keeps on it."},
    {"on_error", T_OBJECT, offsetof(StacklessCore, on_error), 0,
     "on_error(error, name): the error to report for what the model raised (None: itself)."},
    {"carrier", T_OBJECT, offsetof(StacklessCore, carrier), 0,
     "The greenlet of a call that blocked, or None."},
    {"waiting", T_OBJECT, offsetof(StacklessCore, waiting), 0,
     "What it waits for in a mailbox or an event count, or None."},
    {"finish_time", T_OBJECT, offsetof(StacklessCore, finish_time), 0,
     "The engine's clock when it ended; None before."},
    {"finished", T_BOOL, offsetof(StacklessCore, finished), 0, "Whether it has ended."},
    {NULL},
};

static PyType_Slot StacklessCore_slots[] = {
    {Py_tp_doc, "What the C loop reads of a stackless process (simulator/engine.py "
                "StacklessProcess): its generator, its sim, its engine and what a process records."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, StacklessCore_init},
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
