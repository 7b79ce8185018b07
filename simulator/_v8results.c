/* simulator._v8results: V8's results handed back to the waiting thread without Python.
 *
 * mini-racer runs each evaluation on V8's own thread and hands its result back through a
 * callback that the context is made with. Its own callback is Python (ctypes): V8's thread
 * takes the GIL, makes and destroys a thread state, and puts the result into a queue whose
 * condition wakes the caller: most of a short evaluation's time (bench/RESULTS.md, the
 * table of bench_shallow.py).
 *
 * Here the callback is C (`HAND_BACK`, a function address for mr_init_context): the task's
 * callback id is the address of a `ResultSlot`, and V8's thread stores the result's handle
 * in it and posts the slot's semaphore. The caller waits on that semaphore with the GIL
 * released (`ResultSlot.wait`). One evaluation at a time per slot (simulator.shallow's
 * evaluator holds a lock): each task posts exactly once.
 *
 * A slot must outlive every task that names it: simulator.shallow keeps the slot of a
 * context whose task never ended (V8 did not stop when cancelled) for the life of the
 * process.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 30))
#define HAVE_SEM_CLOCKWAIT 1
#define DEADLINE_CLOCK CLOCK_MONOTONIC
#else
#define DEADLINE_CLOCK CLOCK_REALTIME /* sem_timedwait's clock */
#endif

typedef struct {
    PyObject_HEAD
    sem_t done;
    void *handle; /* written by V8's thread before it posts `done` */
    int ready;    /* `done` was initialized */
} ResultSlot;

/* mini-racer's callback: (callback id, the result's value handle), on V8's thread. */
static void
hand_back(uint64_t callback_id, void *handle)
{
    ResultSlot *slot = (ResultSlot *)(uintptr_t)callback_id;
    if (slot == NULL) { /* a task nobody waits for (none is made: every id is a slot) */
        return;
    }
    slot->handle = handle;
    sem_post(&slot->done);
}

static PyObject *
slot_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "ResultSlot() takes no arguments");
        return NULL;
    }
    ResultSlot *self = (ResultSlot *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    if (sem_init(&self->done, 0, 0) != 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        Py_DECREF(self);
        return NULL;
    }
    self->ready = 1;
    return (PyObject *)self;
}

static void
slot_dealloc(ResultSlot *self)
{
    if (self->ready) {
        sem_destroy(&self->done);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void
add_seconds(struct timespec *when, double seconds)
{
    time_t whole = (time_t)seconds;
    when->tv_sec += whole;
    when->tv_nsec += (long)((seconds - (double)whole) * 1e9);
    if (when->tv_nsec >= 1000000000L) {
        when->tv_sec += 1;
        when->tv_nsec -= 1000000000L;
    }
}

PyDoc_STRVAR(slot_wait_doc,
             "wait(timeout_s) -> int | None\n\n"
             "Wait for the result of the task whose callback id is this slot's address, the\n"
             "GIL released; return its value handle's address, or None when `timeout_s`\n"
             "seconds passed first. A signal's Python handler runs while it waits (an\n"
             "exception it raises leaves the task's result unread).");

static PyObject *
slot_wait(ResultSlot *self, PyObject *arg)
{
    double timeout_s = PyFloat_AsDouble(arg);
    if (timeout_s == -1.0 && PyErr_Occurred()) {
        return NULL;
    }
    if (!(timeout_s >= 0.0) || timeout_s > 1e9) {
        PyErr_SetString(PyExc_ValueError, "timeout_s must be between 0 and 1e9 seconds");
        return NULL;
    }
    struct timespec deadline;
    clock_gettime(DEADLINE_CLOCK, &deadline);
    add_seconds(&deadline, timeout_s);
    for (;;) {
        int status;
        Py_BEGIN_ALLOW_THREADS
#ifdef HAVE_SEM_CLOCKWAIT
        status = sem_clockwait(&self->done, DEADLINE_CLOCK, &deadline);
#else
        status = sem_timedwait(&self->done, &deadline);
#endif
        Py_END_ALLOW_THREADS
        if (status == 0) {
            return PyLong_FromVoidPtr(self->handle);
        }
        if (errno == ETIMEDOUT) {
            Py_RETURN_NONE;
        }
        if (errno != EINTR) {
            return PyErr_SetFromErrno(PyExc_OSError);
        }
        if (PyErr_CheckSignals() < 0) {
            return NULL;
        }
    }
}

static PyObject *
slot_address(ResultSlot *self, void *closure)
{
    return PyLong_FromVoidPtr(self);
}

static PyMethodDef slot_methods[] = {
    {"wait", (PyCFunction)slot_wait, METH_O, slot_wait_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef slot_getset[] = {
    {"address", (getter)slot_address, NULL,
     "The slot's address: the callback id of a task whose result it takes.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ResultSlotType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "simulator._v8results.ResultSlot",
    .tp_basicsize = sizeof(ResultSlot),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Where V8's thread leaves one task's result for the thread waiting for it.",
    .tp_new = slot_new,
    .tp_dealloc = (destructor)slot_dealloc,
    .tp_methods = slot_methods,
    .tp_getset = slot_getset,
};

static struct PyModuleDef v8results_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simulator._v8results",
    .m_doc = "V8's results handed back to the waiting thread without Python (mini-racer).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__v8results(void)
{
    if (PyType_Ready(&ResultSlotType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&v8results_module);
    if (module == NULL) {
        return NULL;
    }
    PyObject *address = PyLong_FromVoidPtr((void *)(uintptr_t)hand_back);
    int failed = address == NULL || PyModule_AddObjectRef(module, "HAND_BACK", address) < 0 ||
                 PyModule_AddObjectRef(module, "ResultSlot", (PyObject *)&ResultSlotType) < 0;
    Py_XDECREF(address);
    if (failed) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
