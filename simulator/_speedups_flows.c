/* simulator._speedups: the flow network's max-min re-solve of one component (flow_solve_from).
 *
 * Python reference: simulator/flows.py `solve_from` (with `component` and `solve_max_min`).
 * A uniform component's re-solve and a flow's start and end events: _speedups_flows_uniform.c.
 * Differential test: tests/simulator/test_flow_solver.py.
 *
 * The same walk, the same float operations in the same order and the same writes to the flows
 * and links (`x`, `rate`, `remaining`, `updated`, `version`, `pending`, `open`; `used`,
 * `byte_rate`, `peak`, `bytes`, `used_s`, `saturated_s`, `since`, `left`, `usage` and the
 * utilisation series), so the results are the reference's bits; the end events are scheduled
 * through the same `schedule(delay, finish, (flow, version))` calls in the same order. The
 * filling runs on C arrays: each flow's and link's figures are read once, the flows' hops and
 * the links' flows become index lists, and the results are written back once.
 *
 * A flow and a link are found by their slots (simulator.hotpath.NAMES, "flow_*" and "link_*")
 * through the slot caches of _speedups_sim.c. Every flow the walk meets must cross only links
 * of the component, which `component` guarantees; anything else is a ValueError here.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

static PyObject *str_flow_links = NULL, *str_flow_weight = NULL, *str_flow_bound = NULL,
                *str_flow_x = NULL, *str_flow_rate = NULL, *str_flow_remaining = NULL,
                *str_flow_updated = NULL, *str_flow_version = NULL, *str_flow_pending = NULL,
                *str_flow_open = NULL, *str_link_flows = NULL, *str_link_multi = NULL,
                *str_link_used = NULL, *str_link_byte_rate = NULL, *str_link_since = NULL,
                *str_link_bytes = NULL, *str_link_used_s = NULL, *str_link_saturated_s = NULL,
                *str_link_peak = NULL, *str_link_series_t = NULL, *str_link_series_u = NULL,
                *str_link_left = NULL, *str_link_usage = NULL, *str_link_merge = NULL,
                *str_flow_done = NULL;

static SlotCache flow_links_slot = {&str_flow_links}, flow_weight_slot = {&str_flow_weight},
                 flow_bound_slot = {&str_flow_bound}, flow_x_slot = {&str_flow_x},
                 flow_rate_slot = {&str_flow_rate}, flow_remaining_slot = {&str_flow_remaining},
                 flow_updated_slot = {&str_flow_updated}, flow_version_slot = {&str_flow_version},
                 flow_pending_slot = {&str_flow_pending}, flow_open_slot = {&str_flow_open},
                 link_flows_slot = {&str_link_flows}, link_multi_slot = {&str_link_multi},
                 link_used_slot = {&str_link_used}, link_byte_rate_slot = {&str_link_byte_rate},
                 link_since_slot = {&str_link_since}, link_bytes_slot = {&str_link_bytes},
                 link_used_s_slot = {&str_link_used_s},
                 link_saturated_s_slot = {&str_link_saturated_s},
                 link_peak_slot = {&str_link_peak}, link_series_t_slot = {&str_link_series_t},
                 link_series_u_slot = {&str_link_series_u}, link_left_slot = {&str_link_left},
                 link_usage_slot = {&str_link_usage}, flow_done_slot = {&str_flow_done};

/* simulator.flows SATURATED and SERIES_POINTS, handed over once (set_flow_constants). */
static double flow_saturated = 0.0;
static Py_ssize_t flow_series_points = 0;
static int flow_constants_set = 0;

/* -- reading and writing a float slot --------------------------------------------------------- */

