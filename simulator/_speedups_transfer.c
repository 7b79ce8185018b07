/* simulator._speedups: a message crossing its hops (Transfer), the mailbox and FIFO cores, and a
 * route's FIFO hops (fifo_hops).
 *
 * Python reference: simulator/platform.py _Transfer, fifo_hops; simulator/engine.py Mailbox and
 * Resource.
 * Differential test: tests/simulator/test_hot_path.py (test_the_c_message_path_...,
 *   test_a_route_s_fifo_hops_are_the_pure_python_ones), tests/simulator/test_engine.py.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

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
 * (`_transfer_times`, keyed by its arguments), new; NULL with no error when it has not, the
 * node keeps no such memo, or the size is one js_mark marks (the method keys it): the method
 * then computes it. */
static PyObject *
remembered_transfer_time(PyObject *node, PyObject *key)
{
    PyObject **times = slot_address(node, &transfer_times_slot);
    if (times == NULL || *times == NULL || !PyDict_CheckExact(*times))
        return NULL;
    if (js_mark(PyTuple_GET_ITEM(key, 0)) != 0) /* -0 bytes: its key carries the mark */
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

#define Transfer_FIELDS(X) X(engine) X(timeline) X(message) X(hops) X(target)
GC_TYPE_FUNCTIONS(Transfer, Transfer_FIELDS)

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

#define MailboxCore_FIELDS(X) X(engine) X(items) X(getters)
GC_TYPE_FUNCTIONS(MailboxCore, MailboxCore_FIELDS)

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

#define ResourceCore_FIELDS(X) X(engine) X(queue)
GC_TYPE_FUNCTIONS(ResourceCore, ResourceCore_FIELDS)

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

/* -- a route's FIFO hops (simulator/platform.py `fifo_hops`, its Python reference) ---------- */

static PyObject *str_usages = NULL, *str_links = NULL, *str_link = NULL, *str_node_engine = NULL;
static SlotCache usages_slot = {&str_usages}, links_slot = {&str_links},
                 node_engine_slot = {&str_node_engine}, node_id_slot = {&str_id};
static PyObject *resource_type = NULL; /* simulator.engine.Resource, set by set_resource_type */
/* a FIFO's name's literal parts ("link ", "[", "] ", "->") and "", made with resource_type */
static PyObject *link_parts[5] = {NULL};
static PyObject *deque_type = NULL; /* collections.deque, a FIFO's queue */
static PyObject *str_resource_name = NULL;
static SlotCache resource_name_slot = {&str_resource_name};
/* resource_type's version tag when set_resource_type found it made as `resource_made` needs
 * (0: never, or not so): a change to the class since (its __init__ replaced, say) changes the
 * tag, and FIFOs are then made by calling the class. */
static unsigned int resource_version = 0;

/* Resource(engine, name) made as its __init__ makes it (capacity 1, no user, an empty deque,
 * the name in its slot) without the call of that Python function, while the class is as
 * set_resource_type found it; NULL with no error when it is not, NULL with an error on one. */
static PyObject *
resource_made(PyObject *engine, PyObject *name)
{
    PyTypeObject *type = (PyTypeObject *)resource_type;
    if (resource_version == 0 || type->tp_version_tag != resource_version ||
        !(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        return NULL;
    PyObject *queue = PyObject_CallNoArgs(deque_type);
    PyObject *made = queue == NULL ? NULL : type->tp_alloc(type, 0);
    PyObject **slot = made == NULL ? NULL : slot_address(made, &resource_name_slot);
    if (slot == NULL) {
        if (made != NULL && !PyErr_Occurred())
            resource_version = 0; /* not the class it was: call it from now on */
        Py_XDECREF(made);
        Py_XDECREF(queue);
        return NULL;
    }
    ResourceCore *core = (ResourceCore *)made;
    core->engine = Py_NewRef(engine);
    core->queue = queue;
    core->capacity = 1;
    core->users = 0;
    Py_XSETREF(*slot, Py_NewRef(name));
    return made;
}

/* A node's new FIFO from `came_from` to `going_to` kept in its `links` under `key` (of hash
 * `hash`), made as NodeRuntime.link makes it (a Resource named "link <node>[<instance>]
 * <from>-><to>" on the node's engine); without the Resource class handed over, `node.link(...)`
 * itself. */
static PyObject *
new_link(PyObject *node, PyObject *links, PyObject *key, Py_hash_t hash, PyObject *instance,
         PyObject *came_from, PyObject *going_to)
{
    if (resource_type == NULL) {
        PyObject *call[] = {node, instance, came_from, going_to};
        return PyObject_VectorcallMethod(str_link, call, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                         NULL);
    }
    PyObject *node_id = slot_get(node, &node_id_slot);
    PyObject *engine = node_id == NULL ? NULL : slot_get(node, &node_engine_slot);
    /* the f-string's parts joined as it joins them; `{}` is str() of a str or an int */
    PyObject *number = engine == NULL ? NULL : PyObject_Str(instance);
    PyObject *name = NULL;
    if (number != NULL && link_parts[0] != NULL) {
        PyObject *parts[] = {link_parts[0], node_id,       link_parts[1], number,
                             link_parts[2], came_from,     link_parts[3], going_to};
        name = _PyUnicode_JoinArray(link_parts[4], parts, 8);
    }
    Py_XDECREF(number);
    PyObject *link = name == NULL ? NULL : resource_made(engine, name);
    if (link == NULL && name != NULL && !PyErr_Occurred()) {
        PyObject *call[] = {engine, name};
        link = PyObject_Vectorcall(resource_type, call, 2, NULL);
    }
    if (link != NULL && _PyDict_SetItem_KnownHash(links, key, link, hash) < 0)
        Py_CLEAR(link);
    Py_XDECREF(name);
    Py_XDECREF(engine);
    Py_XDECREF(node_id);
    return link;
}

/* The instance of a plan's hop (World._plan): the sender's (end 0), the receiver's (1), or for
 * a node between them the sender's wrapped to the node's instances (`source % len(usages)`);
 * a new reference, NULL on error. */
static PyObject *
hop_instance(PyObject *node, PyObject *end, PyObject *source, PyObject *target)
{
    long which = PyLong_AsLong(end);
    if (which == -1 && PyErr_Occurred())
        return NULL;
    if (which == 0 || which == 1) /* `ends[end]`: the instance object itself */
        return Py_NewRef(which == 0 ? source : target);
    PyObject *usages = slot_get(node, &usages_slot);
    Py_ssize_t count = usages == NULL ? -1 : PyObject_Size(usages);
    Py_XDECREF(usages);
    PyObject *count_obj = count < 0 ? NULL : PyLong_FromSsize_t(count);
    PyObject *instance = count_obj == NULL ? NULL : PyNumber_Remainder(source, count_obj);
    Py_XDECREF(count_obj);
    return instance;
}

/* One hop (node, instance, its FIFO from `came_from` to `going_to`, the instance's usage): the
 * FIFO the node keeps in `_links`, else a new one made as `node.link(...)` makes it; NULL on
 * error. */
static PyObject *
fifo_hop(PyObject *node, PyObject *instance, PyObject *came_from, PyObject *going_to)
{
    PyObject *links = slot_get(node, &links_slot);
    if (links == NULL)
        return NULL;
    PyObject *key = PyTuple_Pack(3, instance, came_from, going_to);
    Py_hash_t hash = key == NULL ? -1 : PyObject_Hash(key); /* once: the look-up's and the set's */
    PyObject *link = hash == -1 || !PyDict_CheckExact(links)
                         ? NULL
                         : Py_XNewRef(_PyDict_GetItem_KnownHash(links, key, hash));
    if (link == NULL && hash != -1 && !PyErr_Occurred()) { /* a new FIFO */
        if (PyDict_CheckExact(links))
            link = new_link(node, links, key, hash, instance, came_from, going_to);
        else { /* not a dict: link's own */
            PyObject *call[] = {node, instance, came_from, going_to};
            link = PyObject_VectorcallMethod(str_link, call, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                             NULL);
        }
    }
    Py_XDECREF(key);
    Py_DECREF(links);
    PyObject *usages = link == NULL ? NULL : slot_get(node, &usages_slot);
    PyObject *usage = usages == NULL ? NULL : PyObject_GetItem(usages, instance);
    PyObject *hop = usage == NULL ? NULL : PyTuple_Pack(4, node, instance, link, usage);
    Py_XDECREF(usage);
    Py_XDECREF(usages);
    Py_XDECREF(link);
    return hop;
}

/* fifo_hops(plan, nodes, source, target, hop_tuples): platform.fifo_hops in C. */
static PyObject *
fifo_hops(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyTuple_CheckExact(args[0]) || !PyDict_CheckExact(args[4])) {
        PyErr_SetString(PyExc_TypeError,
                        "fifo_hops(plan: tuple, nodes, source, target, hop_tuples: dict)");
        return NULL;
    }
    PyObject *plan = args[0], *hop_tuples = args[4];
    Py_ssize_t count = PyTuple_GET_SIZE(plan);
    PyObject *instances = PyTuple_New(count);
    if (instances == NULL)
        return NULL;
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *step = PyTuple_GET_ITEM(plan, index);
        PyObject *instance = NULL;
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 4)
            PyErr_SetString(PyExc_TypeError, "a plan's hop is (node, end, from, to)");
        else
            instance = hop_instance(PyTuple_GET_ITEM(step, 0), PyTuple_GET_ITEM(step, 1), args[2],
                                    args[3]);
        if (instance == NULL) {
            Py_DECREF(instances);
            return NULL;
        }
        PyTuple_SET_ITEM(instances, index, instance);
    }
    /* pairs whose hops charge the same instances share one tuple (World._hop_tuples) */
    PyObject *shared = PyTuple_Pack(2, args[1], instances);
    Py_hash_t hash = shared == NULL ? -1 : PyObject_Hash(shared);
    PyObject *hops = hash == -1 ? NULL
                                : Py_XNewRef(_PyDict_GetItem_KnownHash(hop_tuples, shared, hash));
    if (hops == NULL && hash != -1 && !PyErr_Occurred()) {
        hops = PyTuple_New(count);
        for (Py_ssize_t index = 0; hops != NULL && index < count; index++) {
            PyObject *step = PyTuple_GET_ITEM(plan, index);
            PyObject *hop = fifo_hop(PyTuple_GET_ITEM(step, 0), PyTuple_GET_ITEM(instances, index),
                                     PyTuple_GET_ITEM(step, 2), PyTuple_GET_ITEM(step, 3));
            if (hop == NULL)
                Py_CLEAR(hops);
            else
                PyTuple_SET_ITEM(hops, index, hop);
        }
        if (hops != NULL && _PyDict_SetItem_KnownHash(hop_tuples, shared, hops, hash) < 0)
            Py_CLEAR(hops);
    }
    Py_XDECREF(shared);
    Py_DECREF(instances);
    return hops;
}

