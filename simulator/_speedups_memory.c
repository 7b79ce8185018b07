/* simulator._speedups: the data-stack chunk cache and the object arenas (the allocator hook).
 *
 * Python reference: none: CPython's own allocator, which runs when install_chunk_cache() is not
 *   called (PARASIM_PURE_PYTHON=1).
 * Differential test: tests/simulator/test_engine.py (the chunk cache's tests),
 *   tests/simulator/test_launch.py.
 *
 * Compiled as one translation unit: simulator/_speedups.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_speedups.h"

/* -- the data-stack chunk cache --------------------------------------------------------------- */

/* CPython's DATA_STACK_CHUNK_SIZE (Python/pystate.c, 3.11 to 3.13); no other arena request has
 * this size (object arenas are 1 MiB), so the cache only ever holds frame-stack chunks. */
#define CHUNK_SIZE ((size_t)16 * 1024)
/* At most 16 MiB kept: a process with a shallow stack touched one page of its chunk, a deep
 * one all four; 1024 covers the processes of most runs and bounds an idle worker's memory. */
#define CHUNK_CACHE_MAX 1024

static PyObjectArenaAllocator base_arena;
static int chunk_cache_installed = 0;
static void *chunk_cache[CHUNK_CACHE_MAX];
static Py_ssize_t chunk_cache_len = 0;
static unsigned long long chunk_cache_hits = 0;

/* -- object arenas on huge pages --
 * pymalloc's object arenas (ARENA_SIZE, 1 MiB on 64-bit builds of 3.10 to 3.13) are mapped one by
 * one, and each 4 KiB page costs a page fault when first touched: hundreds to thousands in a run
 * of many processes, each dear on a virtual machine. Carved from regions of ARENA_REGION_BYTES
 * aligned to 2 MiB and advised MADV_HUGEPAGE, they fault in 2 MiB at a time where transparent
 * huge pages are enabled ("always" or "madvise"); where not, as before. A freed arena is kept for
 * the next (up to ARENA_CACHE_MAX), else unmapped: the kernel splits the huge page. A region the
 * data limit refuses falls back to an arena alone, so a run still uses memory to its limit.
 * The last region's unused part counts in the data limit (simulator.runner reserves it). */
#define ARENA_BYTES ((size_t)1 << 20)
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
#define ARENA_REGION_BYTES ((size_t)16 << 20)
#define ARENA_CACHE_MAX 64

static char *region_next = NULL, *region_end = NULL;
static void *arena_cache[ARENA_CACHE_MAX];
static Py_ssize_t arena_cache_len = 0;
static unsigned long long arena_regions = 0, arenas_carved = 0;

/* Map a region aligned to a huge page and advise huge pages for it; 0, or -1 when refused. */
static int
map_arena_region(void)
{
    size_t span = ARENA_REGION_BYTES + HUGE_PAGE_BYTES;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return -1;
    uintptr_t mask = (uintptr_t)(HUGE_PAGE_BYTES - 1);
    char *start = (char *)(((uintptr_t)raw + mask) & ~mask);
    char *end = start + ARENA_REGION_BYTES;
    if (start > raw)
        munmap(raw, (size_t)(start - raw));
    if (raw + span > end)
        munmap(end, (size_t)(raw + span - end));
    (void)madvise(start, ARENA_REGION_BYTES, MADV_HUGEPAGE); /* EINVAL without THP: still memory */
    region_next = start;
    region_end = end;
    arena_regions++;
    return 0;
}

/* An object arena: a kept one, else the next of the region (a new region when it is used up),
 * else one mapped alone. */
static void *
arena_alloc(size_t size)
{
    if (arena_cache_len > 0)
        return arena_cache[--arena_cache_len];
    if ((region_next == NULL || region_next + ARENA_BYTES > region_end) && map_arena_region() < 0)
        return base_arena.alloc(base_arena.ctx, size);
    void *arena = region_next;
    region_next += ARENA_BYTES;
    arenas_carved++;
    return arena;
}

