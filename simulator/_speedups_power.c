/* simulator._speedups: the result's power series (each powered component instance's power over
 * the run, from the timeline's computations and transfers on it).
 *
 * Python reference: simulator/results.py power_series_of.
 * Differential test: tests/simulator/test_results.py
 *   (test_the_c_power_series_are_the_python_ones_for_random_timelines).
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order; this part
 * uses the names the contract's table sets (simulator/hotpath.py NAMES).
 */

static PyObject *str_series_node = NULL, *str_series_name = NULL, *str_series_instance = NULL,
                *str_series_points = NULL, *str_figures_node = NULL, *str_figures_name = NULL,
                *str_idle_w = NULL, *str_active_w = NULL, *str_usage_instance = NULL,
                *str_usage_capacity = NULL;

/* `entry[key]` as a borrowed reference; NULL with KeyError (as the subscript's) on a miss. */
static PyObject *
entry_item(PyObject *entry, PyObject *key)
{
    PyObject *value = PyDict_GetItemWithError(entry, key);
    if (value == NULL && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, key);
    return value;
}

/* The (start, +1) and (end, -1) steps of each wanted instance's computations and transfers:
 * power_series_of's first pass. 1 with `changes` filled, 0 when a value is not a plain one
 * (Python decides), -1 on error. */
static int
power_changes(PyObject *entries, PyObject *where, PyObject *wanted, PyObject *drawing_nodes,
              PyObject *changes, PyObject *plus, PyObject *minus)
{
    Py_ssize_t count = PyList_GET_SIZE(entries);
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *entry = PyList_GET_ITEM(entries, index);
        if (!PyDict_CheckExact(entry))
            return 0;
        PyObject *kind = entry_item(entry, str_kind), *key;
        if (kind == NULL)
            return -1;
        if (kind == str_receive) /* the run's own kinds are these interned names: at once */
            continue;
        int is_compute = PyObject_RichCompareBool(kind, str_compute, Py_EQ);
        int is_transfer = is_compute != 0 ? 0 : PyObject_RichCompareBool(kind, str_transfer, Py_EQ);
        if (is_compute < 0 || is_transfer < 0)
            return -1;
        if (is_compute) {
            PyObject *process = entry_item(entry, str_process);
            if (process == NULL)
                return -1;
            key = Py_XNewRef(PyDict_GetItemWithError(where, process)); /* where.get(process) */
            if (key == NULL) {
                if (PyErr_Occurred())
                    return -1;
                continue; /* None: not in wanted */
            }
        } else if (is_transfer) {
            PyObject *node = PyDict_GetItemWithError(entry, str_entry_node); /* entry.get */
            int drawn = node == NULL ? 0 : PySet_Contains(drawing_nodes, node);
            if (drawn <= 0) {
                if (PyErr_Occurred())
                    return -1;
                continue;
            }
            PyObject *instance = PyDict_GetItemWithError(entry, str_entry_instance);
            if (instance == NULL && PyErr_Occurred())
                return -1;
            if (instance != NULL && !PyLong_CheckExact(instance))
                return 0; /* int() of another class: Python's */
            PyObject *number = instance != NULL ? Py_NewRef(instance) : PyLong_FromLong(0);
            key = number == NULL ? NULL : PyTuple_Pack(2, node, number);
            Py_XDECREF(number);
            if (key == NULL)
                return -1;
        } else
            continue;
        int kept = PySet_Contains(wanted, key);
        PyObject *start = kept <= 0 ? NULL : entry_item(entry, str_start_s);
        PyObject *end = start == NULL ? NULL : entry_item(entry, str_end_s);
        if (end == NULL) {
            Py_DECREF(key);
            if (PyErr_Occurred())
                return -1;
            continue; /* not a wanted instance */
        }
        if (!PyFloat_CheckExact(start) || !PyFloat_CheckExact(end)) {
            Py_DECREF(key);
            return 0;
        }
        if (PyFloat_AS_DOUBLE(end) <= PyFloat_AS_DOUBLE(start)) {
            Py_DECREF(key);
            continue;
        }
        PyObject *up = PyTuple_Pack(2, start, plus), *down = PyTuple_Pack(2, end, minus);
        PyObject *steps = up == NULL || down == NULL ? NULL : PyDict_GetItemWithError(changes, key);
        int status = up == NULL || down == NULL || (steps == NULL && PyErr_Occurred()) ? -1 : 0;
        if (status == 0 && steps == NULL) {
            steps = PyList_New(0);
            status = steps == NULL ? -1 : PyDict_SetItem(changes, key, steps);
            Py_XDECREF(steps); /* the dict holds it */
        }
        if (status == 0 && (PyList_Append(steps, up) < 0 || PyList_Append(steps, down) < 0))
            status = -1;
        Py_XDECREF(up);
        Py_XDECREF(down);
        Py_DECREF(key);
        if (status < 0)
            return -1;
    }
    return 1;
}

