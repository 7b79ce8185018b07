/* simulator._speedups: a run's processes' records and sim objects made without their Python
 * initialisers (one C call a run instead of three Python frames a process), and the result's
 * process rows made from the records.
 *
 * Python reference: simulator/runner.py _python_states_made and _python_sims_made (the
 * classes' own __init__: simulator/platform.py ProcessState, simulator/results.py
 * ProcessFigures, simulator/api.py Sim); simulator/results.py assemble_result (its loop over
 * the processes' figures).
 * Differential test: tests/simulator/test_spawn.py.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order; this part
 * uses the names the contract's table sets (simulator/hotpath.py NAMES) and the SimCore struct
 * and the slot caches of _speedups_sim.c. Each function makes its objects only while every
 * class is as its Python reference expects (made by `type(...)` as object's or SimCore's new
 * followed by the very __init__ handed in, slots where the class declares them); otherwise it
 * returns NotImplemented and the caller calls the classes.
 */

static PyObject *str_state_engine = NULL, *str_state_figures = NULL, *str_process_label = NULL,
                *str_process_rank = NULL, *str_process_node = NULL,
                *str_process_instance = NULL, *str_process_name = NULL, *str_finish_s = NULL,
                *str_memory_s = NULL, *str_sim_world = NULL, *str_sim_labels = NULL,
                *str_sim_random = NULL, *str_computation_memos = NULL;

/* The offset of the member slot `name` that `type` declares or inherits: a plain writable
 * object slot set by the generic attribute protocol; -1 (no error) when it is not one. */
static Py_ssize_t
spawn_slot_offset(PyTypeObject *type, PyObject *name)
{
    if (type->tp_setattro != PyObject_GenericSetAttr || name == NULL)
        return -1;
    PyObject *descriptor = _PyType_Lookup(type, name); /* borrowed */
    if (descriptor == NULL || !Py_IS_TYPE(descriptor, &PyMemberDescr_Type) ||
        !PyType_IsSubtype(type, ((PyMemberDescrObject *)descriptor)->d_common.d_type))
        return -1; /* a member of another class's layout (Python's descriptor refuses it) */
    PyMemberDef *member = ((PyMemberDescrObject *)descriptor)->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY))
        return -1;
    return member->offset;
}

/* Whether `type(...)` of `type` is its tp_new `new` then the Python function `init`, which
 * the caller's reference is: a plain class (no metaclass of its own, the generic allocation
 * and attribute writes), `init` the __init__ its instances find. */
static int
spawn_made_as(PyTypeObject *type, newfunc new, PyObject *init)
{
    if (Py_TYPE(type) != &PyType_Type || type->tp_new != new ||
        type->tp_alloc != PyType_GenericAlloc || type->tp_setattro != PyObject_GenericSetAttr ||
        !PyFunction_Check(init))
        return 0;
    return _PyType_Lookup(type, str___init__) == init;
}

/* Set the slot at `offset` of the new object `made` to a new reference of `value`. */
static inline void
spawn_set(PyObject *made, Py_ssize_t offset, PyObject *value)
{
    PyObject **slot = (PyObject **)((char *)made + offset);
    Py_XSETREF(*slot, Py_NewRef(value));
}

/* states_made(engine, slots, state_type, state_init, figures_type, figures_init, slot_type,
 * zero): [ProcessState(engine, slot) for slot in slots], each with its ProcessFigures(label,
 * rank, node, instance, name) (its other five figures `zero`, their default) and its name
 * f"{label}[{rank}]" (Slot.name); NotImplemented where a class or a slot is not as expected. */
