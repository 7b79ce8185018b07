/* simulator._speedups: the sim API's hot path (SimCore: slots read by name, the memo,
 * computation).
 *
 * Python reference: simulator/api.py _PythonSimCore.
 * Differential test: tests/simulator/test_hot_path.py
 *   (test_the_c_hot_path_gives_the_pure_python_result_...).
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

/* -- the sim API's hot path (simulator/api.py _PythonSimCore, its Python reference) ----------- */

static PyTypeObject *plain_params_type = NULL; /* simulator.api.HashMap, besides dict */
static PyObject *str_computation_time = NULL, *str_computation_fallback = NULL,
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
                *str_p2p_send_fallback = NULL, *str_missed = NULL, *str_program = NULL,
                *str_target_method = NULL;

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
                 targets_slot = {&str_targets}, state_slot = {&str_state},
                 missed_slot = {&str_missed}, program_slot = {&str_program};

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
 * the memo's; params with a value js_mark marks are never in it (their key carries the marks,
 * a level's dict would not). Returns a borrowed float, or NULL: not indexed (no error), or an error (an
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
        if (!PyDict_CheckExact(level) || js_mark(value) != 0) /* marked: only the memo's key */
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
            } else {
                if (js_mark(value) != 0) /* its key carries js_marks: the index has none */
                    return 0;
                next_key = Py_NewRef(value);
            }
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

/* Whether a parameter is one the compiled model reads from a plain dict as it is: a str name
 * other than "__proto__" (V8 reads the JSON's as the prototype) holding a float, an int, a
 * str, a bool or None (js_compiler._PLAIN_TYPES, exact types as its `type(...) in` test). */
static inline int
plain_parameter(PyObject *name, PyObject *value)
{
    if (!PyUnicode_CheckExact(name))
        return 0;
    if (PyUnicode_GET_LENGTH(name) == 9 && PyUnicode_CompareWithASCIIString(name, "__proto__") == 0)
        return 0;
    return PyFloat_CheckExact(value) || PyLong_CheckExact(value) || PyUnicode_CheckExact(value) ||
           PyBool_Check(value) || value == Py_None;
}

/* Return the memo key of computationTime(params) (simulator.hotpath.memo_key: the items, and
 * their js_marks where any value is marked), or NULL; set
 * `*plain` when params is a dict of plain parameters only (plain_parameter). */
