/* simulator._speedups: the result's kernel rows (one per GPU kernel of the timeline).
 *
 * Python reference: simulator/results.py kernel_rows (its loop over the entries).
 * Differential test: tests/simulator/test_results.py
 *   (test_the_c_kernel_rows_are_the_python_ones_for_random_timelines).
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order; this part
 * uses the names the contract's table sets (simulator/hotpath.py NAMES).
 */

static PyObject *str_row_node = NULL, *str_row_instance = NULL, *str_row_duration = NULL,
                *str_row_bound = NULL, *str_row_bound_class = NULL, *str_row_occupancy = NULL,
                *str_row_fraction = NULL, *str_row_ops = NULL, *str_row_bytes = NULL,
                *str_row_intensity = NULL, *str_row_ops_per_s = NULL,
                *str_row_bytes_per_s = NULL, *str_row_roof_ops = NULL,
                *str_row_roof_fraction = NULL, *str_detail = NULL, *str_bound = NULL,
                *str_detail_occupancy = NULL;

/* `row[key] = value` for a new float `value` (stolen); -1 on error. */
static int
row_float(PyObject *row, PyObject *key, double value)
{
    PyObject *number = PyFloat_FromDouble(value);
    int status = number == NULL ? -1 : PyDict_SetItem(row, key, number);
    Py_XDECREF(number);
    return status;
}

/* `mapping[key]` as a double when it is an exact float: 1; 0 when it is missing or not one. */
static int
float_item(PyObject *mapping, PyObject *key, double *value)
{
    PyObject *item = PyDict_GetItemWithError(mapping, key);
    if (item == NULL || !PyFloat_CheckExact(item))
        return 0;
    *value = PyFloat_AS_DOUBLE(item);
    return 1;
}

/* A kernel's roofline figures into `row`, as kernel_rows computes them from kernel_point's
 * operations (the products of its ints are the doubles' correctly rounded products, as the
 * ints' conversion to float rounds them); 1 when set, 0 when a value is not a plain float or
 * a division is by zero (Python's to compute, or to raise), -1 on error. */
static int
row_point(PyObject *row, PyObject *inputs, double duration, PyObject *known)
{
    double block, instructions, gmem, grid;
    double warp = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(known, 2));
    double peak_ops = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(known, 3));
    double peak_bytes = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(known, 4));
    if (!float_item(inputs, str_kernel_block, &block) ||
        !float_item(inputs, str_cuda_core_instructions, &instructions) ||
        !float_item(inputs, str_kernel_gmem, &gmem) || block == 0.0 || warp == 0.0)
        return 0;
    PyObject *grid_obj = PyDict_GetItemWithError(inputs, str_kernel_grid);
    if (grid_obj != NULL && !PyFloat_CheckExact(grid_obj))
        return 0;
    grid = grid_obj == NULL ? 0.0 : PyFloat_AS_DOUBLE(grid_obj);
    if (grid == 0.0) { /* `inputs.get("gridSize") or math.ceil(inputs["N"] / block)` */
        double n;
        if (!float_item(inputs, str_kernel_n, &n))
            return 0;
        grid = ceil(n / block);
        if (!isfinite(grid))
            return 0; /* math.ceil raises */
    }
    double per_block = ceil(block / warp);
    if (!isfinite(per_block))
        return 0;
    double warps = grid * per_block; /* W_L (4.2) */
    if (isinf(warps))
        return 0; /* an int product too large for a float: float() raises */
    double ops = warps * warp * instructions, moved = warps * gmem;
    if (moved == 0.0 || duration == 0.0)
        return 0;
    double intensity = ops / moved, ops_per_s = ops / duration;
    double roof_ops = intensity * peak_bytes;
    if (!(roof_ops < peak_ops)) /* min(peak_ops, ...) */
        roof_ops = peak_ops;
    if (roof_ops == 0.0)
        return 0;
    if (row_float(row, str_row_ops, ops) < 0 || row_float(row, str_row_bytes, moved) < 0 ||
        row_float(row, str_row_intensity, intensity) < 0 ||
        row_float(row, str_row_ops_per_s, ops_per_s) < 0 ||
        row_float(row, str_row_bytes_per_s, moved / duration) < 0 ||
        row_float(row, str_row_roof_ops, roof_ops) < 0 ||
        row_float(row, str_row_roof_fraction, ops_per_s / roof_ops) < 0)
        return -1;
    return 1;
}

