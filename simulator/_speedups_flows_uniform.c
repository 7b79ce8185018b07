/* simulator._speedups: a uniform component's re-solve (flow_solve_uniform) and a flow's start
 * and end events (flow_join, flow_finish), beside the general re-solve of _speedups_flows.c.
 *
 * Python reference: simulator/flows.py `solve_uniform` (with `_uniform_component`), `join`
 * and `finish`. Differential test: tests/simulator/test_flow_solver.py.
 *
 * The same float operations in the same order, the same writes to the flows and links and the
 * same `schedule` calls as the reference, so the results are its bits (the rules of
 * _speedups_flows.c's header hold here too: slots through its slot caches, its readers and
 * writers, its link accounting).
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

/* -- a uniform component (flows.solve_uniform) ------------------------------------------------ */

/* The flows and links of a uniform component (`_uniform_component`): `*links` the links of
 * `hops` from the last to the first, `*flows` the last link's flows in its order; both NULL
 * (no error) when the component is not uniform. -1 on error. */
static int
uniform_component(PyObject *hops, PyObject **flows, PyObject **links, PyObject **weight_value,
                  PyObject **bound_value)
{
    *flows = *links = *weight_value = *bound_value = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(hops);
    PyObject *walk = PyList_New(n), *on = NULL, *found = NULL;
    if (walk == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *hop = PyTuple_GET_ITEM(hops, n - 1 - i);
        if (!PyTuple_CheckExact(hop) || PyTuple_GET_SIZE(hop) != 2) {
            PyErr_SetString(PyExc_TypeError, "a flow's links are (link, a) pairs");
            goto fail;
        }
        PyObject *link = PyTuple_GET_ITEM(hop, 0);
        for (Py_ssize_t j = 0; j < i; j++)
            if (PyList_GET_ITEM(walk, j) == link) /* a link crossed twice: not the walk's order */
                goto not_uniform;
        PyList_SET_ITEM(walk, i, Py_NewRef(link));
    }
    if (n == 0)
        goto not_uniform;
    on = slot_get(PyList_GET_ITEM(walk, 0), &link_flows_slot);
    if (on == NULL)
        goto fail;
    if (!PyDict_CheckExact(on)) {
        PyErr_SetString(PyExc_TypeError, "a flow link's flows are a dict");
        goto fail;
    }
    Py_ssize_t count = PyDict_GET_SIZE(on);
    for (Py_ssize_t i = 1; i < n; i++) {
        PyObject *held = slot_get(PyList_GET_ITEM(walk, i), &link_flows_slot);
        if (held == NULL)
            goto fail;
        Py_ssize_t size = PyDict_Size(held);
        Py_DECREF(held);
        if (size < 0)
            goto fail;
        if (size != count)
            goto not_uniform;
    }
    found = PyList_New(count);
    if (found == NULL)
        goto fail;
    Py_ssize_t position = 0, index = 0;
    PyObject *flow, *cost;
    double weight = 0.0, bound = 0.0;
    while (PyDict_Next(on, &position, &flow, &cost)) {
        if (index >= count) {
            PyErr_SetString(PyExc_RuntimeError, "a flow link's flows changed during a solve");
            goto fail;
        }
        Py_INCREF(flow);
        PyList_SET_ITEM(found, index, flow);
        index++;
        PyObject *crossed = slot_get(flow, &flow_links_slot);
        if (crossed == NULL)
            goto fail;
        int same = crossed == hops ? 1 : PyObject_RichCompareBool(crossed, hops, Py_EQ);
        Py_DECREF(crossed);
        if (same < 0)
            goto fail;
        if (!same)
            goto not_uniform;
        double flow_weight, flow_bound;
        if (flow_read(flow, &flow_weight_slot, &flow_weight) < 0 ||
            flow_read(flow, &flow_bound_slot, &flow_bound) < 0)
            goto fail;
        if (index == 1) {
            weight = flow_weight;
            bound = flow_bound;
        }
        else if (flow_weight != weight || flow_bound != bound)
            goto not_uniform;
    }
    if (count > 0) {
        PyObject *first = PyList_GET_ITEM(found, 0);
        *weight_value = slot_get(first, &flow_weight_slot);
        *bound_value = *weight_value == NULL ? NULL : slot_get(first, &flow_bound_slot);
        if (*bound_value == NULL) {
            Py_CLEAR(*weight_value);
            goto fail;
        }
    }
    Py_DECREF(on);
    *flows = found;
    *links = walk;
    return 0;
not_uniform:
    Py_XDECREF(on);
    Py_XDECREF(found);
    Py_DECREF(walk);
    return 0;
fail:
    Py_XDECREF(on);
    Py_XDECREF(found);
    Py_DECREF(walk);
    return -1;
}

