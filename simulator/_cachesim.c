/* The cache simulators' core in C: one tree of inclusive, write-back, write-allocate LRU
 * caches with an optional MESI directory, and its two Python types: `Tree`, the core of
 * simulator.models.coherence.CacheTree, and `Hierarchy`, the core of
 * simulator.models.cache.CacheHierarchy, which is the same tree with one cache per level (a
 * chain is a tree whose every cache has one child: see _cachesim_chain.c).
 *
 * The Python references: simulator/models/coherence.py PythonCacheTree (its module docstring
 * states every rule) and simulator/models/cache.py _PythonCore (likewise). simulator.hotpath
 * chooses this module when it has been built (python -m simulator.build_speedups, which
 * ./studio setup runs) unless PARASIM_PURE_PYTHON is set. Both give the same served levels, the
 * same counters and the same contents after any sequence of calls;
 * tests/simulator/models/test_coherence_speedups.py and test_cache_speedups.py run them side by
 * side on seeded streams.
 *
 * Layout: per cache, every set is `ways` slots of a line tag (the line number) and a meta word,
 * LRU stamp << 1 | dirty; the first fill[set] slots of a set are valid. The Python cores keep a
 * set as an OrderedDict, least recently used first; here the stamp replaces that order: a hit
 * or an insertion takes the next value of one clock shared by every cache (the dict's
 * move_to_end / insertion), a write or a write-back only sets the dirty bit (the dict's
 * assignment to an existing key), and the victim is the valid slot with the smallest stamp
 * (popitem(last=False)). Stamps are unique, so comparing meta words compares stamps (63 bits:
 * they never wrap). Removing a line moves the set's last valid slot into the hole: slot order
 * means nothing.
 *
 * The one difference: line numbers are 64-bit here, so an address whose line number
 * (address // line_bytes) is 2**64 or more raises OverflowError (ERR_LINE_RANGE) where the
 * Python cores take any int.
 *
 * The parts, included below in this order as one translation unit (each names its Python
 * reference and its differential test at its top): _cachesim_common.c (a cache's sets, an
 * address's line, stream items and buffers), _cachesim_tree.c (the simulation),
 * _cachesim_tree_type.c (Tree, its Python type) and _cachesim_chain.c (Hierarchy, the chain's
 * Python type on the same core). This file keeps the module's definition.
 */
#include "_cachesim.h"

#include "_cachesim_common.c"
#include "_cachesim_tree.c"
#include "_cachesim_tree_type.c"
#include "_cachesim_chain.c"

static struct PyModuleDef cachesim_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simulator._cachesim",
    .m_doc = "The cache simulators' core in C (simulator/models/cache.py and coherence.py hold "
              "the references).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__cachesim(void)
{
    if (PyType_Ready(&Hierarchy_type) < 0 || PyType_Ready(&Tree_type) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&cachesim_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Hierarchy", (PyObject *)&Hierarchy_type) < 0 ||
        PyModule_AddObjectRef(module, "Tree", (PyObject *)&Tree_type) < 0 ||
        PyModule_AddIntConstant(module, "TREE_MAX_CACHES", TREE_MAX_CACHES) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