/* `[time, watts]`, a point of a series; NULL on error. */
static PyObject *
power_point(PyObject *time, PyObject *watts)
{
    PyObject *point = PyList_New(2);
    if (point != NULL) {
        PyList_SET_ITEM(point, 0, Py_NewRef(time));
        PyList_SET_ITEM(point, 1, Py_NewRef(watts));
    }
    return point;
}

/* One instance's series points from its sorted `steps` (NULL: none), as power_series_of makes
 * them; NULL on error. */
static PyObject *
power_points(PyObject *steps, PyObject *idle, double span, long capacity, PyObject *overall)
{
    PyObject *zero = PyFloat_FromDouble(0.0);
    PyObject *last = zero == NULL ? NULL : power_point(zero, idle);
    Py_XDECREF(zero);
    PyObject *points = last == NULL ? NULL : PyList_New(0);
    if (points == NULL || PyList_Append(points, last) < 0)
        goto error;
    double idle_w = PyFloat_AS_DOUBLE(idle);
    long active = 0;
    Py_ssize_t count = steps == NULL ? 0 : PyList_GET_SIZE(steps);
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *step = PyList_GET_ITEM(steps, index);
        PyObject *time = PyTuple_GET_ITEM(step, 0);
        active += PyLong_AsLong(PyTuple_GET_ITEM(step, 1)); /* +1 or -1, made by power_changes */
        long loaded = active < capacity ? active : capacity;
        double watts = idle_w + span * ((double)loaded / (double)capacity);
        double last_time = PyFloat_AS_DOUBLE(PyList_GET_ITEM(last, 0));
        if (last_time == PyFloat_AS_DOUBLE(time)) {
            PyObject *value = PyFloat_FromDouble(watts);
            if (value == NULL || PyList_SetItem(last, 1, value) < 0) /* steals value */
                goto error;
        } else if (PyFloat_AS_DOUBLE(PyList_GET_ITEM(last, 1)) != watts) {
            PyObject *value = PyFloat_FromDouble(watts);
            PyObject *point = value == NULL ? NULL : power_point(time, value);
            Py_XDECREF(value);
            if (point == NULL)
                goto error;
            Py_SETREF(last, point);
            if (PyList_Append(points, last) < 0)
                goto error;
        }
    }
    if (PyFloat_AS_DOUBLE(PyList_GET_ITEM(last, 0)) < PyFloat_AS_DOUBLE(overall)) {
        PyObject *point = power_point(overall, PyList_GET_ITEM(last, 1));
        if (point == NULL || PyList_Append(points, point) < 0) {
            Py_XDECREF(point);
            goto error;
        }
        Py_DECREF(point);
    }
    Py_DECREF(last);
    return points;
error:
    Py_XDECREF(last);
    Py_XDECREF(points);
    return NULL;
}

/* `figures.<name>` as a new reference when it is an exact float, else NULL (no error: Python's
 * to compute) or NULL with an error. */
static PyObject *
float_attribute(PyObject *owner, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(owner, name);
    if (value != NULL && !PyFloat_CheckExact(value))
        Py_CLEAR(value);
    return value;
}

/* power_series_of(entries, where, drawing, wanted, overall_time_s) in C: the series, or
 * NotImplemented where a value is not a plain one (power_series_of computes them then). */