/* `*out = float(owner.<slot>)`; -1 on error. */
static int
flow_read(PyObject *owner, SlotCache *cache, double *out)
{
    PyObject **slot = slot_address(owner, cache);
    if (slot != NULL && *slot != NULL && PyFloat_CheckExact(*slot)) {
        *out = PyFloat_AS_DOUBLE(*slot);
        return 0;
    }
    PyObject *value = slot_get(owner, cache);
    if (value == NULL)
        return -1;
    *out = PyFloat_AsDouble(value);
    Py_DECREF(value);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* `owner.<slot> = value` (a new float); -1 on error. */
static int
flow_write(PyObject *owner, SlotCache *cache, double value)
{
    PyObject *number = PyFloat_FromDouble(value);
    if (number == NULL)
        return -1;
    int status = slot_set(owner, cache, number);
    Py_DECREF(number);
    return status;
}

/* -- objects by identity: an open-addressing map from an object to its index ------------------ */

typedef struct {
    PyObject **keys;
    Py_ssize_t *values;
    size_t mask; /* capacity - 1, a power of two less one */
    Py_ssize_t count;
} IndexMap;

static inline size_t
index_map_hash(PyObject *key, size_t mask)
{
    /* the address's high bits folded into the low ones the mask keeps */
    uint64_t bits = (uint64_t)(uintptr_t)key >> 4;
    bits *= 0x9E3779B97F4A7C15ULL;
    return (size_t)(bits ^ (bits >> 32)) & mask;
}

/* The index of `key`, or -1 when absent. */
static Py_ssize_t
index_map_get(const IndexMap *map, PyObject *key)
{
    for (size_t at = index_map_hash(key, map->mask);; at = (at + 1) & map->mask) {
        if (map->keys[at] == key)
            return map->values[at];
        if (map->keys[at] == NULL)
            return -1;
    }
}

static int index_map_put(IndexMap *map, PyObject *key, Py_ssize_t value);

static int
index_map_init(IndexMap *map, size_t capacity)
{
    map->keys = PyMem_Calloc(capacity, sizeof(PyObject *));
    map->values = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    map->mask = capacity - 1;
    map->count = 0;
    if (map->keys == NULL || map->values == NULL) {
        PyMem_Free(map->keys);
        PyMem_Free(map->values);
        map->keys = NULL;
        map->values = NULL;
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
index_map_free(IndexMap *map)
{
    PyMem_Free(map->keys);
    PyMem_Free(map->values);
    map->keys = NULL;
    map->values = NULL;
}

/* Add `key` (absent) with `value`, growing the map past half full; -1 on memory error. */
static int
index_map_put(IndexMap *map, PyObject *key, Py_ssize_t value)
{
    if ((size_t)(map->count + 1) * 2 > map->mask + 1) {
        IndexMap larger;
        if (index_map_init(&larger, (map->mask + 1) * 2) < 0)
            return -1;
        for (size_t at = 0; at <= map->mask; at++)
            if (map->keys[at] != NULL)
                index_map_put(&larger, map->keys[at], map->values[at]);
        index_map_free(map);
        *map = larger;
    }
    size_t at = index_map_hash(key, map->mask);
    while (map->keys[at] != NULL)
        at = (at + 1) & map->mask;
    map->keys[at] = key;
    map->values[at] = value;
    map->count++;
    return 0;
}

/* -- a flow's hops ---------------------------------------------------------------------------- */

/* `flow.links` as a tuple or list (a new reference; PySequence_Fast), or NULL with an error. */
static PyObject *
flow_hops(PyObject *flow)
{
    PyObject *links = slot_get(flow, &flow_links_slot);
    if (links == NULL)
        return NULL;
    PyObject *hops = PySequence_Fast(links, "a flow's links are a sequence of (link, a)");
    Py_DECREF(links);
    return hops;
}

/* The link of a hop (link, a), borrowed, and its a in `*a` (when `a` is not NULL). */
static PyObject *
hop_link(PyObject *hop, double *a)
{
    if (!PyTuple_Check(hop) || PyTuple_GET_SIZE(hop) != 2) {
        PyErr_SetString(PyExc_TypeError, "a flow's hop is a (link, a) pair");
        return NULL;
    }
    if (a != NULL) {
        *a = PyFloat_AsDouble(PyTuple_GET_ITEM(hop, 1));
        if (*a == -1.0 && PyErr_Occurred())
            return NULL;
    }
    return PyTuple_GET_ITEM(hop, 0);
}

/* `link.flows` (borrowed from the link's slot: the link holds it), or NULL with an error. */
static PyObject *
link_flows(PyObject *link)
{
    PyObject **slot = slot_address(link, &link_flows_slot);
    PyObject *flows = slot != NULL ? *slot : NULL;
    if (flows == NULL || !PyDict_Check(flows)) {
        PyErr_SetString(PyExc_TypeError, "a flow link's flows must be a dict");
        return NULL;
    }
    return flows;
}

/* -- the component (flows.component) ---------------------------------------------------------- */

/* Append `item` to `list` and map it to its index there; -1 on error. */
static int
component_add(PyObject *list, IndexMap *map, PyObject *item)
{
    if (index_map_put(map, item, PyList_GET_SIZE(list)) < 0)
        return -1;
    return PyList_Append(list, item);
}

/* Fill `flows` and `links` (empty lists) with the component of `changed`, mapping each to its
 * index, as flows.component walks it; -1 on error. */
static int
component_walk(PyObject *changed, PyObject *flows, PyObject *links, IndexMap *flow_index,
               IndexMap *link_index)
{
    PyObject *hops = flow_hops(changed);
    if (hops == NULL)
        return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(hops);
    PyObject **stack = PyMem_Malloc((count > 0 ? count : 1) * sizeof(PyObject *));
    Py_ssize_t top = 0, room = count > 0 ? count : 1;
    int status = -1;
    if (stack == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        stack[top] = hop_link(PySequence_Fast_GET_ITEM(hops, i), NULL);
        if (stack[top++] == NULL)
            goto done;
    }
    if (count == 1) {
        PyObject *multi = slot_get(stack[0], &link_multi_slot);
        int crossed = multi == NULL ? -1 : PyObject_IsTrue(multi);
        Py_XDECREF(multi);
        if (crossed < 0)
            goto done;
        if (!crossed) { /* every flow on it crosses it alone: the walk's answer */
            PyObject *on = link_flows(stack[0]), *flow;
            Py_ssize_t at = 0;
            if (on == NULL || component_add(links, link_index, stack[0]) < 0)
                goto done;
            while (PyDict_Next(on, &at, &flow, NULL))
                if (component_add(flows, flow_index, flow) < 0)
                    goto done;
            status = 0;
            goto done;
        }
    }
    while (top > 0) {
        PyObject *link = stack[--top], *on, *other;
        if (index_map_get(link_index, link) >= 0)
            continue;
        if (component_add(links, link_index, link) < 0 || (on = link_flows(link)) == NULL)
            goto done;
        Py_ssize_t at = 0;
        while (PyDict_Next(on, &at, &other, NULL)) {
            if (index_map_get(flow_index, other) >= 0)
                continue;
            if (component_add(flows, flow_index, other) < 0)
                goto done;
            PyObject *its = flow_hops(other);
            if (its == NULL)
                goto done;
            Py_ssize_t n = PySequence_Fast_GET_SIZE(its);
            for (Py_ssize_t i = 0; n > 1 && i < n; i++) {
                PyObject *hop = hop_link(PySequence_Fast_GET_ITEM(its, i), NULL);
                if (hop == NULL) {
                    Py_DECREF(its);
                    goto done;
                }
                if (index_map_get(link_index, hop) >= 0)
                    continue;
                if (top == room) {
                    PyObject **larger = PyMem_Realloc(stack, 2 * room * sizeof(PyObject *));
                    if (larger == NULL) {
                        Py_DECREF(its);
                        PyErr_NoMemory();
                        goto done;
                    }
                    stack = larger;
                    room *= 2;
                }
                stack[top++] = hop; /* the flow's hops hold it: the walk runs no Python code */
            }
            Py_DECREF(its);
        }
    }
    status = 0;
done:
    PyMem_Free(stack);
    Py_DECREF(hops);
    return status;
}

/* -- the filling (flows.solve_max_min) on arrays ---------------------------------------------- */

typedef struct {
    double weight, bound, x;
    Py_ssize_t hop0, hops; /* its hops: hop_link[hop0 .. hop0 + hops), hop_a likewise */
    char open;
} FlowFigures;

typedef struct {
    double left, usage, used, byte_rate;
    Py_ssize_t on0, on; /* its flows in dict order: on_flow[on0 .. on0 + on), on_a likewise */
} LinkFigures;

typedef struct {
    FlowFigures *flow;
    LinkFigures *link;
    Py_ssize_t *hop_link, *on_flow, *work; /* work: bounded, fixed, open links (scratch) */
    double *hop_a, *on_a;
    Py_ssize_t flows, links;
} Component;

/* flows.solve_max_min on `c`: sets each flow's x (and open), each link's left and usage (the
 * reference's scratch, written back like the rest); `general` tells whether it took the
 * filling (else the one-link shortcut, which leaves open, left and usage alone). -1 on error. */
static int
fill(Component *c, int *general)
{
    const double inf = INFINITY;
    int unbounded = 1;
    for (Py_ssize_t f = 0; f < c->flows; f++)
        if (c->flow[f].bound != inf) {
            unbounded = 0;
            break;
        }
    *general = !(unbounded && c->links == 1);
    if (!*general) { /* one link, no bound: the shares are the weights' */
        LinkFigures *link = &c->link[0];
        double total = 0.0;
        for (Py_ssize_t k = link->on0; k < link->on0 + link->on; k++)
            total += c->on_a[k] * c->flow[c->on_flow[k]].weight;
        double level = total > 0.0 ? 1.0 / total : inf;
        for (Py_ssize_t f = 0; f < c->flows; f++)
            c->flow[f].x = level * c->flow[f].weight;
        return 0;
    }
    for (Py_ssize_t l = 0; l < c->links; l++) {
        LinkFigures *link = &c->link[l];
        double total = 0.0;
        link->left = 1.0;
        for (Py_ssize_t k = link->on0; k < link->on0 + link->on; k++)
            total += c->on_a[k] * c->flow[c->on_flow[k]].weight;
        link->usage = total;
    }
    Py_ssize_t unfixed = c->flows;
    /* work: the bounded flows, then the open links, then the round's fixed flows */
    Py_ssize_t *bounded = c->work, nbounded = 0;
    for (Py_ssize_t f = 0; !unbounded && f < c->flows; f++)
        if (c->flow[f].bound < inf)
            bounded[nbounded++] = f;
    for (Py_ssize_t f = 0; f < c->flows; f++) {
        c->flow[f].x = 0.0;
        c->flow[f].open = 1;
    }
    Py_ssize_t *open_links = bounded + nbounded, nopen = 0;
    for (Py_ssize_t l = 0; l < c->links; l++)
        if (c->link[l].usage > 0.0)
            open_links[nopen++] = l;
    Py_ssize_t *fixed = open_links + c->links;
    while (unfixed) {
        double level = inf;
        for (Py_ssize_t i = 0; i < nopen; i++) {
            LinkFigures *link = &c->link[open_links[i]];
            double share = (link->left < 0.0 ? 0.0 : link->left) / link->usage;
            if (share < level)
                level = share;
        }
        for (Py_ssize_t i = 0; i < nbounded; i++) {
            FlowFigures *flow = &c->flow[bounded[i]];
            if (!flow->open)
                continue;
            if (flow->weight == 0.0) {
                PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero");
                return -1;
            }
            if (flow->bound / flow->weight < level)
                level = flow->bound / flow->weight;
        }
        if (level == inf) { /* flows that cross no constrained link: no limit */
            for (Py_ssize_t f = 0; f < c->flows; f++)
                if (c->flow[f].open) {
                    c->flow[f].x = inf;
                    c->flow[f].open = 0;
                }
            return 0;
        }
        double threshold = level * (1.0 + 1e-12);
        Py_ssize_t nfixed = 0, still = 0;
        for (Py_ssize_t i = 0; i < nbounded; i++) {
            FlowFigures *flow = &c->flow[bounded[i]];
            if (flow->open && flow->bound / flow->weight <= threshold)
                fixed[nfixed++] = bounded[i];
        }
        for (Py_ssize_t i = 0; i < nopen; i++) {
            LinkFigures *link = &c->link[open_links[i]];
            if ((link->left < 0.0 ? 0.0 : link->left) / link->usage <= threshold) {
                for (Py_ssize_t k = link->on0; k < link->on0 + link->on; k++)
                    if (c->flow[c->on_flow[k]].open)
                        fixed[nfixed++] = c->on_flow[k];
            }
            else
                open_links[still++] = open_links[i];
        }
        for (Py_ssize_t i = 0; i < nfixed; i++) {
            FlowFigures *flow = &c->flow[fixed[i]];
            if (!flow->open)
                continue;
            flow->open = 0;
            unfixed--;
            double weight = flow->weight, lw = level * weight;
            double x = flow->bound < lw ? flow->bound : lw; /* min(level * weight, bound) */
            flow->x = x;
            for (Py_ssize_t k = flow->hop0; k < flow->hop0 + flow->hops; k++) {
                LinkFigures *link = &c->link[c->hop_link[k]];
                link->left -= c->hop_a[k] * x;
                link->usage -= c->hop_a[k] * weight;
            }
        }
        nopen = 0;
        for (Py_ssize_t i = 0; i < still; i++)
            if (c->link[open_links[i]].usage > 1e-300)
                open_links[nopen++] = open_links[i];
    }
    return 0;
}

/* Grow the parallel arrays `*index` and `*value` to hold `needed` items; -1 on memory error. */
static int
grow_pair(Py_ssize_t **index, double **value, Py_ssize_t *room, Py_ssize_t needed)
{
    if (needed <= *room)
        return 0;
    Py_ssize_t larger = *room * 2 > needed ? *room * 2 : needed;
    Py_ssize_t *moved_index = PyMem_Realloc(*index, (size_t)larger * sizeof(Py_ssize_t));
    if (moved_index != NULL)
        *index = moved_index;
    double *moved_value =
        moved_index == NULL ? NULL : PyMem_Realloc(*value, (size_t)larger * sizeof(double));
    if (moved_value == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *value = moved_value;
    *room = larger;
    return 0;
}

/* Read the component's flows (weight, bound, hops) and links (their flows) into `c`. */
static int
component_load(Component *c, PyObject *flows, PyObject *links, const IndexMap *flow_index,
               const IndexMap *link_index)
{
    Py_ssize_t hop_room = 0, on_room = 0, hops = 0, ons = 0;
    c->flows = PyList_GET_SIZE(flows);
    c->links = PyList_GET_SIZE(links);
    c->flow = PyMem_Calloc((size_t)c->flows + 1, sizeof(FlowFigures));
    c->link = PyMem_Calloc((size_t)c->links + 1, sizeof(LinkFigures));
    if (c->flow == NULL || c->link == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t f = 0; f < c->flows; f++) {
        PyObject *flow = PyList_GET_ITEM(flows, f);
        FlowFigures *figures = &c->flow[f];
        if (flow_read(flow, &flow_weight_slot, &figures->weight) < 0 ||
            flow_read(flow, &flow_bound_slot, &figures->bound) < 0)
            return -1;
        PyObject *its = flow_hops(flow);
        if (its == NULL)
            return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(its);
        if (grow_pair(&c->hop_link, &c->hop_a, &hop_room, hops + n) < 0) {
            Py_DECREF(its);
            return -1;
        }
        figures->hop0 = hops;
        figures->hops = n;
        for (Py_ssize_t i = 0; i < n; i++, hops++) {
            PyObject *link = hop_link(PySequence_Fast_GET_ITEM(its, i), &c->hop_a[hops]);
            c->hop_link[hops] = link == NULL ? -1 : index_map_get(link_index, link);
            if (c->hop_link[hops] < 0) {
                if (link != NULL)
                    PyErr_SetString(PyExc_ValueError,
                                    "a flow crosses a link outside its component");
                Py_DECREF(its);
                return -1;
            }
        }
        Py_DECREF(its);
    }
    for (Py_ssize_t l = 0; l < c->links; l++) {
        PyObject *on = link_flows(PyList_GET_ITEM(links, l)), *flow, *a;
        if (on == NULL)
            return -1;
        Py_ssize_t n = PyDict_GET_SIZE(on), at = 0;
        if (grow_pair(&c->on_flow, &c->on_a, &on_room, ons + n) < 0)
            return -1;
        c->link[l].on0 = ons;
        c->link[l].on = n;
        while (PyDict_Next(on, &at, &flow, &a)) {
            c->on_flow[ons] = index_map_get(flow_index, flow);
            if (c->on_flow[ons] < 0) {
                PyErr_SetString(PyExc_ValueError, "a link holds a flow outside its component");
                return -1;
            }
            c->on_a[ons] = PyFloat_AsDouble(a);
            if (c->on_a[ons] == -1.0 && PyErr_Occurred())
                return -1;
            ons++;
        }
    }
    c->work = PyMem_Malloc(((size_t)(2 * c->flows + c->links + ons) + 1) * sizeof(Py_ssize_t));
    if (c->work == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
component_free(Component *c)
{
    PyMem_Free(c->flow);
    PyMem_Free(c->link);
    PyMem_Free(c->hop_link);
    PyMem_Free(c->hop_a);
    PyMem_Free(c->on_flow);
    PyMem_Free(c->on_a);
    PyMem_Free(c->work);
}

/* -- a link's accounting (FlowLink.advance and mark) ------------------------------------------ */

/* FlowLink.advance(now): the time since the last change accounted at the current use (`now`
 * is `now_value`'s float). */
static int
link_advance(PyObject *link, PyObject *now_value, double now)
{
    double since, byte_rate, used, bytes, used_s, saturated_s;
    if (flow_read(link, &link_since_slot, &since) < 0)
        return -1;
    double elapsed = now - since;
    if (elapsed > 0.0) {
        if (flow_read(link, &link_byte_rate_slot, &byte_rate) < 0 ||
            flow_read(link, &link_used_slot, &used) < 0 ||
            flow_read(link, &link_bytes_slot, &bytes) < 0 ||
            flow_write(link, &link_bytes_slot, bytes + byte_rate * elapsed) < 0 ||
            flow_read(link, &link_used_s_slot, &used_s) < 0 ||
            flow_write(link, &link_used_s_slot, used_s + used * elapsed) < 0)
            return -1;
        if (used >= flow_saturated &&
            (flow_read(link, &link_saturated_s_slot, &saturated_s) < 0 ||
             flow_write(link, &link_saturated_s_slot, saturated_s + elapsed) < 0))
            return -1;
    }
    return slot_set(link, &link_since_slot, now_value);
}

/* The float at `list[index]`; -1 with an error when it is not one (or absent). */
static int
list_float(PyObject *list, Py_ssize_t index, double *out)
{
    if (index < 0 || index >= PyList_GET_SIZE(list)) {
        PyErr_SetString(PyExc_IndexError, "a flow link's utilisation series is empty");
        return -1;
    }
    *out = PyFloat_AsDouble(PyList_GET_ITEM(list, index));
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* FlowLink.mark(now) for the link's new use `used` (a float, already its `used`). */
static int
link_mark(PyObject *link, PyObject *used_value, double used, PyObject *now_value, double now)
{
    PyObject *times = slot_get(link, &link_series_t_slot);
    PyObject *values = times == NULL ? NULL : slot_get(link, &link_series_u_slot);
    int status = -1;
    double last_time, last_value, before;
    if (values == NULL)
        goto done;
    if (!PyList_CheckExact(times) || !PyList_CheckExact(values)) {
        PyErr_SetString(PyExc_TypeError, "a flow link's utilisation series are lists");
        goto done;
    }
    Py_ssize_t count = PyList_GET_SIZE(values);
    if (list_float(times, PyList_GET_SIZE(times) - 1, &last_time) < 0)
        goto done;
    if (last_time == now) { /* re-solved in the same instant: the last value stands */
        if (count == 0) {
            PyErr_SetString(PyExc_IndexError, "a flow link's utilisation series is empty");
            goto done;
        }
        if (PyList_SetItem(values, count - 1, Py_NewRef(used_value)) < 0)
            goto done;
        if (count > 1) {
            if (list_float(values, count - 2, &before) < 0)
                goto done;
            if (before == used &&
                (PyList_SetSlice(times, PyList_GET_SIZE(times) - 1, PyList_GET_SIZE(times),
                                 NULL) < 0 ||
                 PyList_SetSlice(values, count - 1, count, NULL) < 0))
                goto done;
        }
    }
    else {
        if (list_float(values, count - 1, &last_value) < 0)
            goto done;
        if (last_value != used) {
            if (PyList_Append(times, now_value) < 0 || PyList_Append(values, used_value) < 0)
                goto done;
            if (PyList_GET_SIZE(times) > flow_series_points) {
                PyObject *merged = PyObject_CallMethodOneArg(link, str_link_merge, now_value);
                if (merged == NULL)
                    goto done;
                Py_DECREF(merged);
            }
        }
    }
    status = 0;
done:
    Py_XDECREF(times);
    Py_XDECREF(values);
    return status;
}

/* -- the re-solve (flows.solve_from) ---------------------------------------------------------- */

/* Write the filling's results back: each flow's x (and open), each link's left and usage. */
static int
component_store_filling(const Component *c, PyObject *flows, PyObject *links, int general)
{
    for (Py_ssize_t f = 0; f < c->flows; f++) {
        PyObject *flow = PyList_GET_ITEM(flows, f);
        if (flow_write(flow, &flow_x_slot, c->flow[f].x) < 0 ||
            (general && slot_set(flow, &flow_open_slot, Py_False) < 0))
            return -1;
    }
    for (Py_ssize_t l = 0; general && l < c->links; l++) {
        PyObject *link = PyList_GET_ITEM(links, l);
        if (flow_write(link, &link_left_slot, c->link[l].left) < 0 ||
            flow_write(link, &link_usage_slot, c->link[l].usage) < 0)
            return -1;
    }
    return 0;
}

/* schedule(delay, finish, (flow, flow.version)), with flow.pending set first. */
static int
schedule_end(PyObject *schedule, PyObject *finish, PyObject *flow, double delay)
{
    if (slot_set(flow, &flow_pending_slot, Py_True) < 0)
        return -1;
    PyObject *version = slot_get(flow, &flow_version_slot);
    PyObject *key = version == NULL ? NULL : PyTuple_Pack(2, flow, version);
    PyObject *when = key == NULL ? NULL : PyFloat_FromDouble(delay);
    Py_XDECREF(version);
    if (when == NULL) {
        Py_XDECREF(key);
        return -1;
    }
    PyObject *argv[3] = {when, finish, key};
    PyObject *done = PyObject_Vectorcall(schedule, argv, 3, NULL);
    Py_DECREF(when);
    Py_DECREF(key);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

/* The new rates, the bytes moved at the old ones and the end events (`solve_from`'s loop over
 * the flows), then each link's use, peak and change point. */
static int
component_store_rates(Component *c, PyObject *flows, PyObject *links, PyObject *now_value,
                      double now, double factor, PyObject *schedule, PyObject *finish)
{
    int one_link = c->links == 1;
    Py_ssize_t *first = c->work, nfirst = 0; /* on one link: the flows that end first */
    double first_delay = INFINITY;
    for (Py_ssize_t l = 0; l < c->links; l++)
        c->link[l].used = c->link[l].byte_rate = 0.0;
    for (Py_ssize_t f = 0; f < c->flows; f++) {
        PyObject *flow = PyList_GET_ITEM(flows, f);
        double x = c->flow[f].x, rate = x * factor, old, remaining, updated;
        for (Py_ssize_t k = c->flow[f].hop0; k < c->flow[f].hop0 + c->flow[f].hops; k++) {
            LinkFigures *link = &c->link[c->hop_link[k]];
            link->used += c->hop_a[k] * x;
            link->byte_rate += rate;
        }
        if (flow_read(flow, &flow_rate_slot, &old) < 0 ||
            flow_read(flow, &flow_remaining_slot, &remaining) < 0 ||
            flow_read(flow, &flow_updated_slot, &updated) < 0)
            return -1;
        remaining -= old * (now - updated); /* the bytes moved at the old rate */
        if (flow_write(flow, &flow_remaining_slot, remaining) < 0 ||
            slot_set(flow, &flow_updated_slot, now_value) < 0)
            return -1;
        PyObject *pending = slot_get(flow, &flow_pending_slot);
        int has_end = pending == NULL ? -1 : PyObject_IsTrue(pending);
        Py_XDECREF(pending);
        if (has_end < 0)
            return -1;
        if (rate == old && has_end && !one_link) /* its end event stands */
            continue;
        PyObject *version = slot_get(flow, &flow_version_slot);
        PyObject *next = version == NULL ? NULL : PyNumber_Add(version, one_int);
        Py_XDECREF(version);
        if (next == NULL)
            return -1;
        int status = slot_set(flow, &flow_version_slot, next);
        Py_DECREF(next);
        if (status < 0 || flow_write(flow, &flow_rate_slot, rate) < 0 ||
            slot_set(flow, &flow_pending_slot, Py_False) < 0)
            return -1;
        if (rate > 0.0) {
            double delay = (remaining > 0.0 ? remaining : 0.0) / rate;
            if (!one_link) {
                if (schedule_end(schedule, finish, flow, delay) < 0)
                    return -1;
            }
            else if (delay < first_delay) {
                first[0] = f;
                nfirst = 1;
                first_delay = delay;
            }
            else if (delay == first_delay)
                first[nfirst++] = f;
        }
    }
    for (Py_ssize_t i = 0; i < nfirst; i++)
        if (schedule_end(schedule, finish, PyList_GET_ITEM(flows, first[i]), first_delay) < 0)
            return -1;
    for (Py_ssize_t l = 0; l < c->links; l++) {
        PyObject *link = PyList_GET_ITEM(links, l);
        double used = c->link[l].used, peak;
        PyObject *used_value = PyFloat_FromDouble(used);
        int status = used_value == NULL ? -1 : slot_set(link, &link_used_slot, used_value);
        if (status == 0)
            status = flow_write(link, &link_byte_rate_slot, c->link[l].byte_rate);
        if (status == 0)
            status = flow_read(link, &link_peak_slot, &peak);
        if (status == 0 && used > peak)
            status = slot_set(link, &link_peak_slot, used_value);
        if (status == 0)
            status = link_mark(link, used_value, used, now_value, now);
        Py_XDECREF(used_value);
        if (status < 0)
            return -1;
    }
    return 0;
}

/* flow_solve_from(changed, now, factor, schedule, finish): flows.solve_from in C. */
static PyObject *
flow_solve_from(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "flow_solve_from(changed, now, factor, schedule, "
                                         "finish) takes 5 arguments");
        return NULL;
    }
    if (!flow_constants_set) {
        PyErr_SetString(PyExc_RuntimeError, "flow_solve_from needs set_flow_constants first");
        return NULL;
    }
    double now = PyFloat_AsDouble(args[1]), factor = PyFloat_AsDouble(args[2]);
    if (PyErr_Occurred())
        return NULL;
    PyObject *flows = PyList_New(0), *links = PyList_New(0), *result = NULL;
    IndexMap flow_index = {NULL}, link_index = {NULL};
    Component c = {NULL};
    int general;
    if (flows == NULL || links == NULL || index_map_init(&flow_index, 64) < 0 ||
        index_map_init(&link_index, 64) < 0 ||
        component_walk(args[0], flows, links, &flow_index, &link_index) < 0 ||
        component_load(&c, flows, links, &flow_index, &link_index) < 0)
        goto done;
    for (Py_ssize_t l = 0; l < c.links; l++)
        if (link_advance(PyList_GET_ITEM(links, l), args[1], now) < 0)
            goto done;
    if (fill(&c, &general) < 0 || component_store_filling(&c, flows, links, general) < 0 ||
        component_store_rates(&c, flows, links, args[1], now, factor, args[3], args[4]) < 0)
        goto done;
    result = Py_NewRef(links);
done:
    component_free(&c);
    index_map_free(&flow_index);
    index_map_free(&link_index);
    Py_XDECREF(flows);
    Py_XDECREF(links);
    return result;
}

/* set_flow_constants(saturated, series_points): simulator.flows SATURATED and SERIES_POINTS. */
static PyObject *
set_flow_constants(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "set_flow_constants(saturated, series_points)");
        return NULL;
    }
    double saturated = PyFloat_AsDouble(args[0]);
    Py_ssize_t series_points = PyLong_AsSsize_t(args[1]);
    if (PyErr_Occurred())
        return NULL;
    flow_saturated = saturated;
    flow_series_points = series_points;
    flow_constants_set = 1;
    Py_RETURN_NONE;
}