/* One entry's row appended to `rows` when it is a kernel's: 1 (a row or none), 0 when a value
 * is not a plain one, -1 on error. */
static int
kernel_row(PyObject *rows, PyObject *entry, PyObject *const *args)
{
    PyObject *where = args[1], *on_gpus = args[2], *nodes = args[3], *no_node = args[4];
    PyObject *bound_classes = args[5], *template = args[6];
    if (!PyDict_CheckExact(entry))
        return 0;
    PyObject *kind = entry_item(entry, str_kind);
    if (kind == NULL)
        return -1;
    if (kind == str_receive || kind == str_transfer) /* the run's own interned kinds: at once */
        return 1;
    if (kind != str_compute) {
        int is_compute = PyObject_RichCompareBool(kind, str_compute, Py_EQ);
        if (is_compute <= 0)
            return is_compute < 0 ? -1 : 1;
    }
    PyObject *process = entry_item(entry, str_process);
    if (process == NULL)
        return -1;
    PyObject *detail = PyDict_GetItemWithError(entry, str_detail);
    PyObject *inputs = detail == NULL && PyErr_Occurred()
                           ? NULL
                           : PyDict_GetItemWithError(entry, str_kernel_key);
    if (PyErr_Occurred())
        return -1;
    int on_gpu = PySet_Contains(on_gpus, process);
    if (on_gpu < 0)
        return -1;
    if (!on_gpu && inputs == NULL && detail == NULL)
        return 1; /* not a kernel */
    PyObject *place = PyDict_GetItemWithError(where, process); /* where.get(process, ("", 0)) */
    if (place == NULL && PyErr_Occurred())
        return -1;
    if (place == NULL)
        return 0;
    if (!PyTuple_CheckExact(place) || PyTuple_GET_SIZE(place) != 2)
        return 0;
    PyObject *node = PyTuple_GET_ITEM(place, 0), *instance = PyTuple_GET_ITEM(place, 1);
    PyObject *known = PyDict_GetItemWithError(nodes, node);
    if (known == NULL && PyErr_Occurred())
        return -1;
    known = known == NULL ? no_node : known;
    /* `extra.get("detail") or {}` and the kernel's inputs: dicts, or nothing at all */
    if ((detail != NULL && !PyDict_CheckExact(detail) && detail != Py_None) ||
        (inputs != NULL && !PyDict_CheckExact(inputs) && inputs != Py_None))
        return 0;
    if (detail == Py_None)
        detail = NULL;
    if (inputs == Py_None || (inputs != NULL && PyDict_GET_SIZE(inputs) == 0))
        inputs = NULL;
    int is_gpu = PyTuple_GET_ITEM(known, 0) == Py_True;
    PyObject *bound = detail == NULL ? NULL : PyDict_GetItemWithError(detail, str_bound);
    if (PyErr_Occurred())
        return -1;
    if (!(is_gpu || inputs != NULL || bound != NULL))
        return 1;
    PyObject *start = entry_item(entry, str_start_s);
    PyObject *end = start == NULL ? NULL : entry_item(entry, str_end_s);
    if (end == NULL)
        return -1;
    if (!PyFloat_CheckExact(start) || !PyFloat_CheckExact(end))
        return 0;
    double duration = PyFloat_AS_DOUBLE(end) - PyFloat_AS_DOUBLE(start);
    PyObject *occupancy = detail == NULL ? NULL
                                         : PyDict_GetItemWithError(detail, str_detail_occupancy);
    if (occupancy == NULL && !PyErr_Occurred() && inputs != NULL)
        occupancy = PyDict_GetItemWithError(inputs, str_kernel_occupancy);
    if (PyErr_Occurred())
        return -1;
    double occupied = 0.0;
    int has_occupancy = 0; /* isinstance(occupancy, (int, float)): float(occupancy) */
    if (occupancy != NULL && PyFloat_CheckExact(occupancy)) {
        occupied = PyFloat_AS_DOUBLE(occupancy);
        has_occupancy = 1;
    } else if (occupancy != NULL && (PyLong_CheckExact(occupancy) || PyBool_Check(occupancy))) {
        occupied = PyLong_AsDouble(occupancy);
        if (occupied == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0; /* float() raises */
        }
        has_occupancy = 1;
    } else if (occupancy != NULL && (PyLong_Check(occupancy) || PyFloat_Check(occupancy)))
        return 0; /* a subclass: its float() is Python's */
    PyObject *row = PyDict_Copy(template); /* ROW_COPIES */
    if (row == NULL)
        return -1;
    int status = PyDict_SetItem(row, str_process, process) < 0 ||
                         PyDict_SetItem(row, str_row_node, node) < 0 ||
                         PyDict_SetItem(row, str_row_instance, instance) < 0 ||
                         PyDict_SetItem(row, str_start_s, start) < 0 ||
                         row_float(row, str_row_duration, duration) < 0
                     ? -1
                     : 1;
    if (status == 1 && bound != NULL && PyUnicode_Check(bound)) {
        PyObject *bound_class = PyDict_GetItemWithError(bound_classes, bound);
        if ((bound_class == NULL && PyErr_Occurred()) ||
            PyDict_SetItem(row, str_row_bound, bound) < 0 ||
            PyDict_SetItem(row, str_row_bound_class, bound_class ? bound_class : Py_None) < 0)
            status = -1;
    }
    PyObject *max_warps = PyTuple_GET_ITEM(known, 5);
    if (status == 1 && has_occupancy) {
        if (row_float(row, str_row_occupancy, occupied) < 0)
            status = -1;
        else if (max_warps != Py_None) {
            if (!PyFloat_CheckExact(max_warps))
                status = 0;
            else if (PyFloat_AS_DOUBLE(max_warps) != 0.0 &&
                     row_float(row, str_row_fraction,
                               occupied / PyFloat_AS_DOUBLE(max_warps)) < 0)
                status = -1;
        }
    }
    if (status == 1 && inputs != NULL && PyTuple_GET_ITEM(known, 1) != Py_None &&
        !(duration <= 0.0))
        status = row_point(row, inputs, duration, known);
    if (status == 1 && PyList_Append(rows, row) < 0)
        status = -1;
    Py_DECREF(row);
    return status;
}