static PyObject *
power_series_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "power_series_of(entries, where, drawing, wanted, overall_time_s)");
        return NULL;
    }
    PyObject *drawing = args[2], *overall = args[4];
    if (!PyList_CheckExact(args[0]) || !PyDict_CheckExact(args[1]) || !PyList_CheckExact(drawing) ||
        !PyAnySet_CheckExact(args[3]) || !PyFloat_CheckExact(overall))
        Py_RETURN_NOTIMPLEMENTED; /* another kind of sequence or number: Python's */
    Py_ssize_t nodes = PyList_GET_SIZE(drawing);
    /* the nodes that draw power, and each one's figures: node, name, idle_w, active_w */
    PyObject *drawing_nodes = PySet_New(NULL), *figures = PyList_New(0);
    PyObject *changes = PyDict_New(), *plus = PyLong_FromLong(1), *minus = PyLong_FromLong(-1);
    PyObject *series = PyList_New(0);
    int status = drawing_nodes == NULL || figures == NULL || changes == NULL || plus == NULL ||
                         minus == NULL || series == NULL
                     ? -1
                     : 1;
    for (Py_ssize_t index = 0; index < nodes && status == 1; index++) {
        PyObject *pair = PyList_GET_ITEM(drawing, index);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
            status = 0;
            break;
        }
        PyObject *owner = PyTuple_GET_ITEM(pair, 0);
        PyObject *node = PyObject_GetAttr(owner, str_figures_node);
        PyObject *name = node == NULL ? NULL : PyObject_GetAttr(owner, str_figures_name);
        PyObject *idle = name == NULL ? NULL : float_attribute(owner, str_idle_w);
        PyObject *active = idle == NULL ? NULL : float_attribute(owner, str_active_w);
        PyObject *row = active == NULL ? NULL : PyTuple_Pack(4, node, name, idle, active);
        if (row == NULL)
            status = PyErr_Occurred() ? -1 : 0;
        else if (PySet_Add(drawing_nodes, node) < 0 || PyList_Append(figures, row) < 0)
            status = -1;
        Py_XDECREF(row);
        Py_XDECREF(active);
        Py_XDECREF(idle);
        Py_XDECREF(name);
        Py_XDECREF(node);
    }
    if (status == 1)
        status = power_changes(args[0], args[1], args[3], drawing_nodes, changes, plus, minus);
    for (Py_ssize_t index = 0; index < nodes && status == 1; index++) {
        PyObject *row = PyList_GET_ITEM(figures, index);
        PyObject *node = PyTuple_GET_ITEM(row, 0), *name = PyTuple_GET_ITEM(row, 1);
        PyObject *idle = PyTuple_GET_ITEM(row, 2);
        double span = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(row, 3)) - PyFloat_AS_DOUBLE(idle);
        PyObject *usages = PySequence_Fast(PyTuple_GET_ITEM(PyList_GET_ITEM(drawing, index), 1),
                                           "a node's usages");
        if (usages == NULL) {
            status = -1;
            break;
        }
        for (Py_ssize_t at = 0; at < PySequence_Fast_GET_SIZE(usages) && status == 1; at++) {
            PyObject *usage = PySequence_Fast_GET_ITEM(usages, at);
            PyObject *instance = PyObject_GetAttr(usage, str_usage_instance);
            PyObject *capacity = instance == NULL ? NULL
                                                  : PyObject_GetAttr(usage, str_usage_capacity);
            long slots = 0; /* a plain int of at least one, exact as a double (else Python's) */
            if (capacity != NULL && PyLong_CheckExact(capacity)) {
                slots = PyLong_AsLong(capacity);
                if (slots == -1 && PyErr_Occurred())
                    PyErr_Clear();
                if (slots > (1L << 52))
                    slots = 0;
            }
            PyObject *key = slots < 1 ? NULL : PyTuple_Pack(2, node, instance);
            PyObject *steps = key == NULL ? NULL : PyDict_GetItemWithError(changes, key);
            if (PyErr_Occurred())
                status = -1;
            else if (key == NULL)
                status = 0;
            else if (steps != NULL && PyList_Sort(steps) < 0) /* sorted(steps): the same order */
                status = -1;
            PyObject *points = status != 1 ? NULL
                                           : power_points(steps, idle, span, slots, overall);
            PyObject *one = points == NULL ? NULL : PyDict_New();
            if (status == 1 &&
                (one == NULL || PyDict_SetItem(one, str_series_node, node) < 0 ||
                 PyDict_SetItem(one, str_series_name, name) < 0 ||
                 PyDict_SetItem(one, str_series_instance, instance) < 0 ||
                 PyDict_SetItem(one, str_series_points, points) < 0 ||
                 PyList_Append(series, one) < 0))
                status = -1;
            Py_XDECREF(one);
            Py_XDECREF(points);
            Py_XDECREF(key);
            Py_XDECREF(capacity);
            Py_XDECREF(instance);
        }
        Py_DECREF(usages);
    }
    Py_XDECREF(drawing_nodes);
    Py_XDECREF(figures);
    Py_XDECREF(changes);
    Py_XDECREF(plus);
    Py_XDECREF(minus);
    if (status == 1)
        return series;
    Py_XDECREF(series);
    if (status < 0)
        return NULL;
    Py_RETURN_NOTIMPLEMENTED;
}