static PyObject *
states_made(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8 || !PyList_CheckExact(args[1]) || !PyType_Check(args[2]) ||
        !PyType_Check(args[4]) || !PyType_Check(args[6]) || !PyFloat_CheckExact(args[7]) ||
        !PyType_IsSubtype((PyTypeObject *)args[6], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError,
                        "states_made(engine, slots: list, state_type, state_init, figures_type, "
                        "figures_init, slot_type: a tuple class, zero: float)");
        return NULL;
    }
    PyObject *engine = args[0], *slots = args[1], *zero = args[7];
    PyTypeObject *state_type = (PyTypeObject *)args[2], *figures_type = (PyTypeObject *)args[4];
    PyTypeObject *slot_type = (PyTypeObject *)args[6];
    if (!spawn_made_as(state_type, PyBaseObject_Type.tp_new, args[3]) ||
        !spawn_made_as(figures_type, PyBaseObject_Type.tp_new, args[5]))
        Py_RETURN_NOTIMPLEMENTED;
    /* ProcessState's engine, slot, name, figures; ProcessFigures' label, rank, node, instance,
     * name, then the five figures of default `zero` */
    PyObject *state_names[4] = {str_state_engine, str_slot, str_name, str_state_figures};
    PyObject *figure_names[10] = {str_process_label, str_process_rank, str_process_node,
                                  str_process_instance, str_process_name, str_compute_s,
                                  str_comm_s, str_wait_s, str_finish_s, str_memory_s};
    Py_ssize_t state_at[4], figure_at[10];
    for (int index = 0; index < 4; index++)
        if ((state_at[index] = spawn_slot_offset(state_type, state_names[index])) < 0)
            Py_RETURN_NOTIMPLEMENTED;
    for (int index = 0; index < 10; index++)
        if ((figure_at[index] = spawn_slot_offset(figures_type, figure_names[index])) < 0)
            Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t count = PyList_GET_SIZE(slots);
    /* every slot a Slot (a named tuple of label, rank, node, instance) whose name is the
     * f-string's join of an exact str and an exact int, checked before anything is made */
    for (Py_ssize_t at = 0; at < count; at++) {
        PyObject *slot = PyList_GET_ITEM(slots, at);
        if (Py_TYPE(slot) != slot_type || PyTuple_GET_SIZE(slot) != 4 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(slot, 0)) ||
            !PyLong_CheckExact(PyTuple_GET_ITEM(slot, 1)))
            Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *open = PyUnicode_InternFromString("[");
    PyObject *close = open == NULL ? NULL : PyUnicode_InternFromString("]");
    PyObject *empty = close == NULL ? NULL : PyUnicode_New(0, 0);
    PyObject *states = empty == NULL ? NULL : PyList_New(count);
    for (Py_ssize_t at = 0; states != NULL && at < count; at++) {
        PyObject *slot = PyList_GET_ITEM(slots, at);
        PyObject *label = PyTuple_GET_ITEM(slot, 0), *rank = PyTuple_GET_ITEM(slot, 1);
        PyObject *number = PyObject_Str(rank);
        PyObject *name = NULL;
        if (number != NULL) {
            PyObject *parts[] = {label, open, number, close};
            name = _PyUnicode_JoinArray(empty, parts, 4);
            Py_DECREF(number);
        }
        PyObject *figures = name == NULL ? NULL : figures_type->tp_alloc(figures_type, 0);
        PyObject *state = figures == NULL ? NULL : state_type->tp_alloc(state_type, 0);
        if (state == NULL) {
            Py_XDECREF(figures);
            Py_XDECREF(name);
            Py_CLEAR(states);
            break;
        }
        PyObject *figure_values[5] = {label, rank, PyTuple_GET_ITEM(slot, 2),
                                      PyTuple_GET_ITEM(slot, 3), name};
        for (int index = 0; index < 10; index++)
            spawn_set(figures, figure_at[index], index < 5 ? figure_values[index] : zero);
        PyObject *state_values[4] = {engine, slot, name, figures};
        for (int index = 0; index < 4; index++)
            spawn_set(state, state_at[index], state_values[index]);
        Py_DECREF(figures);
        Py_DECREF(name);
        PyList_SET_ITEM(states, at, state);
    }
    Py_XDECREF(empty);
    Py_XDECREF(close);
    Py_XDECREF(open);
    return states;
}

/* sims_made(sim_class, sim_init, world, states, labels, state_type, slot_type, node_memos,
 * engine, nodes, receivers, collectives, timeline, random): [sim_class(world, state, labels) for state in
 * states] as Sim.__init__ makes each (the world's values read once by the caller: its engine,
 * nodes, receivers, collectives and timeline, and the engine's random); a node's memos found
 * by `node_memos(node)` for its first process and kept on it; NotImplemented where a class or a
 * state is not as expected. */