/* kernel_rows_of(entries, where, on_gpus, nodes, no_node, bound_classes, template): kernel_rows'
 * loop in C, or NotImplemented where a value is not a plain one (kernel_rows' own loop then). */
static PyObject *
kernel_rows_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "kernel_rows_of(entries, where, on_gpus, nodes, "
                                         "no_node, bound_classes, template)");
        return NULL;
    }
    if (!PyList_CheckExact(args[0]) || !PyDict_CheckExact(args[1]) ||
        !PyAnySet_CheckExact(args[2]) || !PyDict_CheckExact(args[3]) ||
        !PyDict_CheckExact(args[5]) || !PyDict_CheckExact(args[6]))
        Py_RETURN_NOTIMPLEMENTED;
    /* each node's (is GPU, roof, warp size, peak ops, peak bytes, max warps): plain values */
    Py_ssize_t position = 0;
    PyObject *node, *known = args[4];
    int plain = 1;
    do {
        plain = PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == 6 &&
                PyBool_Check(PyTuple_GET_ITEM(known, 0));
        for (int index = 2; plain && index < 5; index++)
            plain = PyFloat_CheckExact(PyTuple_GET_ITEM(known, index));
    } while (plain && PyDict_Next(args[3], &position, &node, &known));
    if (!plain)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *rows = PyList_New(0);
    if (rows == NULL)
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(args[0]);
    int status = 1;
    for (Py_ssize_t index = 0; index < count && status == 1; index++)
        status = kernel_row(rows, PyList_GET_ITEM(args[0], index), args);
    if (status == 1)
        return rows;
    Py_DECREF(rows);
    if (status < 0 || PyErr_Occurred())
        return NULL;
    Py_RETURN_NOTIMPLEMENTED;
}
