/* simulator._speedups: a component instance's usage (Usage).
 *
 * Python reference: simulator/results.py PythonUsage.
 * Differential test: tests/simulator/test_hot_path.py
 *   test_both_usages_account_a_random_workload_identically.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

/* -- a component instance's usage (simulator/results.py Usage, its Python reference) ---------- */

static PyTypeObject *core_type = NULL;  /* Core, made at import */
static PyTypeObject *sim_core_type = NULL; /* SimCore, made at import */

/* PyObject_TypeCheck(obj, type) for the classes met at every event (an Engine, a Sim: Python
 * subclasses of Core and SimCore): the last subclass found is kept, with a reference so that
 * its address stays its own, and then needs no walk of its bases. A subclass of a C class
 * cannot lose it from its bases (CPython refuses a `__bases__` of another layout). */
static inline int
instance_of(PyObject *obj, PyTypeObject *type, PyTypeObject **seen)
{
    PyTypeObject *actual = Py_TYPE(obj);
    if (actual == type || actual == *seen)
        return 1;
    if (!PyType_IsSubtype(actual, type))
        return 0;
    PyTypeObject *old = *seen;
    *seen = (PyTypeObject *)Py_NewRef(actual);
    Py_XDECREF(old);
    return 1;
}
static PyTypeObject *core_seen = NULL, *sim_core_seen = NULL;
#define IS_CORE(obj) instance_of((obj), core_type, &core_seen)
#define IS_SIM_CORE(obj) instance_of((obj), sim_core_type, &sim_core_seen)
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

#define Usage_FIELDS(X) X(node) X(instance) X(track)
GC_TYPE_FUNCTIONS(Usage, Usage_FIELDS)

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
