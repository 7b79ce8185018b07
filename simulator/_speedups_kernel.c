/* simulator._speedups: a GPU kernel's computation kept on the timeline with its roofline inputs.
 *
 * Python reference: simulator/api.py _PythonSimCore._record_computation (Timeline.kernel_inputs,
 * simulator/models/roofline.py kernel_inputs, Timeline.add_computation).
 * Differential test: tests/simulator/test_hot_path.py
 *   (test_a_kernel_s_inputs_on_the_timeline_are_the_pure_python_ones,
 *    test_a_kept_timeline_with_details_and_kernels_is_the_pure_python_one).
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order; this part
 * follows the sim part, whose timeline helpers it uses.
 */

/* kernel_inputs' names after CUDACoreInstructions (str_cuda_core_instructions), in the order of
 * simulator.models.roofline.KERNEL_INPUTS, which orders the inputs' dict; the timeline entry's
 * key, the Timeline slots read and written, and the entry's further keys ("kernel",) */
static PyObject *str_kernel_gmem = NULL, *str_kernel_grid = NULL, *str_kernel_n = NULL,
                *str_kernel_block = NULL, *str_kernel_occupancy = NULL, *str_kernels = NULL,
                *str_annotated = NULL, *str_kernel_key = NULL, *kernel_keys = NULL;
static SlotCache kernels_slot = {&str_kernels}, annotated_slot = {&str_annotated};

#define KERNEL_NAMES 6

/* Keep a computation whose params name CUDACoreInstructions on the timeline (not full), as
 * _record_computation does without a detail: its entry carries `kernel_inputs(params)`, the
 * timeline's one dict of those inputs (Timeline.kernel_inputs), and marks the timeline
 * annotated; params that are not a kernel's get a plain entry. Done here when every value
 * kernel_inputs reads is missing, None, a bool or an exact float or int; else 0 (nothing done:
 * Python's `_number` decides, and its errors are Python's). 1 when kept, -1 on error. */
static int
keep_kernel(SimCore *self, PyObject *timeline, PyObject *params, double start, double end)
{
    if (kernel_keys == NULL || self->process == NULL || !PyUnicode_CheckExact(self->process) ||
        !(PyDict_CheckExact(params) || Py_TYPE(params) == plain_params_type))
        return 0;
    PyObject *const names[KERNEL_NAMES] = {str_cuda_core_instructions, str_kernel_gmem,
                                           str_kernel_grid, str_kernel_n, str_kernel_block,
                                           str_kernel_occupancy};
    PyObject *kept_names[KERNEL_NAMES], *kept_values[KERNEL_NAMES];
    int have[KERNEL_NAMES] = {0};
    Py_ssize_t count = 0;
    int status = 1;
    for (int index = 0; index < KERNEL_NAMES && status == 1; index++) {
        PyObject *value = PyDict_GetItemWithError(params, names[index]); /* borrowed */
        double number;
        if (value == NULL) {
            if (PyErr_Occurred())
                status = -1;
            continue;
        }
        if (PyFloat_CheckExact(value))
            number = PyFloat_AS_DOUBLE(value);
        else if (PyLong_CheckExact(value)) {
            number = PyLong_AsDouble(value);
            if (number == -1.0 && PyErr_Occurred()) { /* too large: float() raises in Python */
                PyErr_Clear();
                status = 0;
                continue;
            }
        } else {
            if (value != Py_None && !PyBool_Check(value)) /* `_number`'s to judge */
                status = 0;
            continue; /* None or a bool: not a number, left out */
        }
        if (!(number > 0.0 && number < Py_HUGE_VAL)) /* `0 < value < math.inf` */
            continue;
        PyObject *as_float = PyFloat_CheckExact(value) ? Py_NewRef(value)
                                                        : PyFloat_FromDouble(number);
        if (as_float == NULL) {
            status = -1;
            continue;
        }
        kept_names[count] = names[index];
        kept_values[count++] = as_float;
        have[index] = 1;
    }
    PyObject *key = NULL, *kernels = NULL, *inputs = NULL;
    if (status == 1 && have[0] && have[1] && have[4] && (have[2] || have[3])) {
        PyObject *names_tuple = PyTuple_New(count), *values_tuple = PyTuple_New(count);
        if (names_tuple != NULL && values_tuple != NULL) {
            for (Py_ssize_t index = 0; index < count; index++) {
                PyTuple_SET_ITEM(names_tuple, index, Py_NewRef(kept_names[index]));
                PyTuple_SET_ITEM(values_tuple, index, Py_NewRef(kept_values[index]));
            }
            /* Timeline.kernel_inputs' key: the inputs' names and their values */
            key = PyTuple_Pack(2, names_tuple, values_tuple);
        }
        Py_XDECREF(names_tuple);
        Py_XDECREF(values_tuple);
        kernels = key == NULL ? NULL : slot_get(timeline, &kernels_slot);
        if (kernels != NULL && !PyDict_CheckExact(kernels)) {
            PyErr_SetString(PyExc_TypeError, "the timeline's kernels are not a dict");
            Py_CLEAR(kernels);
        }
        inputs = kernels == NULL ? NULL : PyDict_GetItemWithError(kernels, key);
        if (inputs != NULL)
            Py_INCREF(inputs);
        else if (kernels != NULL && !PyErr_Occurred()) { /* the first kernel of these inputs */
            inputs = PyDict_New();
            for (Py_ssize_t index = 0; inputs != NULL && index < count; index++)
                if (PyDict_SetItem(inputs, kept_names[index], kept_values[index]) < 0)
                    Py_CLEAR(inputs);
            if (inputs != NULL && PyDict_SetItem(kernels, key, inputs) < 0)
                Py_CLEAR(inputs);
        }
        status = inputs == NULL ? -1 : 1;
    } else if (status == 1) /* not a kernel's inputs: kernel_inputs gives None */
        status = keep_entry(timeline, self->process, str_compute, start, end) < 0 ? -1 : 1;
    for (Py_ssize_t index = 0; index < count; index++)
        Py_DECREF(kept_values[index]);
    Py_XDECREF(key);
    Py_XDECREF(kernels);
    if (inputs != NULL) {
        PyObject *values[] = {inputs};
        if (keep_entry_with(timeline, self->process, str_compute, start, end, kernel_keys,
                            values) < 0 ||
            slot_set(timeline, &annotated_slot, Py_True) < 0)
            status = -1;
        Py_DECREF(inputs);
    }
    return status;
}
