/* The engine's scheduling core in C, and a cache for CPython's frame-stack chunks.
 *
 * simulator/engine.py holds the reference implementation of the same core in Python
 * (_PythonCore) and uses this one when it has been built (python -m simulator.build_speedups,
 * which ./studio setup runs). Both order events by (time, sequence) and raise the same errors
 * with the same messages; tests/simulator/test_engine.py runs every engine test on both.
 *
 * Why C (bench/RESULTS.md has the measurements):
 *  - A process that pauses runs the scheduler itself and switches straight to the next process
 *    (KnightSim's contexts, 002 section 2.2). Done in Python, that switch happens inside a fresh
 *    Python frame (`_dispatch`), which greenlet turns into a frame object on every switch; done
 *    here, the innermost Python frame at a switch is the model's own, which lives on.
 *  - Every greenlet gets its own CPython data-stack chunk (16 KiB), which CPython maps with
 *    mmap when the greenlet starts and unmaps when it ends: two system calls and a page fault
 *    per simulated process. install_chunk_cache() keeps up to CHUNK_CACHE_MAX freed chunks for
 *    the next greenlet (arena allocator hook, PyObject_SetArenaAllocator).
 *  - The same hook hands out CPython's 1 MiB object arenas from regions advised for huge pages,
 *    so that a run's objects fault their memory in 2 MiB at a time rather than 4 KiB.
 *  - A memoized `sim.computation` (the call an application model makes most) costs the engine's
 *    own event plus a memo lookup: SimCore.computation reads the memo, keeps the node's Usage
 *    (a C type, simulator/results.py holds its Python reference) and pauses, without a Python
 *    frame; every other call goes to the Python code it mirrors (simulator/api.py
 *    _PythonSimCore.computation).
 *
 * The parts, one concern each, included below in this order as one translation unit (each
 * names its Python reference and its differential test at its top): _speedups_memory.c (the
 * allocator hook), _speedups_loop.c (the event loop), _speedups_usage.c (a component's usage),
 * _speedups_sim.c (sim calls), _speedups_stackless.c (stackless processes),
 * _speedups_transfer.c (a message's hops, mailboxes and FIFOs), _speedups_messages.c (filters,
 * receive, send, collectives), _speedups_guard.c (the attribute guard), _speedups_program.c (a
 * model's computationTime as a program of doubles), _speedups_flows.c (the flow network's
 * max-min re-solve), _speedups_flows_uniform.c (a uniform component's re-solve and a flow's
 * start and end events), _speedups_power.c and _speedups_kernel_rows.c (the result's power
 * series and kernel rows), _speedups_spawn.c (a run's process records and sim objects). This
 * file keeps what Python hands the core at start-up and the module's definition.
 */
#include "_speedups.h"

#include "_speedups_memory.c"
#include "_speedups_loop.c"
#include "_speedups_usage.c"
#include "_speedups_sim.c"
#include "_speedups_kernel.c"
#include "_speedups_stackless.c"
#include "_speedups_transfer.c"
#include "_speedups_messages.c"
#include "_speedups_guard.c"
#include "_speedups_program.c"
#include "_speedups_flows.c"
#include "_speedups_flows_uniform.c"

/* A transfer's timeline entry's further keys, in Timeline.add's order (`transfer_keys`). */
static PyObject *str_entry_node = NULL, *str_entry_instance = NULL, *str_entry_size = NULL,
                *str_entry_direction = NULL, *str_entry_to = NULL;
#include "_speedups_power.c"
#include "_speedups_kernel_rows.c"
#include "_speedups_spawn.c"

/* -- what Python hands the core at start-up ------------------------------------------------ */

