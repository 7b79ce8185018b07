/* simulator._speedups: message filters, receive, send and the rooted collectives.
 *
 * Python reference: simulator/api.py _PythonMessageFilter and _PythonSimCore's
 *   p2pCommunicationSend, receive and collectives.
 * Differential test: tests/simulator/test_hot_path.py (test_the_c_send_...,
 *   test_the_c_collectives_...).
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

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

#define MessageFilter_FIELDS(X) X(channel) X(label) X(peer)
GC_TYPE_FUNCTIONS(MessageFilter, MessageFilter_FIELDS)

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
 * slots set here instead of by its __init__ (which would be a Python call a message, a large
 * part of a ping-pong's cost); NULL with no error when the class is not as set_message_type
 * found it. */
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

/* A send of a plain size (a float or int, not a bool, finite and >= 0) without hostMemory, on
 * the C core: World.send's message, handed to the first hop's FIFO (or the target's mailbox
 * when the route charges no hop). The route is Sim._targets' for a target this process sent to
 * before; for a first send, Sim._target's (the call api._PythonSimCore.p2pCommunicationSend
 * makes, which checks the target and keeps its route in _targets), so that a process's first
 * send is not the whole send in Python. 1 when sent, 0 when Python must do it (nothing done),
 * -1 on error. */
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
    PyObject *route = NULL;
    if (PyDict_CheckExact(targets)) { /* else None: the process's first send */
        /* the key of Sim._targets: (label, rank, type(rank)), so rank 1.0 or True is not 1 */
        PyObject *key = PyTuple_Pack(3, args[1], rank, (PyObject *)Py_TYPE(rank));
        if (key == NULL) {
            Py_DECREF(targets);
            return -1;
        }
        route = PyDict_GetItemWithError(targets, key); /* borrowed */
        Py_DECREF(key);
        if (route != NULL)
            Py_INCREF(route);
        else if (PyErr_Occurred()) { /* an unhashable label or rank: Python's message */
            Py_DECREF(targets);
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return -1;
            PyErr_Clear();
            return 0;
        }
    }
    Py_DECREF(targets);
    if (route == NULL) { /* the first send to this target: Sim._target checks and keeps it */
        if (str_target_method == NULL)
            return 0;
        PyObject *call[] = {(PyObject *)self, args[1], rank};
        route = PyObject_VectorcallMethod(str_target_method, call,
                                          3 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        if (route == NULL)
            return -1;
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