static PyObject *
computation_key(PyObject *params, int *plain)
{
    Py_ssize_t count = PyDict_GET_SIZE(params), index = 0, position = 0;
    PyObject *items = PyTuple_New(count);
    if (items == NULL)
        return NULL;
    PyObject *name, *value, *marks = NULL; /* js_marks, made at the first marked value */
    *plain = PyDict_CheckExact(params);
    while (PyDict_Next(params, &position, &name, &value)) {
        if (*plain && !plain_parameter(name, value))
            *plain = 0;
        long mark = js_mark(value);
        if (mark == JS_MARKED_TUPLE) { /* its marks are a tuple: the Python path keys it */
            Py_DECREF(items);
            Py_XDECREF(marks);
            PyErr_SetString(PyExc_TypeError, "a tuple parameter with marked items");
            return NULL;
        }
        if (mark != 0 && index < count) {
            if (marks == NULL) {
                marks = PyTuple_New(count);
                if (marks == NULL) {
                    Py_DECREF(items);
                    return NULL;
                }
                for (Py_ssize_t before = 0; before < count; before++)
                    PyTuple_SET_ITEM(marks, before, PyLong_FromLong(0)); /* small int: no error */
            }
            PyObject *unmarked = PyTuple_GET_ITEM(marks, index);
            PyTuple_SET_ITEM(marks, index, PyLong_FromLong(mark)); /* small int: no error */
            Py_DECREF(unmarked);
        }
        if (index == count) { /* cannot happen: nothing runs between here and PyTuple_New */
            Py_DECREF(items);
            Py_XDECREF(marks);
            PyErr_SetString(PyExc_RuntimeError, "params changed size during the lookup");
            return NULL;
        }
        PyObject *pair = PyTuple_Pack(2, name, value);
        if (pair == NULL) {
            Py_DECREF(items);
            Py_XDECREF(marks);
            return NULL;
        }
        PyTuple_SET_ITEM(items, index++, pair);
    }
    PyObject *key = marks == NULL
                        ? PyTuple_Pack(3, str_computation_time, empty_tuple, items)
                        : PyTuple_Pack(4, str_computation_time, empty_tuple, items, marks);
    Py_DECREF(items);
    Py_XDECREF(marks);
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
    /* two floats (a time) or an int and one_int (a count): float_add's and long_add's very
     * sums, without the number protocol's dispatch; any other pair through it */
    long long count = PyLong_CheckExact(old) && value == one_int ? PyLong_AsLongLong(old) : -1;
    if (count == -1)
        PyErr_Clear(); /* an int beyond long long: PyNumber_Add's */
    PyObject *sum = PyFloat_CheckExact(old) && PyFloat_CheckExact(value)
                        ? PyFloat_FromDouble(PyFloat_AS_DOUBLE(old) + PyFloat_AS_DOUBLE(value))
                    : count >= 0 && count < LLONG_MAX ? PyLong_FromLongLong(count + 1)
                                                      : PyNumber_Add(old, value);
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
    int is_core = IS_CORE(engine);
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

static int program_value(PyObject *program, PyObject *params, double *out); /* _program.c */

/* The memoized computation: `duration`, or NULL without an error when the Python code must
 * answer (not plain params, no memo, a detail to add, a value not known). A value not known
 * under a key built here leaves the key in `*missed` (a new reference; else NULL), and in
 * `*plain` whether params hold plain parameters only, for `missed_duration`. */
static PyObject *
memoized_duration(SimCore *self, PyObject *params, PyObject **missed, int *plain)
{
    *missed = NULL;
    if (!PyDict_CheckExact(params) && Py_TYPE(params) != plain_params_type)
        return NULL;
    PyObject *memo = self->memo;
    if (memo == NULL || !is_memo(memo)) /* None: the model is asked every time, in Python */
        return NULL;
    if (self->details != NULL && self->details != Py_None)
        return NULL;
    PyObject *index = NULL; /* the memo's index, when it has one (simulator.shallow.Memo) */
    if (Py_TYPE(memo) == memo_type) {
        /* the model as a program of doubles (Memo.program), when it is one: its value needs
         * no key and no memo (_speedups_program.c) */
        PyObject *program = slot_get(memo, &program_slot);
        if (program == NULL)
            return NULL;
        if (program != Py_None) {
            double value;
            int status = program_value(program, params, &value);
            Py_DECREF(program);
            if (status < 0)
                return NULL;
            if (status > 0)
                return PyFloat_FromDouble(value);
        }
        else
            Py_DECREF(program);
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
    PyObject *key = computation_key(params, plain);
    if (key == NULL) {
        Py_XDECREF(index);
        if (PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_Clear();
        return NULL;
    }
    PyObject *duration = PyDict_GetItemWithError(memo, key);
    if (duration == NULL && !PyErr_Occurred()) { /* not known: the model evaluates it */
        Py_XDECREF(index);
        *missed = key;
        return NULL;
    }
    Py_DECREF(key);
    if (duration == NULL || !PyFloat_CheckExact(duration)) {
        /* not a float (the memo holds floats: anything else, Python decides), or an error */
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
static int keep_kernel(SimCore *self, PyObject *timeline, PyObject *params, double start,
                       double end);

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
    return add_to_attribute(timeline, &dropped_slot, one_int) < 0 ? -1 : 1;
}

/* Put the memoized computation that ran from `start` to `end` on the timeline (not full): here
 * when its params cannot be a GPU kernel's (no CUDACoreInstructions, `kernel_inputs`'s own
 * first test) or their kernel inputs are plain numbers (`keep_kernel`), else through
 * `_PythonSimCore._record_computation`. */
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
        int kept = keep_kernel(self, timeline, params, start, end); /* _speedups_kernel.c */
        if (kept != 0)
            return kept < 0 ? -1 : 0;
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
    if (self->engine == NULL || !IS_CORE(self->engine) ||
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
    if (IS_CORE(self->engine))
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

/* A computation the memo lacks under `key` (stolen): `Sim._missed(key, params)`, the model's
 * checked value, kept in the memo (api._PythonSimCore.computation's miss, its Python
 * reference); NULL without an error where `_missed` is None (the general case, in Python).
 * Params of plain parameters only (computation_key) are said with a third argument, True:
 * the compiled model's miss then skips its own test of them, which the key's building made. */
static PyObject *
missed_duration(SimCore *self, PyObject *key, PyObject *params, int plain)
{
    PyObject *missed = slot_get((PyObject *)self, &missed_slot);
    if (missed == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    PyObject *duration = NULL;
    if (missed != Py_None) {
        PyObject *call[3] = {key, params, Py_True};
        duration = PyObject_Vectorcall(missed, call, plain ? 3 : 2, NULL);
    }
    Py_DECREF(missed);
    Py_DECREF(key);
    return duration;
}

static PyObject *
SimCore_computation(SimCore *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *duration = NULL;
    /* params, software_stack, optimization given by position (MERPSYS's Listing 5 passes all
     * three): the last two do not change the computation, as in the Python reference; memory
     * (a fourth) and keywords are Python's */
    if (nargs >= 1 && nargs <= 3 && kwnames == NULL) {
        PyObject *missed = NULL;
        int plain = 0;
        duration = memoized_duration(self, args[0], &missed, &plain);
        if (missed != NULL)
            duration = missed_duration(self, missed, args[0], plain);
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

#define SimCore_FIELDS(X) X(details) X(engine) X(figures) X(memo) X(process) X(timeline) \
    X(usage) X(stackless) X(pending) X(pending_params) X(pending_detail) X(continuation) \
    X(receive_then)
GC_TYPE_FUNCTIONS(SimCore, SimCore_FIELDS)

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
    if (self->engine == NULL || !IS_CORE(self->engine) ||
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