static PyObject *
set_resource_type(PyObject *module, PyObject *type)
{
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "set_resource_type expects a class");
        return NULL;
    }
    const char *texts[5] = {"link ", "[", "] ", "->", ""};
    for (int index = 0; index < 5; index++)
        if (link_parts[index] == NULL &&
            (link_parts[index] = PyUnicode_InternFromString(texts[index])) == NULL)
            return NULL;
    if (deque_type == NULL) {
        PyObject *collections = PyImport_ImportModule("collections");
        deque_type = collections == NULL ? NULL : PyObject_GetAttrString(collections, "deque");
        Py_XDECREF(collections);
        if (deque_type == NULL)
            return NULL;
    }
    Py_XSETREF(resource_type, Py_NewRef(type));
    /* Made without its __init__ call (`resource_made`) only a class made as Resource is: its
     * own __init__ (a Python function) on ResourceCore's new, no __dict__, `name` its slot. */
    PyTypeObject *made = (PyTypeObject *)type;
    resource_version = 0;
    PyObject *init = PyDict_GetItemWithError(made->tp_dict, str___init__); /* borrowed */
    if (init == NULL && PyErr_Occurred())
        return NULL;
    PyObject *name = _PyType_Lookup(made, str_resource_name);
    if (init != NULL && PyFunction_Check(init) && made->tp_base == resource_core_type &&
        made->tp_new == PyType_GenericNew && made->tp_alloc == PyType_GenericAlloc &&
        made->tp_dictoffset == 0 && name != NULL && Py_IS_TYPE(name, &PyMemberDescr_Type) &&
        ((PyMemberDescrObject *)name)->d_common.d_type == made) {
        _PyType_Lookup(made, str___init__); /* gives the class its version tag */
        if (made->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)
            resource_version = made->tp_version_tag;
    }
    Py_RETURN_NONE;
}