static PyObject *
set_message_type(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "set_message_type(Message, P2P)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)args[0];
    Py_XSETREF(message_type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(p2p_channel, Py_NewRef(args[1]));
    /* Made without its __init__ call (`message_made`) only a class made as Message is: its
     * own __init__ (a Python function) on object's __new__, no __dict__, the six slots. */
    message_version = 0;
    PyObject *init = PyDict_GetItemWithError(type->tp_dict, str___init__); /* borrowed */
    if (init == NULL && PyErr_Occurred())
        return NULL;
    int made_as_message = init != NULL && PyFunction_Check(init) &&
                          type->tp_new == PyBaseObject_Type.tp_new &&
                          type->tp_alloc == PyType_GenericAlloc && type->tp_dictoffset == 0 &&
                          type->tp_getattro == PyObject_GenericGetAttr &&
                          type->tp_setattro == PyObject_GenericSetAttr;
    if (made_as_message) {
        _PyType_Lookup(type, str___init__); /* gives the class its version tag */
        for (int index = 0; index < 6; index++) {
            PyObject *descriptor = _PyType_Lookup(type, *message_slots[index].name);
            if (descriptor == NULL || !Py_IS_TYPE(descriptor, &PyMemberDescr_Type) ||
                ((PyMemberDescrObject *)descriptor)->d_common.d_type != type)
                made_as_message = 0;
        }
    }
    if (made_as_message && (type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        message_version = type->tp_version_tag;
    Py_RETURN_NONE;
}

static PyObject *
set_plain_params_type(PyObject *module, PyObject *type)
{
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyDict_Type)) {
        PyErr_SetString(PyExc_TypeError, "set_plain_params_type expects a dict subclass");
        return NULL;
    }
    Py_XSETREF(plain_params_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

static PyObject *
set_memo_type(PyObject *module, PyObject *type)
{
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyDict_Type)) {
        PyErr_SetString(PyExc_TypeError, "set_memo_type expects a dict subclass");
        return NULL;
    }
    Py_XSETREF(memo_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

static PyObject *
set_process_type(PyObject *module, PyObject *type)
{
    if (check_main_interpreter() < 0)
        return NULL;
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "set_process_type expects a class");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)type, &PyGreenlet_Type)) {
        PyErr_SetString(PyExc_TypeError, "the process class must subclass greenlet");
        return NULL;
    }
    Py_XSETREF(process_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

static PyObject *
set_stackless_types(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyType_Check(args[0]) || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "set_stackless_types expects two classes");
        return NULL;
    }
    if (process_type == NULL || !PyType_IsSubtype((PyTypeObject *)args[1], process_type)) {
        PyErr_SetString(PyExc_TypeError, "the carrier class must subclass the process class");
        return NULL;
    }
    Py_XSETREF(stackless_type, (PyTypeObject *)Py_NewRef(args[0]));
    Py_XSETREF(carrier_type, (PyTypeObject *)Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

/* -- the name contract: the Python names the core reads, writes and calls ------------------- */


/* Every name the core uses, by its key in simulator.hotpath.NAMES, which gives the Python name
 * (and the class it belongs to) at start-up: set_names. A rename on the Python side is one edit
 * there, and tests/simulator/test_name_contract.py checks each name against its class. */
typedef struct {
    const char *key;
    PyObject **name; /* the interned name, used where the core once interned a literal */
} ContractName;

static const ContractName contract_names[] = {
    {"waiting", &str_waiting},
    {"add_busy", &str_add_busy},
    {"computation_time", &str_computation_time},
    {"computation_fallback", &str_computation_fallback},
    {"computation_missed", &str_missed},
    {"record_computation", &str_record_computation},
    {"compute_s", &str_compute_s},
    {"full", &str_full},
    {"dropped", &str_dropped},
    {"pause", &str_pause},
    {"start", &str_start},
    {"stop", &str_stop},
    {"process", &str_process},
    {"kind", &str_kind},
    {"compute", &str_compute},
    {"start_s", &str_start_s},
    {"end_s", &str_end_s},
    {"entries", &str_entries},
    {"limit", &str_limit},
    {"cuda_core_instructions", &str_cuda_core_instructions},
    {"index", &str_index},
    {"receive", &str_receive},
    {"sent_at", &str_sent_at},
    {"wait_s", &str_wait_s},
    {"comm_s", &str_comm_s},
    {"index_room", &str_index_room},
    {"program", &str_program},
    {"targets", &str_targets},
    {"state", &str_state},
    {"p2p_send_fallback", &str_p2p_send_fallback},
    {"target", &str_target_method},
    {"receivers", &str_receivers},
    {"collectives", &str_collectives},
    {"broadcast", &str_broadcast},
    {"scatter", &str_scatter},
    {"gather", &str_gather},
    {"collectives_slot", &str_collectives_slot},
    {"root", &str_root},
    {"to_root", &str_to_root},
    {"collective_waiting", &str_waiting_attr},
    {"broadcast_fallback", &str_broadcast_fallback},
    {"scatter_fallback", &str_scatter_fallback},
    {"gather_fallback", &str_gather_fallback},
    {"busy", &str_busy},
    {"busy_dropped", &str_busy_dropped},
    {"node_key", &str_node_key},
    {"instance_key", &str_instance_key},
    {"barrier", &str_barrier},
    {"channel", &str_channel},
    {"slot", &str_slot},
    {"label", &str_label},
    {"receive_fallback", &str_receive_fallback},
    {"on_process_end", &str_on_process_end},
    {"processes", &str_processes},
    {"failed", &str_failed},
    {"throw", &str_throw},
    {"transfer_time", &str_transfer_time},
    {"transfer_times", &str_transfer_times},
    {"init", &str___init__},
    {"release", &str_release},
    {"request", &str_request},
    {"mailbox", &str_mailbox},
    {"put", &str_put},
    {"size", &str_size},
    {"direction", &str_direction},
    {"host_memory", &str_host_memory},
    {"source", &str_source},
    {"name", &str_name},
    {"id", &str_id},
    {"transfer", &str_transfer},
    {"append", &str_append},
    {"popleft", &str_popleft},
    {"entry_node", &str_entry_node},
    {"entry_instance", &str_entry_instance},
    {"entry_size", &str_entry_size},
    {"entry_direction", &str_entry_direction},
    {"entry_to", &str_entry_to},
    {"flow_links", &str_flow_links},
    {"flow_weight", &str_flow_weight},
    {"flow_bound", &str_flow_bound},
    {"flow_x", &str_flow_x},
    {"flow_rate", &str_flow_rate},
    {"flow_remaining", &str_flow_remaining},
    {"flow_updated", &str_flow_updated},
    {"flow_version", &str_flow_version},
    {"flow_pending", &str_flow_pending},
    {"flow_open", &str_flow_open},
    {"link_flows", &str_link_flows},
    {"link_multi", &str_link_multi},
    {"link_used", &str_link_used},
    {"link_byte_rate", &str_link_byte_rate},
    {"link_since", &str_link_since},
    {"link_bytes", &str_link_bytes},
    {"link_used_s", &str_link_used_s},
    {"link_saturated_s", &str_link_saturated_s},
    {"link_peak", &str_link_peak},
    {"link_series_t", &str_link_series_t},
    {"link_series_u", &str_link_series_u},
    {"link_left", &str_link_left},
    {"link_usage", &str_link_usage},
    {"link_merge", &str_link_merge},
    {"flow_done", &str_flow_done},
    {"kernel_gmem", &str_kernel_gmem},
    {"kernel_grid", &str_kernel_grid},
    {"kernel_n", &str_kernel_n},
    {"kernel_block", &str_kernel_block},
    {"kernel_occupancy", &str_kernel_occupancy},
    {"kernels", &str_kernels},
    {"annotated", &str_annotated},
    {"kernel_key", &str_kernel_key},
    {"usages", &str_usages},
    {"links", &str_links},
    {"link", &str_link},
    {"node_engine", &str_node_engine},
    {"series_node", &str_series_node},
    {"series_name", &str_series_name},
    {"series_instance", &str_series_instance},
    {"series_points", &str_series_points},
    {"figures_node", &str_figures_node},
    {"figures_name", &str_figures_name},
    {"idle_w", &str_idle_w},
    {"active_w", &str_active_w},
    {"usage_instance", &str_usage_instance},
    {"usage_capacity", &str_usage_capacity},
    {"resource_name", &str_resource_name},
    {"slot_node", &str_slot_node},
    {"slot_instance", &str_slot_instance},
    {"row_node", &str_row_node},
    {"row_instance", &str_row_instance},
    {"row_duration", &str_row_duration},
    {"row_bound", &str_row_bound},
    {"row_bound_class", &str_row_bound_class},
    {"row_occupancy", &str_row_occupancy},
    {"row_fraction", &str_row_fraction},
    {"row_ops", &str_row_ops},
    {"row_bytes", &str_row_bytes},
    {"row_intensity", &str_row_intensity},
    {"row_ops_per_s", &str_row_ops_per_s},
    {"row_bytes_per_s", &str_row_bytes_per_s},
    {"row_roof_ops", &str_row_roof_ops},
    {"row_roof_fraction", &str_row_roof_fraction},
    {"detail", &str_detail},
    {"bound", &str_bound},
    {"detail_occupancy", &str_detail_occupancy},
    {"state_engine", &str_state_engine},
    {"state_figures", &str_state_figures},
    {"process_label", &str_process_label},
    {"process_rank", &str_process_rank},
    {"process_node", &str_process_node},
    {"process_instance", &str_process_instance},
    {"process_name", &str_process_name},
    {"finish_s", &str_finish_s},
    {"memory_s", &str_memory_s},
    {"sim_world", &str_sim_world},
    {"sim_labels", &str_sim_labels},
    {"sim_random", &str_sim_random},
    {"computation_memos", &str_computation_memos},
    {"slot_rank", &str_slot_rank},
    {"spawn_stackless", &str_spawn_stackless},
    {"process_data", &str_process_data},
    {"process_on_error", &str_process_on_error},
    {"sim_stackless", &str_sim_stackless},
    {NULL, NULL},
};
static int names_set = 0;

static PyObject *
set_names(PyObject *module, PyObject *names)
{
    if (!PyDict_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "set_names expects a dict of key: name");
        return NULL;
    }
    Py_ssize_t known = 0;
    for (const ContractName *entry = contract_names; entry->key != NULL; entry++, known++) {
        PyObject *name = PyDict_GetItemString(names, entry->key); /* borrowed */
        if (name == NULL || !PyUnicode_CheckExact(name)) {
            PyErr_Format(PyExc_ValueError,
                         "simulator.hotpath.NAMES['%s'] must be a str: the C core uses that name",
                         entry->key);
            return NULL;
        }
    }
    if (PyDict_GET_SIZE(names) != known) {
        PyErr_Format(PyExc_ValueError,
                     "simulator.hotpath.NAMES has %zd keys, the C core uses %zd: each key is "
                     "one of the core's names (ContractName in simulator/_speedups.c)",
                     PyDict_GET_SIZE(names), known);
        return NULL;
    }
    if (names_set) {
        /* the slot caches keep offsets found by name: names are set once, before any use */
        PyErr_SetString(PyExc_RuntimeError, "the C core's names are set once, at start-up");
        return NULL;
    }
    for (const ContractName *entry = contract_names; entry->key != NULL; entry++) {
        PyObject *name = Py_NewRef(PyDict_GetItemString(names, entry->key));
        PyUnicode_InternInPlace(&name);
        Py_XSETREF(*entry->name, name);
    }
    transfer_keys = PyTuple_Pack(5, str_entry_node, str_entry_instance, str_entry_size,
                                 str_entry_direction, str_entry_to);
    if (transfer_keys == NULL)
        return NULL;
    kernel_keys = PyTuple_Pack(1, str_kernel_key);
    if (kernel_keys == NULL)
        return NULL;
    names_set = 1;
    Py_RETURN_NONE;
}