static PyObject *
sims_made(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 14 || !PyType_Check(args[0]) || !PyList_CheckExact(args[3]) ||
        !PyType_Check(args[5]) || !PyType_Check(args[6]) ||
        !PyType_IsSubtype((PyTypeObject *)args[6], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError,
                        "sims_made(sim_class, sim_init, world, states: list, labels, state_type, "
                        "slot_type: a tuple class, node_memos, engine, nodes: dict, receivers, "
                        "collectives, "
                        "timeline, random)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)args[0], *state_type = (PyTypeObject *)args[5];
    PyTypeObject *slot_type = (PyTypeObject *)args[6];
    PyObject *world = args[2], *states = args[3], *labels = args[4], *node_memos = args[7];
    PyObject *engine = args[8], *nodes = args[9], *receivers = args[10], *collectives = args[11];
    PyObject *timeline = args[12], *random = args[13];
    if (!PyDict_CheckExact(nodes) || sim_core_type == NULL ||
        !PyType_IsSubtype(type, sim_core_type) ||
        !spawn_made_as(type, sim_core_type->tp_new, args[1]))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *sim_names[8] = {str_sim_world, str_state, str_sim_labels, str_receivers,
                              str_targets, str_collectives_slot, str_missed, str_sim_random};
    Py_ssize_t sim_at[8], state_slot_at, state_figures_at, state_name_at;
    for (int index = 0; index < 8; index++)
        if ((sim_at[index] = spawn_slot_offset(type, sim_names[index])) < 0)
            Py_RETURN_NOTIMPLEMENTED;
    if ((state_slot_at = spawn_slot_offset(state_type, str_slot)) < 0 ||
        (state_figures_at = spawn_slot_offset(state_type, str_state_figures)) < 0 ||
        (state_name_at = spawn_slot_offset(state_type, str_name)) < 0)
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t count = PyList_GET_SIZE(states);
    for (Py_ssize_t at = 0; at < count; at++) {
        PyObject *state = PyList_GET_ITEM(states, at);
        if (Py_TYPE(state) != state_type)
            Py_RETURN_NOTIMPLEMENTED;
        PyObject *slot = *(PyObject **)((char *)state + state_slot_at);
        if (slot == NULL || Py_TYPE(slot) != slot_type || PyTuple_GET_SIZE(slot) != 4 ||
            *(PyObject **)((char *)state + state_figures_at) == NULL ||
            *(PyObject **)((char *)state + state_name_at) == NULL)
            Py_RETURN_NOTIMPLEMENTED; /* Sim.__init__ would read them as attributes */
    }
    PyObject *sims = PyList_New(count);
    PyObject *node = NULL; /* the last process's node and its memos, kept while it repeats */
    PyObject *node_id = NULL, *usages = NULL, *memos = NULL;
    for (Py_ssize_t at = 0; sims != NULL && at < count; at++) {
        PyObject *state = PyList_GET_ITEM(states, at);
        PyObject *slot = *(PyObject **)((char *)state + state_slot_at);
        PyObject *id = PyTuple_GET_ITEM(slot, 2);
        if (node == NULL || id != node_id) {
            Py_CLEAR(usages);
            Py_CLEAR(memos);
            node = PyDict_GetItemWithError(nodes, id); /* borrowed: the dict keeps it */
            if (node == NULL) {
                if (!PyErr_Occurred())
                    _PyErr_SetKeyError(id);
                Py_CLEAR(sims);
                break;
            }
            node_id = id;
            usages = PyObject_GetAttr(node, str_usages);
            memos = usages == NULL ? NULL : PyObject_GetAttr(node, str_computation_memos);
            if (memos == Py_None) {
                Py_SETREF(memos, PyObject_CallOneArg(node_memos, node));
                if (memos != NULL && PyObject_SetAttr(node, str_computation_memos, memos) < 0)
                    Py_CLEAR(memos);
            }
            if (memos != NULL && (!PyTuple_CheckExact(memos) || PyTuple_GET_SIZE(memos) != 3)) {
                PyErr_SetString(PyExc_ValueError, "a node's memos are (memo, details, missed)");
                Py_CLEAR(memos);
            }
            if (memos == NULL) {
                node = NULL;
                Py_CLEAR(sims);
                break;
            }
        }
        PyObject *usage = PyObject_GetItem(usages, PyTuple_GET_ITEM(slot, 3));
        /* read after the calls above, which run Python code: a slot emptied since is an error,
         * not a NULL taken */
        PyObject *figures = *(PyObject **)((char *)state + state_figures_at);
        PyObject *name = *(PyObject **)((char *)state + state_name_at);
        if (usage != NULL && (figures == NULL || name == NULL)) {
            PyErr_SetString(PyExc_AttributeError, "a process record lost its figures or name");
            Py_CLEAR(usage);
        }
        PyObject *made = usage == NULL ? NULL : type->tp_alloc(type, 0);
        if (made == NULL) {
            Py_XDECREF(usage);
            Py_CLEAR(sims);
            break;
        }
        SimCore *core = (SimCore *)made;
        PyObject *values[8] = {world,       state,       labels, receivers,
                               Py_None,     collectives, PyTuple_GET_ITEM(memos, 2), random};
        for (int index = 0; index < 8; index++)
            spawn_set(made, sim_at[index], values[index]);
        core->engine = Py_NewRef(engine);
        core->usage = usage;
        core->memo = Py_NewRef(PyTuple_GET_ITEM(memos, 0));
        core->details = Py_NewRef(PyTuple_GET_ITEM(memos, 1));
        core->figures = Py_NewRef(figures);
        core->process = Py_NewRef(name);
        core->timeline = Py_NewRef(timeline);
        PyList_SET_ITEM(sims, at, made);
    }
    Py_XDECREF(usages);
    Py_XDECREF(memos);
    return sims;
}

/* process_rows_of(processes, template, figures_type, fields): the result's process rows (the
 * loop of simulator/results.py assemble_result, its Python reference): for each ProcessFigures
 * a copy of `template` (ROW_COPIES), its value of each (key, attribute) pair of `fields` set
 * from the figures' slot of that attribute; NotImplemented where `processes` is not a list of
 * exact `figures_type` instances or an attribute is not a plain slot of it. */
static PyObject *
process_rows_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyDict_CheckExact(args[1]) || !PyType_Check(args[2]) ||
        !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "process_rows_of(processes, template: dict, "
                                         "figures_type, fields: tuple of (key, attribute))");
        return NULL;
    }
    PyObject *processes = args[0], *template = args[1], *fields = args[3];
    PyTypeObject *type = (PyTypeObject *)args[2];
    Py_ssize_t width = PyTuple_GET_SIZE(fields);
    if (!PyList_CheckExact(processes) || type->tp_getattro != PyObject_GenericGetAttr ||
        width > 16)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *keys[16];
    Py_ssize_t at_offset[16];
    for (Py_ssize_t index = 0; index < width; index++) {
        PyObject *field = PyTuple_GET_ITEM(fields, index);
        if (!PyTuple_CheckExact(field) || PyTuple_GET_SIZE(field) != 2 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(field, 1)))
            Py_RETURN_NOTIMPLEMENTED;
        keys[index] = PyTuple_GET_ITEM(field, 0);
        /* a slot the class declares, read as its descriptor reads it (unset: its error) */
        if ((at_offset[index] = spawn_slot_offset(type, PyTuple_GET_ITEM(field, 1))) < 0)
            Py_RETURN_NOTIMPLEMENTED;
    }
    Py_ssize_t count = PyList_GET_SIZE(processes);
    for (Py_ssize_t at = 0; at < count; at++)
        if (Py_TYPE(PyList_GET_ITEM(processes, at)) != type)
            Py_RETURN_NOTIMPLEMENTED;
    PyObject *rows = PyList_New(count);
    for (Py_ssize_t at = 0; rows != NULL && at < count; at++) {
        PyObject *figures = PyList_GET_ITEM(processes, at);
        PyObject *row = PyDict_Copy(template);
        for (Py_ssize_t index = 0; row != NULL && index < width; index++) {
            PyObject *value = *(PyObject **)((char *)figures + at_offset[index]);
            if (value == NULL) {
                PyObject *field = PyTuple_GET_ITEM(fields, index);
                Py_XDECREF(PyObject_GetAttr(figures, PyTuple_GET_ITEM(field, 1))); /* its error */
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_AttributeError, "a process's figure is unset");
                Py_CLEAR(row);
            }
            else if (PyDict_SetItem(row, keys[index], value) < 0)
                Py_CLEAR(row);
        }
        if (row == NULL) {
            Py_CLEAR(rows);
            break;
        }
        PyList_SET_ITEM(rows, at, row);
    }
    return rows;
}