/* One link's new figures in a uniform solve: `advance(now)`, its use and byte rate, its peak
 * and its change point (solve_uniform's loop over the links). */
static int
uniform_link(PyObject *link, PyObject *used_value, PyObject *byte_rate_value,
             PyObject *now_value, double now)
{
    double used = PyFloat_AsDouble(used_value), peak;
    if (used == -1.0 && PyErr_Occurred())
        return -1;
    if (link_advance(link, now_value, now) < 0 || slot_set(link, &link_used_slot, used_value) < 0 ||
        slot_set(link, &link_byte_rate_slot, byte_rate_value) < 0 ||
        flow_read(link, &link_peak_slot, &peak) < 0)
        return -1;
    if (used > peak && slot_set(link, &link_peak_slot, used_value) < 0)
        return -1;
    return link_mark(link, used_value, used, now_value, now);
}

/* One flow's new rate in a uniform solve: charged the bytes it moved at its old rate, then a
 * new version and end event unless its rate is unchanged and its end event stands. */
static int
uniform_flow(PyObject *flow, PyObject *x_value, PyObject *rate_value, double rate,
             PyObject *now_value, double now, PyObject *schedule, PyObject *finish)
{
    double old, remaining, updated;
    if (slot_set(flow, &flow_x_slot, x_value) < 0 ||
        flow_read(flow, &flow_rate_slot, &old) < 0 ||
        flow_read(flow, &flow_remaining_slot, &remaining) < 0 ||
        flow_read(flow, &flow_updated_slot, &updated) < 0)
        return -1;
    remaining -= old * (now - updated); /* the bytes moved at the old rate */
    if (flow_write(flow, &flow_remaining_slot, remaining) < 0 ||
        slot_set(flow, &flow_updated_slot, now_value) < 0)
        return -1;
    if (rate == old) {
        PyObject *pending = slot_get(flow, &flow_pending_slot);
        int has_end = pending == NULL ? -1 : PyObject_IsTrue(pending);
        Py_XDECREF(pending);
        if (has_end < 0)
            return -1;
        if (has_end) /* its end event stands */
            return 0;
    }
    PyObject *version = slot_get(flow, &flow_version_slot);
    PyObject *next = version == NULL ? NULL : PyNumber_Add(version, one_int);
    Py_XDECREF(version);
    if (next == NULL)
        return -1;
    int status = slot_set(flow, &flow_version_slot, next);
    Py_DECREF(next);
    if (status < 0 || slot_set(flow, &flow_rate_slot, rate_value) < 0 ||
        slot_set(flow, &flow_pending_slot, Py_False) < 0)
        return -1;
    if (rate > 0.0)
        return schedule_end(schedule, finish, flow, (remaining > 0.0 ? remaining : 0.0) / rate);
    return 0;
}

/* flow_solve_uniform(changed, now, states, state_of, schedule, finish): flows.solve_uniform
 * in C; None when the component is not uniform or its state says the general course. */