static PyObject *
names(PyObject *module, PyObject *unused)
{
    PyObject *result = PyDict_New();
    for (const ContractName *entry = contract_names; result != NULL && entry->key != NULL;
         entry++) {
        PyObject *name = *entry->name != NULL ? *entry->name : Py_None;
        if (PyDict_SetItemString(result, entry->key, name) < 0)
            Py_CLEAR(result);
    }
    return result;
}

static PyObject *
in_main_interpreter(PyObject *module, PyObject *unused)
{
    if (check_main_interpreter() < 0) {
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef module_methods[] = {
    {"set_names", set_names, METH_O,
     "Give the core the Python names it uses, by key (simulator.hotpath.NAMES); once."},
    {"names", names, METH_NOARGS, "Return the names the core uses, by key (None: not set)."},
    {"in_main_interpreter", in_main_interpreter, METH_NOARGS,
     "Return whether this is the main interpreter, the only one the core serves."},
    {"set_process_type", set_process_type, METH_O,
     "Tell the core which class is a simulated process."},
    {"set_stackless_types", (PyCFunction)(void (*)(void))set_stackless_types, METH_FASTCALL,
     "Tell the core which class is a stackless process (a generator the loop resumes) and "
     "which the greenlet it borrows for a call that blocks."},
    {"install_chunk_cache", install_chunk_cache, METH_NOARGS,
     "Keep freed 16 KiB frame-stack chunks for the next greenlet instead of unmapping them."},
    {"prefault_arenas", prefault_arenas, METH_O,
     "Carve up to `count` object arenas ahead, fault their pages in, keep them for the next "
     "objects; return how many are kept (none without install_chunk_cache)."},
    {"chunk_cache_stats", chunk_cache_stats, METH_NOARGS,
     "Return the chunk cache's state: installed, cached, hits, capacity."},
    {"set_plain_params_type", set_plain_params_type, METH_O,
     "Tell SimCore which dict subclass it may read as params besides dict (api.HashMap)."},
    {"set_message_type", (PyCFunction)(void (*)(void))set_message_type, METH_FASTCALL,
     "Tell SimCore's send which class is a message and which channel a send's (Message, P2P)."},
    {"set_memo_type", set_memo_type, METH_O,
     "Tell SimCore which dict subclass is a memo with an `index` slot (shallow.Memo)."},
    {"send_each", (PyCFunction)(void (*)(void))send_each, METH_FASTCALL,
     "send_each(engine, timeline, source, size, channel, routes): World.send_each in C."},
    {"fifo_hops", (PyCFunction)(void (*)(void))fifo_hops, METH_FASTCALL,
     "fifo_hops(plan, nodes, source, target, hop_tuples): platform.fifo_hops in C."},
    {"fifo_route", (PyCFunction)(void (*)(void))fifo_route, METH_FASTCALL,
     "fifo_route(cache, plans, plan_of, hop_tuples, source, target): platform.fifo_route in C."},
    {"power_series_of", (PyCFunction)(void (*)(void))power_series_of, METH_FASTCALL,
     "power_series_of(entries, where, drawing, wanted, overall_time_s): results' in C."},
    {"kernel_rows_of", (PyCFunction)(void (*)(void))kernel_rows_of, METH_FASTCALL,
     "kernel_rows_of(entries, where, on_gpus, nodes, no_node, bound_classes, template): "
     "results.kernel_rows' loop in C."},
    {"states_made", (PyCFunction)(void (*)(void))states_made, METH_FASTCALL,
     "states_made(engine, slots, state_type, state_init, figures_type, figures_init, slot_type, "
     "zero): runner._python_states_made in C, or NotImplemented."},
    {"sims_made", (PyCFunction)(void (*)(void))sims_made, METH_FASTCALL,
     "sims_made(sim_class, sim_init, world, states, labels, state_type, slot_type, node_memos, "
     "engine, nodes, receivers, collectives, timeline, random): runner._python_sims_made in C, "
     "or NotImplemented."},
    {"process_rows_of", (PyCFunction)(void (*)(void))process_rows_of, METH_FASTCALL,
     "process_rows_of(processes, template, figures_type, fields): the result's process rows "
     "(results.assemble_result's loop) in C, or NotImplemented."},
    {"stackless_spawned", (PyCFunction)(void (*)(void))stackless_spawned, METH_FASTCALL,
     "stackless_spawned(engine, states, sims, shared, template, places, label_counts, on_error, "
     "label_type): runner._python_stackless_spawned in C, or NotImplemented."},
    {"set_resource_type", set_resource_type, METH_O,
     "Tell the core which class a node's FIFO is (engine.Resource: NodeRuntime.link's)."},
    {"set_attribute_guard", (PyCFunction)(void (*)(void))set_attribute_guard, METH_FASTCALL,
     "Tell guarded_getattr the Python guard it defers to and the inspection attributes."},
    {"guarded_getattr", (PyCFunction)(void (*)(void))guarded_getattr,
     METH_FASTCALL | METH_KEYWORDS,
     "getattr(obj, name[, default]) for application models: the Python guard's rules."},
    {"set_multiply_guard", (PyCFunction)(void (*)(void))set_multiply_guard, METH_FASTCALL,
     "Tell guarded_mul the Python guard it defers to and the bits an int product may have."},
    {"guarded_mul", (PyCFunction)(void (*)(void))guarded_mul, METH_FASTCALL,
     "left * right for application models: the Python guard's rules."},
    {"evaluate_program", (PyCFunction)(void (*)(void))evaluate_program, METH_FASTCALL,
     "A js_program.Program's value for params (a dict), or None where it declines."},
    {"program_ops", program_ops, METH_NOARGS, "The program opcodes by name (js_program.OPS)."},
    {"set_flow_constants", (PyCFunction)(void (*)(void))set_flow_constants, METH_FASTCALL,
     "Tell flow_solve_from simulator.flows' SATURATED and SERIES_POINTS; once, before use."},
    {"flow_solve_from", (PyCFunction)(void (*)(void))flow_solve_from, METH_FASTCALL,
     "flow_solve_from(changed, now, factor, schedule, finish): simulator.flows.solve_from."},
    {"flow_solve_uniform", (PyCFunction)(void (*)(void))flow_solve_uniform, METH_FASTCALL,
     "flow_solve_uniform(changed, now, states, state_of, schedule, finish): "
     "simulator.flows.solve_uniform."},
    {"flow_join", (PyCFunction)(void (*)(void))flow_join, METH_FASTCALL,
     "flow_join(engine, changed, solve_changed, flow): simulator.flows.join."},
    {"flow_finish", (PyCFunction)(void (*)(void))flow_finish, METH_FASTCALL,
     "flow_finish(engine, changed, solve_changed, (flow, version)): simulator.flows.finish."},
    {NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simulator._speedups",
    .m_doc = "The engine's scheduling core, the sim API's hot path and a frame-stack chunk cache, in C.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyGreenlet_Import();
    if (_PyGreenlet_API == NULL)
        return NULL;
    /* the names the core reads and calls come later, from Python (set_names) */
    empty_tuple = PyTuple_New(0);
    zero_int = PyLong_FromLong(0);
    one_int = PyLong_FromLong(1);
    if (empty_tuple == NULL || zero_int == NULL || one_int == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL)
        return NULL;
    /* the globals keep a reference to each type: the module is never unloaded (m_size -1) */
    PyObject *core = PyType_FromSpec(&Core_spec);
    PyObject *usage = core == NULL ? NULL : PyType_FromSpec(&Usage_spec);
    PyObject *sim_core = usage == NULL ? NULL : PyType_FromSpec(&SimCore_spec);
    PyObject *stackless = sim_core == NULL ? NULL : PyType_FromSpec(&StacklessCore_spec);
    PyObject *transfer = stackless == NULL ? NULL : PyType_FromSpec(&Transfer_spec);
    PyObject *mailbox = transfer == NULL ? NULL : PyType_FromSpec(&MailboxCore_spec);
    PyObject *resource = mailbox == NULL ? NULL : PyType_FromSpec(&ResourceCore_spec);
    PyObject *filter = resource == NULL ? NULL : PyType_FromSpec(&MessageFilter_spec);
    if (filter == NULL || PyModule_AddObjectRef(module, "MessageFilter", filter) < 0 ||
        PyModule_AddObjectRef(module, "ResourceCore", resource) < 0 ||
        PyModule_AddObjectRef(module, "MailboxCore", mailbox) < 0 ||
        PyModule_AddObjectRef(module, "Transfer", transfer) < 0 ||
        PyModule_AddObjectRef(module, "Core", core) < 0 ||
        PyModule_AddObjectRef(module, "StacklessCore", stackless) < 0 ||
        PyModule_AddObjectRef(module, "Usage", usage) < 0 ||
        PyModule_AddObjectRef(module, "SimCore", sim_core) < 0 ||
        PyModule_AddIntConstant(module, "ARENA_REGION_BYTES", (long)ARENA_REGION_BYTES) < 0) {
        Py_XDECREF(core);
        Py_XDECREF(usage);
        Py_XDECREF(sim_core);
        Py_XDECREF(stackless);
        Py_XDECREF(transfer);
        Py_XDECREF(mailbox);
        Py_XDECREF(resource);
        Py_XDECREF(filter);
        Py_DECREF(module);
        return NULL;
    }
    message_filter_type = (PyTypeObject *)filter; /* the globals keep this reference */
    core_type = (PyTypeObject *)core;
    transfer_type = transfer; /* the module keeps it, and this reference too */
    mailbox_core_type = (PyTypeObject *)mailbox; /* ... and this one */
    resource_core_type = (PyTypeObject *)resource; /* the module keeps it */
    Py_DECREF(resource);
    resource_request_method = PyDict_GetItemString(resource_core_type->tp_dict, "request");
    resource_release_method = PyDict_GetItemString(resource_core_type->tp_dict, "release");
    mailbox_put_method = PyDict_GetItemString(mailbox_core_type->tp_dict, "put");
    if (resource_request_method == NULL || resource_release_method == NULL ||
        mailbox_put_method == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the cores' request, release and put are missing");
        Py_DECREF(module);
        return NULL;
    }
    /* WAIT: a stackless process yields it to wait (SimCore.computation returns it) */
    no_value_marker = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (no_value_marker == NULL) {
        Py_DECREF(module);
        return NULL;
    }
    wait_marker = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (wait_marker == NULL || PyModule_AddObjectRef(module, "WAIT", wait_marker) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    usage_type = (PyTypeObject *)usage;
    sim_core_type = (PyTypeObject *)sim_core; /* the globals keep these references too */
    Py_DECREF(stackless);
    if (PyModule_AddIntConstant(module, "CHUNK_SIZE", (long)CHUNK_SIZE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