static PyObject *str_slot_rank = NULL, *str_spawn_stackless = NULL, *str_process_data = NULL,
                *str_process_on_error = NULL, *str_sim_stackless = NULL;

/* stackless_spawned(engine, states, sims, shared, template, places, label_counts, on_error,
 * label_type): each process of a run whose processes share one stackless function spawned as
 * the runner's loop spawns it (simulator/runner.py _python_stackless_spawned, its Python
 * reference): its arguments `template`'s, its sim, rank, tag (label_type(slot.label)) and
 * labels (a copy of `label_counts`) at `places` (four indices, -1: not an argument), its
 * generator `shared(*arguments)` given to the engine's spawn_stackless under the state's name,
 * the process's on_error, data and its sim's `_stackless` then set; None, or NotImplemented
 * (nothing spawned) where the engine's spawn_stackless is not the C core's. */
static PyObject *
stackless_spawned(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 || !PyList_CheckExact(args[1]) || !PyList_CheckExact(args[2]) ||
        !PyList_CheckExact(args[4]) || !PyTuple_CheckExact(args[5]) ||
        PyTuple_GET_SIZE(args[5]) != 4 || !PyDict_CheckExact(args[6]) ||
        PyList_GET_SIZE(args[1]) != PyList_GET_SIZE(args[2]) || PyList_GET_SIZE(args[4]) > 64) {
        PyErr_SetString(PyExc_TypeError,
                        "stackless_spawned(engine, states: list, sims: list of as many, shared, "
                        "template: list, places: 4 ints, label_counts: dict, on_error, "
                        "label_type)");
        return NULL;
    }
    PyObject *engine = args[0], *states = args[1], *sims = args[2], *shared = args[3];
    PyObject *template = args[4], *label_counts = args[6], *on_error = args[7];
    PyObject *label_type = args[8];
    if (!PyObject_TypeCheck(engine, core_type))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *spawn = _PyType_Lookup(Py_TYPE(engine), str_spawn_stackless); /* borrowed */
    if (spawn == NULL || !Py_IS_TYPE(spawn, &PyMethodDescr_Type) ||
        ((PyMethodDescrObject *)spawn)->d_method->ml_meth !=
            (PyCFunction)(void (*)(void))Core_spawn_stackless)
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t places[4];
    for (int index = 0; index < 4; index++) {
        places[index] = PyLong_AsSsize_t(PyTuple_GET_ITEM(args[5], index));
        if (places[index] == -1 && PyErr_Occurred())
            return NULL;
        if (places[index] >= PyList_GET_SIZE(template)) {
            PyErr_SetString(PyExc_IndexError, "an argument's place beyond the template");
            return NULL;
        }
    }
    Py_ssize_t width = PyList_GET_SIZE(template), count = PyList_GET_SIZE(states);
    for (Py_ssize_t at = 0; at < count; at++) {
        PyObject *state = PyList_GET_ITEM(states, at), *sim = PyList_GET_ITEM(sims, at);
        PyObject *values[64];
        PyObject *owned[2] = {NULL, NULL}; /* the tag and the labels made for this process */
        PyObject *slot = PyObject_GetAttr(state, str_slot);
        PyObject *name = slot == NULL ? NULL : PyObject_GetAttr(state, str_name);
        int failed = name == NULL;
        for (Py_ssize_t index = 0; index < width; index++)
            values[index] = PyList_GET_ITEM(template, index);
        if (!failed && places[0] >= 0)
            values[places[0]] = sim;
        PyObject *rank = NULL;
        if (!failed && places[1] >= 0) {
            rank = PyObject_GetAttr(slot, str_slot_rank);
            failed = rank == NULL;
            if (!failed)
                values[places[1]] = rank;
        }
        if (!failed && places[2] >= 0) {
            PyObject *label = PyObject_GetAttr(slot, str_label);
            owned[0] = label == NULL ? NULL : PyObject_CallOneArg(label_type, label);
            Py_XDECREF(label);
            failed = owned[0] == NULL;
            if (!failed)
                values[places[2]] = owned[0];
        }
        if (!failed && places[3] >= 0) {
            owned[1] = PyDict_Copy(label_counts);
            failed = owned[1] == NULL;
            if (!failed)
                values[places[3]] = owned[1];
        }
        PyObject *generator = failed ? NULL : PyObject_Vectorcall(shared, values, width, NULL);
        PyObject *process = NULL;
        if (generator != NULL) {
            PyObject *call[] = {name, generator, sim};
            process = Core_spawn_stackless((Core *)engine, call, 3);
        }
        int status = process == NULL ||
                             PyObject_SetAttr(process, str_process_on_error, on_error) < 0 ||
                             PyObject_SetAttr(sim, str_sim_stackless, process) < 0 ||
                             PyObject_SetAttr(process, str_process_data, state) < 0
                         ? -1
                         : 0;
        Py_XDECREF(process);
        Py_XDECREF(generator);
        Py_XDECREF(owned[1]);
        Py_XDECREF(owned[0]);
        Py_XDECREF(rank);
        Py_XDECREF(name);
        Py_XDECREF(slot);
        if (status < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}