/* The caches are plain arrays, so they are only used by a thread holding the GIL; CPython may
 * free a thread state's chunks without it (PyThreadState_Delete), and those go straight
 * through. */
static void *
chunk_alloc(void *ctx, size_t size)
{
    if (size == CHUNK_SIZE && chunk_cache_len > 0 && PyGILState_Check()) {
        chunk_cache_hits++;
        return chunk_cache[--chunk_cache_len];
    }
    if (size == ARENA_BYTES && PyGILState_Check())
        return arena_alloc(size);
    return base_arena.alloc(base_arena.ctx, size);
}

static void
chunk_free(void *ctx, void *ptr, size_t size)
{
    if (size == CHUNK_SIZE && chunk_cache_len < CHUNK_CACHE_MAX && PyGILState_Check()) {
        chunk_cache[chunk_cache_len++] = ptr;
        return;
    }
    if (size == ARENA_BYTES && arena_cache_len < ARENA_CACHE_MAX && PyGILState_Check()) {
        arena_cache[arena_cache_len++] = ptr;
        return;
    }
    base_arena.free(base_arena.ctx, ptr, size);
}

/* The module keeps its state in C globals (the process class, the cache), so it serves the main
 * interpreter only; a subinterpreter's engine runs on the pure-Python core. */
static int
check_main_interpreter(void)
{
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        PyErr_SetString(PyExc_ImportError,
                        "simulator._speedups serves the main interpreter only");
        return -1;
    }
    return 0;
}

static PyObject *
install_chunk_cache(PyObject *module, PyObject *unused)
{
    if (check_main_interpreter() < 0)
        return NULL;
    if (!chunk_cache_installed) {
        PyObjectArenaAllocator cache = {NULL, chunk_alloc, chunk_free};
        PyObject_GetArenaAllocator(&base_arena);
        PyObject_SetArenaAllocator(&cache);
        chunk_cache_installed = 1;
        /* The first region at once, so the next arena comes from huge pages even in a process
         * whose existing arenas have room for a while (a data limit may refuse it: then later). */
        if (region_next == NULL)
            (void)map_arena_region();
    }
    Py_RETURN_NONE;
}

/* prefault_arenas(count): carve up to `count` object arenas ahead from the region already
 * mapped (no new mapping: the address space a data limit counts stays as it is), write each of
 * their pages once, and keep them as freed arenas are kept (up to ARENA_CACHE_MAX), so that the
 * arenas a run takes first are memory this process has faulted in already: a sandbox child does
 * it while it waits for its run (simulator.runner `warm_up_child`), a forked child's first
 * arenas otherwise faulting in on its run's clock. Returns the arenas now kept; none are carved
 * without the hook (install_chunk_cache). */
static PyObject *
prefault_arenas(PyObject *module, PyObject *count_obj)
{
    Py_ssize_t count = PyLong_AsSsize_t(count_obj);
    if (count == -1 && PyErr_Occurred())
        return NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    for (; chunk_cache_installed && count > 0 && arena_cache_len < ARENA_CACHE_MAX; count--) {
        if (region_next == NULL || region_next + ARENA_BYTES > region_end)
            break;
        volatile char *arena = region_next;
        region_next += ARENA_BYTES;
        arenas_carved++;
        for (size_t offset = 0; offset < ARENA_BYTES; offset += (size_t)page)
            arena[offset] = 0;
        arena_cache[arena_cache_len++] = (void *)arena;
    }
    return PyLong_FromSsize_t(arena_cache_len);
}

static PyObject *
chunk_cache_stats(PyObject *module, PyObject *unused)
{
    return Py_BuildValue("{s:O,s:n,s:K,s:n,s:K,s:K,s:n}", "installed",
                         chunk_cache_installed ? Py_True : Py_False, "cached", chunk_cache_len,
                         "hits", chunk_cache_hits, "capacity", (Py_ssize_t)CHUNK_CACHE_MAX,
                         "arena_regions", arena_regions, "arenas_carved", arenas_carved,
                         "arenas_kept", arena_cache_len);
}