static PyObject *
flow_solve_uniform(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "flow_solve_uniform(changed, now, states, state_of, "
                                         "schedule, finish) takes 6 arguments");
        return NULL;
    }
    if (!flow_constants_set) {
        PyErr_SetString(PyExc_RuntimeError, "flow_solve_uniform needs set_flow_constants first");
        return NULL;
    }
    PyObject *now_value = args[1], *states = args[2];
    double now = PyFloat_AsDouble(now_value);
    if (now == -1.0 && PyErr_Occurred())
        return NULL;
    if (!PyDict_Check(states)) {
        PyErr_SetString(PyExc_TypeError, "flow_solve_uniform's states are a dict");
        return NULL;
    }
    PyObject *hops = slot_get(args[0], &flow_links_slot);
    if (hops == NULL)
        return NULL;
    PyObject *flows = NULL, *links = NULL, *weight = NULL, *bound = NULL, *state = NULL;
    PyObject *zero = NULL, *result = NULL;
    if (!PyTuple_CheckExact(hops)) {
        PyErr_SetString(PyExc_TypeError, "a flow's links are a tuple");
        goto done;
    }
    if (uniform_component(hops, &flows, &links, &weight, &bound) < 0)
        goto done;
    if (flows == NULL) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t count = PyList_GET_SIZE(flows);
    if (count == 0) { /* the last flow left: the links fall idle */
        zero = PyFloat_FromDouble(0.0);
        if (zero == NULL)
            goto done;
        for (Py_ssize_t l = 0; l < PyList_GET_SIZE(links); l++)
            if (uniform_link(PyList_GET_ITEM(links, l), zero, zero, now_value, now) < 0)
                goto done;
        result = Py_NewRef(links);
        goto done;
    }
    PyObject *identity = PyLong_FromVoidPtr(hops), *count_value = PyLong_FromSsize_t(count);
    PyObject *key = identity == NULL || count_value == NULL
                        ? NULL
                        : PyTuple_Pack(4, identity, weight, bound, count_value);
    Py_XDECREF(identity);
    if (key == NULL) {
        Py_XDECREF(count_value);
        goto done;
    }
    state = PyDict_GetItemWithError(states, key); /* borrowed */
    Py_DECREF(key);
    if (state == NULL && PyErr_Occurred()) {
        Py_DECREF(count_value);
        goto done;
    }
    if (state != NULL && PyTuple_CheckExact(state) && PyTuple_GET_SIZE(state) == 4 &&
        PyTuple_GET_ITEM(state, 0) == hops)
        Py_INCREF(state);
    else {
        PyObject *argv[4] = {hops, weight, bound, count_value};
        state = PyObject_Vectorcall(args[3], argv, 4, NULL);
    }
    Py_DECREF(count_value);
    if (state == NULL)
        goto done;
    if (!PyTuple_CheckExact(state) || PyTuple_GET_SIZE(state) != 4 ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(state, 3))) {
        PyErr_SetString(PyExc_TypeError, "a uniform state is (hops, x, rate, figures)");
        goto done;
    }
    PyObject *x_value = PyTuple_GET_ITEM(state, 1), *rate_value = PyTuple_GET_ITEM(state, 2);
    PyObject *figures = PyTuple_GET_ITEM(state, 3);
    if (x_value == Py_None) { /* a link without cost, a NaN or no limit: the general course */
        result = Py_NewRef(Py_None);
        goto done;
    }
    double rate = PyFloat_AsDouble(rate_value);
    if (rate == -1.0 && PyErr_Occurred())
        goto done;
    for (Py_ssize_t l = 0; l < PyTuple_GET_SIZE(figures); l++) {
        PyObject *figure = PyTuple_GET_ITEM(figures, l);
        if (!PyTuple_CheckExact(figure) || PyTuple_GET_SIZE(figure) != 3) {
            PyErr_SetString(PyExc_TypeError, "a uniform state's figures are (link, use, rate)");
            goto done;
        }
        if (uniform_link(PyTuple_GET_ITEM(figure, 0), PyTuple_GET_ITEM(figure, 1),
                         PyTuple_GET_ITEM(figure, 2), now_value, now) < 0)
            goto done;
    }
    for (Py_ssize_t f = 0; f < count; f++)
        if (uniform_flow(PyList_GET_ITEM(flows, f), x_value, rate_value, rate, now_value, now,
                         args[4], args[5]) < 0)
            goto done;
    result = Py_NewRef(links);
done:
    Py_DECREF(hops);
    Py_XDECREF(flows);
    Py_XDECREF(links);
    Py_XDECREF(weight);
    Py_XDECREF(bound);
    Py_XDECREF(state);
    Py_XDECREF(zero);
    return result;
}

/* -- a flow's start and end events (flows.join and finish) ---------------------------------- */

/* `link.multi += step` (an int). */
static int
link_count_flows(PyObject *link, long step)
{
    PyObject *multi = slot_get(link, &link_multi_slot);
    if (multi == NULL)
        return -1;
    PyObject *delta = PyLong_FromLong(step);
    PyObject *next = delta == NULL ? NULL : PyNumber_Add(multi, delta);
    Py_DECREF(multi);
    Py_XDECREF(delta);
    if (next == NULL)
        return -1;
    int status = slot_set(link, &link_multi_slot, next);
    Py_DECREF(next);
    return status;
}

/* The flow's component re-solved at the end of the instant: the first flow of an instant to
 * join or leave schedules `solve_changed` (engine.schedule(0.0, solve_changed, None)); then the
 * flow is added to `changed`. */
static int
flow_changed(Core *core, PyObject *changed, PyObject *solve_changed, PyObject *flow)
{
    if (PyList_GET_SIZE(changed) == 0 && core_push(core, core->now + 0.0, solve_changed, Py_None) < 0)
        return -1;
    return PyList_Append(changed, flow);
}

/* `flow.done(now)`. */
static int
flow_call_done(PyObject *flow, PyObject *now_value)
{
    PyObject *done = slot_get(flow, &flow_done_slot);
    PyObject *answer = done == NULL ? NULL : PyObject_CallOneArg(done, now_value);
    Py_XDECREF(done);
    Py_XDECREF(answer);
    return answer == NULL ? -1 : 0;
}