/* -- a FIFO-only run's route (simulator/platform.py `fifo_route`, its Python reference) ------ */

static PyObject *str_slot_node = NULL, *str_slot_instance = NULL;

/* fifo_route(cache, plans, plan_of, hop_tuples, source, target): platform.fifo_route in C. */
static PyObject *
fifo_route(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyDict_CheckExact(args[0]) || !PyDict_CheckExact(args[1]) ||
        !PyDict_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "fifo_route(cache: dict, plans: dict, plan_of, "
                                         "hop_tuples: dict, source, target)");
        return NULL;
    }
    PyObject *cache = args[0], *plans = args[1];
    PyObject *ends[4] = {NULL, NULL, NULL, NULL}; /* source node, instance, target node, instance */
    PyObject *key = NULL, *nodes = NULL, *plan = NULL, *hops = NULL;
    Py_hash_t hash = -1;
    for (int index = 0; index < 4; index++) {
        ends[index] = PyObject_GetAttr(args[4 + index / 2],
                                       index % 2 == 0 ? str_slot_node : str_slot_instance);
        if (ends[index] == NULL)
            goto done;
    }
    /* the hops kept per pair of instances (World._hops) */
    key = PyTuple_Pack(4, ends[0], ends[1], ends[2], ends[3]);
    hash = key == NULL ? -1 : PyObject_Hash(key);
    if (hash == -1)
        goto done;
    hops = Py_XNewRef(_PyDict_GetItem_KnownHash(cache, key, hash));
    if (hops != NULL || PyErr_Occurred())
        goto done;
    /* the plan of the pair of nodes (World._plans, made by World._plan) */
    nodes = PyTuple_Pack(2, ends[0], ends[2]);
    plan = nodes == NULL ? NULL : Py_XNewRef(PyDict_GetItemWithError(plans, nodes));
    if (plan == NULL && nodes != NULL && !PyErr_Occurred()) {
        PyObject *call[] = {ends[0], ends[2]};
        plan = PyObject_Vectorcall(args[2], call, 2, NULL);
        if (plan != NULL && PyDict_SetItem(plans, nodes, plan) < 0)
            Py_CLEAR(plan);
    }
    if (plan == NULL)
        goto done;
    PyObject *made[] = {plan, nodes, ends[1], ends[3], args[3]};
    hops = fifo_hops(module, made, 5);
    if (hops != NULL && _PyDict_SetItem_KnownHash(cache, key, hops, hash) < 0)
        Py_CLEAR(hops);
done:
    for (int index = 0; index < 4; index++)
        Py_XDECREF(ends[index]);
    Py_XDECREF(key);
    Py_XDECREF(nodes);
    Py_XDECREF(plan);
    return hops;
}