/* The arguments of flow_join and flow_finish: (engine, changed, solve_changed, ...). */
static int
flow_event_arguments(const char *name, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "%s(engine, changed, solve_changed, arg) takes 4 arguments",
                     name);
        return -1;
    }
    if (!PyObject_TypeCheck(args[0], core_type) || !PyList_CheckExact(args[1])) {
        PyErr_Format(PyExc_TypeError, "%s needs an engine on the C core and a list", name);
        return -1;
    }
    return 0;
}

/* flow_join(engine, changed, solve_changed, flow): flows.join in C. */
static PyObject *
flow_join(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (flow_event_arguments("flow_join", args, nargs) < 0)
        return NULL;
    Core *core = (Core *)args[0];
    PyObject *changed = args[1], *flow = args[3], *result = NULL;
    double remaining;
    PyObject *now_value = PyFloat_FromDouble(core->now);
    PyObject *links = now_value == NULL ? NULL : slot_get(flow, &flow_links_slot);
    if (links == NULL || flow_read(flow, &flow_remaining_slot, &remaining) < 0)
        goto done;
    if (!PyTuple_CheckExact(links)) {
        PyErr_SetString(PyExc_TypeError, "a flow's links are a tuple");
        goto done;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(links);
    if (remaining <= 0.0 || count == 0) {
        if (flow_call_done(flow, now_value) == 0)
            result = Py_NewRef(Py_None);
        goto done;
    }
    if (slot_set(flow, &flow_updated_slot, now_value) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *hop = PyTuple_GET_ITEM(links, i);
        if (!PyTuple_CheckExact(hop) || PyTuple_GET_SIZE(hop) != 2) {
            PyErr_SetString(PyExc_TypeError, "a flow's links are (link, a) pairs");
            goto done;
        }
        PyObject *link = PyTuple_GET_ITEM(hop, 0);
        PyObject *held = slot_get(link, &link_flows_slot);
        int status = held == NULL ? -1 : PyObject_SetItem(held, flow, PyTuple_GET_ITEM(hop, 1));
        Py_XDECREF(held);
        if (status < 0 || (count > 1 && link_count_flows(link, 1) < 0))
            goto done;
    }
    if (flow_changed(core, changed, args[2], flow) == 0)
        result = Py_NewRef(Py_None);
done:
    Py_XDECREF(now_value);
    Py_XDECREF(links);
    return result;
}

/* flow_finish(engine, changed, solve_changed, (flow, version)): flows.finish in C. */
static PyObject *
flow_finish(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (flow_event_arguments("flow_finish", args, nargs) < 0)
        return NULL;
    PyObject *arg = args[3];
    if (!PyTuple_CheckExact(arg) || PyTuple_GET_SIZE(arg) != 2) {
        PyErr_SetString(PyExc_TypeError, "a flow's end event is (flow, version)");
        return NULL;
    }
    PyObject *flow = PyTuple_GET_ITEM(arg, 0);
    PyObject *version = slot_get(flow, &flow_version_slot);
    if (version == NULL)
        return NULL;
    int stale = PyObject_RichCompareBool(PyTuple_GET_ITEM(arg, 1), version, Py_NE);
    Py_DECREF(version);
    if (stale != 0) /* re-solved since: a later event stands for it (or an error) */
        return stale < 0 ? NULL : Py_NewRef(Py_None);
    Core *core = (Core *)args[0];
    PyObject *result = NULL;
    PyObject *now_value = PyFloat_FromDouble(core->now);
    PyObject *links = now_value == NULL ? NULL : slot_get(flow, &flow_links_slot);
    if (links == NULL || flow_write(flow, &flow_remaining_slot, 0.0) < 0)
        goto done;
    if (!PyTuple_CheckExact(links)) {
        PyErr_SetString(PyExc_TypeError, "a flow's links are a tuple");
        goto done;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(links);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *hop = PyTuple_GET_ITEM(links, i);
        if (!PyTuple_CheckExact(hop) || PyTuple_GET_SIZE(hop) != 2) {
            PyErr_SetString(PyExc_TypeError, "a flow's links are (link, a) pairs");
            goto done;
        }
        PyObject *link = PyTuple_GET_ITEM(hop, 0);
        PyObject *held = slot_get(link, &link_flows_slot);
        int status = held == NULL ? -1 : PyObject_DelItem(held, flow);
        Py_XDECREF(held);
        if (status < 0 || (count > 1 && link_count_flows(link, -1) < 0))
            goto done;
    }
    if (flow_changed(core, args[1], args[2], flow) == 0 &&
        flow_call_done(flow, now_value) == 0)
        result = Py_NewRef(Py_None);
done:
    Py_XDECREF(now_value);
    Py_XDECREF(links);
    return result;
}
