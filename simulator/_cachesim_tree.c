/* simulator._cachesim: a tree of caches with an optional MESI directory (the simulation), the
 * one core that both Python types run on (a chain is a tree: see chain_access).
 *
 * Python reference: simulator/models/coherence.py PythonCacheTree.
 * Differential test: tests/simulator/models/test_coherence_speedups.py (which includes a chain)
 * and tests/simulator/models/test_cache_speedups.py (the chain through `Hierarchy`).
 *
 * Compiled as one translation unit: simulator/_cachesim.c includes the parts in order, so the
 * compiler still inlines across them; a part uses what the parts before it define.
 */
#include "_cachesim.h"

/* == The cache tree ========================================================================== */

/* simulator/models/coherence.py's PythonCacheTree is the reference (its module docstring states
 * every rule); each function below carries the name of the method it mirrors, and performs the
 * same steps in the same order, so that the counters, contents and directory agree after any
 * sequence of calls and the summed latency is bit-identical: every float is added in the order
 * the reference adds it (_cachesim.h turns fp-contract off so that no multiply-add is fused).
 *
 * Caches are Levels (_cachesim_common.c; one LRU clock for the whole tree). The directory is an
 * open-addressing hash table from line number to a MESI state and a bit set of the agents (the
 * directory cache's children) holding the line; the reference's {agent: state} dict always has
 * one holder in any state or several in S, which is what one state and a bit set say. Its
 * entries are the lines the agents' top caches hold, so the table never grows past twice their
 * capacity. Line transfers are a (caches + 1)^2 matrix (index 0 = memory) with the links in
 * order of first use. */

#define TREE_MAX_CACHES 1024 /* the link matrix grows with the square; beyond, Python runs */

enum { ROLE_PLAIN = 0, ROLE_AGENT_TOP = 1, ROLE_DIRECTORY_SIDE = 2 };
enum { STATE_NONE = 0, STATE_M = 1, STATE_E = 2, STATE_S = 3 };
enum {
    MSG_GET,
    MSG_GETX,
    MSG_UPGRADE,
    MSG_UPGRADE_ACK,
    MSG_PUTCLNX,
    MSG_PUTS,
    MSG_PUTX,
    MSG_PUTX_N,
    MSG_GET_FWD,
    MSG_DOWNGRADE_ACK,
    MSG_GETX_FWD,
    MSG_GETX_FWD_ACK,
    MSG_INVAL,
    MSG_INVAL_ACK,
    MSG_WRITE_BACK,
    MSG_CLEAN_WRITE_BACK,
    MESSAGE_KINDS
};
#define NO_TARGET (-2) /* _agent_copies(into=None): a dirty copy is forwarded, not written back */
#define MEMORY (-1)

typedef struct {
    uint64_t *slots;   /* capacity x stride: line, state (STATE_NONE: empty), holder bit set */
    uint64_t capacity; /* a power of two */
    uint64_t count;
    int shift; /* 64 - log2(capacity) */
    int words; /* of the bit set: bit k set when agent k holds the line */
    int stride;
} Directory;

/* One entry is contiguous, so a look-up costs the host one cache line. */
#define DIR_KEY(dir, at) ((dir)->slots[(uint64_t)(at) * (uint64_t)(dir)->stride])
#define DIR_STATE(dir, at) ((dir)->slots[(uint64_t)(at) * (uint64_t)(dir)->stride + 1])

typedef struct {
    PyObject_HEAD
    int count; /* caches; 0 when construction failed */
    Level *caches;
    double *latency;
    double *top_depth; /* latency from the agent's top cache down to this one, inclusive */
    int *parent;       /* MEMORY for a root */
    uint8_t *write_back;
    uint8_t *role;
    uint8_t *evict_duty;
    int *agent_of;   /* the agent's top cache, -1 outside agents */
    int *agent_slot; /* k when the cache is the directory's k-th child, else -1 */
    int *agent_tops; /* k -> top cache */
    int agents;
    int directory; /* -1 without one */
    int chain;     /* the tree is a chain: see chain_access */
    uint32_t *chain_links; /* a chain's per position: [2p] the link of a fill, from the next
                            * position (or memory); [2p + 1] of a write-back to it */
    int *child_start, *child_list;
    int *leaf_index; /* per cache: its index among the leaves, -1 */
    int leaves;
    int *path_start, *path_list;       /* per leaf index: the path, leaf first */
    double *path_latency; /* parallel to path_list: the latency of an access that the cache at
                           * that position serves, summed from the leaf in the reference's order */
    int *private_start, *private_list; /* per leaf index: the private path */
    int *top_position;                 /* per leaf index: the agent's top in the path, -1 */
    double memory_latency;
    uint64_t line_bytes;
    int line_shift;
    uint32_t max_ways;
    uint64_t clock;
    uint64_t *accesses, *hits, *misses, *evictions, *writebacks, *invalidations;
    uint64_t *links;       /* [(from + 1) * (count + 1) + to + 1] */
    uint32_t *link_order;  /* links in order of first use */
    uint64_t links_used;
    uint64_t messages[MESSAGE_KINDS];
    uint64_t memory_reads, memory_writes, access_count;
    double latency_sum;
    Directory dir;
    int *stack;        /* count: caches still to visit in a walk */
    uint64_t *sharers; /* dir.words: a copy of a line's holders */
    uint64_t *order;   /* twice max_ways: a set's (stamp, line) pairs, flush order */
} Tree;

/* -- the directory -------------------------------------------------------------------------- */

static inline uint64_t
dir_home(const Directory *dir, uint64_t line)
{
    return (line * UINT64_C(0x9E3779B97F4A7C15)) >> dir->shift;
}

/* Return the slot of `line`'s entry, or -1. */
static inline Py_ssize_t
dir_find(const Directory *dir, uint64_t line)
{
    uint64_t mask = dir->capacity - 1;
    for (uint64_t at = dir_home(dir, line);; at = (at + 1) & mask) {
        if (DIR_STATE(dir, at) == STATE_NONE) {
            return -1;
        }
        if (DIR_KEY(dir, at) == line) {
            return (Py_ssize_t)at;
        }
    }
}

static inline uint64_t *
dir_mask(const Directory *dir, Py_ssize_t at)
{
    return dir->slots + (uint64_t)at * (uint64_t)dir->stride + 2;
}

/* Add an entry for `line`, which has none, with no holder yet; return its slot. */
static Py_ssize_t
dir_add(Directory *dir, uint64_t line, uint8_t state)
{
    uint64_t mask = dir->capacity - 1;
    uint64_t at = dir_home(dir, line);
    while (DIR_STATE(dir, at) != STATE_NONE) {
        at = (at + 1) & mask;
    }
    DIR_KEY(dir, at) = line;
    DIR_STATE(dir, at) = state;
    memset(dir_mask(dir, (Py_ssize_t)at), 0, (size_t)dir->words * sizeof(uint64_t));
    dir->count++;
    return (Py_ssize_t)at;
}

/* Remove the entry at `at` (linear probing with backward shifts: no tombstones). */
static void
dir_remove(Directory *dir, Py_ssize_t removed)
{
    uint64_t mask = dir->capacity - 1;
    uint64_t hole = (uint64_t)removed;
    uint64_t next = hole;
    dir->count--;
    for (;;) {
        next = (next + 1) & mask;
        if (DIR_STATE(dir, next) == STATE_NONE) {
            break;
        }
        uint64_t home = dir_home(dir, DIR_KEY(dir, next));
        /* the entry at `next` may fill the hole unless its home lies cyclically in (hole, next] */
        int stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (stays) {
            continue;
        }
        DIR_KEY(dir, hole) = DIR_KEY(dir, next);
        DIR_STATE(dir, hole) = DIR_STATE(dir, next);
        memcpy(dir_mask(dir, (Py_ssize_t)hole), dir_mask(dir, (Py_ssize_t)next),
               (size_t)dir->words * sizeof(uint64_t));
        hole = next;
    }
    DIR_STATE(dir, hole) = STATE_NONE;
}

static int
dir_holder_count(const Directory *dir, Py_ssize_t at)
{
    const uint64_t *mask = dir_mask(dir, at);
    int count = 0;
    for (int word = 0; word < dir->words; word++) {
        count += __builtin_popcountll(mask[word]);
    }
    return count;
}

/* Return the first agent (lowest slot) of a holder bit set, -1 when empty. */
static int
first_agent(const uint64_t *mask, int words)
{
    for (int word = 0; word < words; word++) {
        if (mask[word]) {
            return word * 64 + __builtin_ctzll(mask[word]);
        }
    }
    return -1;
}

/* `del holders[top]`, and the entry with it when no holder is left. */
static void
dir_drop_holder(Directory *dir, Py_ssize_t at, int slot)
{
    uint64_t *mask = dir_mask(dir, at);
    mask[slot / 64] &= ~((uint64_t)1 << (slot % 64));
    for (int word = 0; word < dir->words; word++) {
        if (mask[word]) {
            return;
        }
    }
    dir_remove(dir, at);
}

/* -- the simulation ------------------------------------------------------------------------- */

static inline void
tree_link_at(Tree *self, uint32_t index)
{
    if (self->links[index]++ == 0) {
        self->link_order[self->links_used++] = index;
    }
}

static inline uint32_t
link_index(const Tree *self, int from, int to)
{
    return (uint32_t)((from + 1) * (self->count + 1) + (to + 1));
}

static inline void
tree_link(Tree *self, int from, int to)
{
    tree_link_at(self, link_index(self, from, to));
}

static inline Py_ssize_t
tree_find(Tree *self, int cache, uint64_t line, uint64_t **meta)
{
    Level *level = &self->caches[cache];
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot >= 0) {
        *meta = level->meta + set * level->ways + (uint64_t)slot;
    }
    return slot;
}

/* Remove `line` from `cache` when there; return -1 when absent, else whether it was dirty. */
static inline int
tree_remove(Tree *self, int cache, uint64_t line)
{
    Level *level = &self->caches[cache];
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot < 0) {
        return -1;
    }
    uint64_t base = set * level->ways;
    int dirty = (int)(level->meta[base + (uint64_t)slot] & 1);
    uint32_t last = --level->fill[set];
    level->tags[base + (uint64_t)slot] = level->tags[base + last];
    level->meta[base + (uint64_t)slot] = level->meta[base + last];
    return dirty;
}

static inline int
push_children(Tree *self, int cache, int height)
{
    for (int at = self->child_start[cache]; at < self->child_start[cache + 1]; at++) {
        self->stack[height++] = self->child_list[at];
    }
    return height;
}

/* _receive */
static void
tree_receive(Tree *self, int cache, uint64_t line)
{
    int current = cache;
    while (current >= 0) {
        if (self->write_back[current]) {
            uint64_t *meta;
            if (tree_find(self, current, line, &meta) >= 0) {
                *meta |= 1;
            }
            return;
        }
        self->writebacks[current]++;
        int parent = self->parent[current];
        tree_link(self, current, parent);
        current = parent;
    }
    self->memory_writes++;
}

/* _evict */
static void
tree_evict(Tree *self, int cache, uint64_t victim, int dirty)
{
    int role = self->role[cache];
    int height = 0;
    int walk_children = 1;
    if (role == ROLE_AGENT_TOP) {
        Py_ssize_t at = dir_find(&self->dir, victim);
        if (at >= 0) {
            dir_drop_holder(&self->dir, at, self->agent_slot[cache]);
        }
    }
    else if (role == ROLE_DIRECTORY_SIDE) {
        Py_ssize_t at = dir_find(&self->dir, victim);
        if (at >= 0) {
            int lost = dir_holder_count(&self->dir, at);
            self->messages[MSG_INVAL] += (uint64_t)lost;
            self->messages[MSG_INVAL_ACK] += (uint64_t)lost;
            if (cache == self->directory) {
                /* The directory is exact: only the agents it lists hold copies. */
                const uint64_t *mask = dir_mask(&self->dir, at);
                for (int agent = 0; agent < self->agents; agent++) {
                    if (mask[agent / 64] >> (agent % 64) & 1) {
                        self->stack[height++] = self->agent_tops[agent];
                    }
                }
                walk_children = 0;
            }
            dir_remove(&self->dir, at);
        }
        else if (cache == self->directory) {
            walk_children = 0;
        }
    }
    if (walk_children) {
        height = push_children(self, cache, height);
    }
    while (height > 0) {
        int inner = self->stack[--height];
        int was_dirty = tree_remove(self, inner, victim);
        if (was_dirty < 0) {
            continue;
        }
        self->invalidations[inner]++;
        if (was_dirty) {
            self->writebacks[inner]++;
            tree_link(self, inner, cache);
            dirty = 1;
        }
        height = push_children(self, inner, height);
    }
    if (role == ROLE_AGENT_TOP) {
        self->messages[dirty ? MSG_WRITE_BACK : MSG_CLEAN_WRITE_BACK]++;
    }
    if (dirty) {
        self->writebacks[cache]++;
        int parent = self->parent[cache];
        tree_link(self, cache, parent);
        if (parent < 0) {
            self->memory_writes++;
        }
        else {
            tree_receive(self, parent, victim);
        }
    }
}

/* _install_down: install `line` in path[start], ..., path[stop], outermost first. */
static void
tree_install_down(Tree *self, const int *path, int start, int stop, int source, uint64_t line,
                  int dirty_first)
{
    uint64_t dirty = dirty_first ? 1 : 0;
    for (int position = start; position >= stop; position--) {
        int cache = path[position];
        tree_link(self, source, cache);
        Level *level = &self->caches[cache];
        uint64_t set = set_of(level, line);
        uint64_t base = set * level->ways;
        uint64_t *tags = level->tags + base;
        uint64_t *meta = level->meta + base;
        uint32_t count = level->fill[set];
        uint32_t slot;
        if (count >= level->ways) {
            slot = lru_slot(meta, count);
            self->evictions[cache]++;
            int victim_dirty = (int)(meta[slot] & 1);
            /* A clean victim of a childless plain cache needs nothing more. The eviction
             * touches other caches only, so the slot is still the victim's afterwards. */
            if (victim_dirty || self->evict_duty[cache]) {
                tree_evict(self, cache, tags[slot], victim_dirty);
            }
        }
        else {
            slot = count;
            level->fill[set] = count + 1;
        }
        tags[slot] = line;
        meta[slot] = (++self->clock << 1) | dirty;
        dirty = 0;
        source = cache;
    }
}

/* _agent_copies: invalidate (or clean) every copy of `line` in the agent under `top`; return
 * whether one was dirty and set *probe to the owner's probe latency. */
static int
tree_agent_copies(Tree *self, int top, uint64_t line, int invalidate, int into, double *probe)
{
    int dirty = 0;
    double slowest = 0.0;
    int height = 0;
    self->stack[height++] = top;
    while (height > 0) {
        int cache = self->stack[--height];
        uint64_t *meta;
        if (tree_find(self, cache, line, &meta) < 0) {
            continue;
        }
        if (self->top_depth[cache] > slowest) { /* max(probe, top_depth[cache]) */
            slowest = self->top_depth[cache];
        }
        int was_dirty;
        if (invalidate) {
            self->invalidations[cache]++;
            was_dirty = tree_remove(self, cache, line);
        }
        else {
            was_dirty = (int)(*meta & 1);
            *meta &= ~(uint64_t)1;
        }
        if (was_dirty) {
            dirty = 1;
            if (into != NO_TARGET) {
                self->writebacks[cache]++;
                tree_link(self, cache, into);
            }
        }
        height = push_children(self, cache, height);
    }
    *probe = slowest;
    return dirty;
}

/* _invalidate_sharer */
static double
tree_invalidate_sharer(Tree *self, int top, uint64_t line)
{
    self->messages[MSG_INVAL]++;
    self->messages[MSG_INVAL_ACK]++;
    int directory = self->parent[top];
    double probe;
    if (tree_agent_copies(self, top, line, 1, directory, &probe)) {
        tree_receive(self, directory, line);
    }
    Py_ssize_t at = dir_find(&self->dir, line);
    if (at >= 0) {
        dir_drop_holder(&self->dir, at, self->agent_slot[top]);
    }
    return probe;
}

/* _upgrade */
static double
tree_upgrade(Tree *self, const int *path, int served, int top_position, uint64_t line)
{
    int agent = path[top_position];
    int agent_slot = self->agent_slot[agent];
    self->messages[MSG_UPGRADE]++;
    self->messages[MSG_UPGRADE_ACK]++;
    Py_ssize_t at = dir_find(&self->dir, line);
    int words = self->dir.words;
    memcpy(self->sharers, dir_mask(&self->dir, at), (size_t)words * sizeof(uint64_t));
    self->sharers[agent_slot / 64] &= ~((uint64_t)1 << (agent_slot % 64));
    for (int other = 0; other < self->agents; other++) {
        if (self->sharers[other / 64] >> (other % 64) & 1) {
            tree_invalidate_sharer(self, self->agent_tops[other], line);
        }
    }
    at = dir_find(&self->dir, line); /* the agent still holds it */
    uint64_t *mask = dir_mask(&self->dir, at);
    memset(mask, 0, (size_t)words * sizeof(uint64_t));
    mask[agent_slot / 64] = (uint64_t)1 << (agent_slot % 64);
    DIR_STATE(&self->dir, at) = STATE_M;
    double extra = 0.0;
    for (int position = served + 1; position <= top_position; position++) {
        extra += self->latency[path[position]];
    }
    return extra + self->latency[path[top_position + 1]];
}

/* _fetch_outwards */
static double
tree_fetch_outwards(Tree *self, const int *path, int length, int start, uint64_t line)
{
    double latency = 0.0;
    int served = length;
    for (int position = start + 1; position < length; position++) {
        int cache = path[position];
        self->accesses[cache]++;
        latency += self->latency[cache];
        uint64_t *meta;
        if (tree_find(self, cache, line, &meta) >= 0) {
            *meta = (++self->clock << 1) | (*meta & 1);
            self->hits[cache]++;
            served = position;
            break;
        }
        self->misses[cache]++;
    }
    int source;
    if (served == length) {
        latency += self->memory_latency;
        self->memory_reads++;
        source = MEMORY;
    }
    else {
        source = path[served];
    }
    tree_install_down(self, path, served - 1, start, source, line, 0);
    return latency;
}

/* _agent_miss */
static double
tree_agent_miss(Tree *self, const int *path, int length, int top_position, uint64_t line,
                int is_write)
{
    int directory = path[top_position + 1];
    int agent = path[top_position];
    self->accesses[directory]++;
    double latency = self->latency[directory];
    uint64_t *meta;
    if (tree_find(self, directory, line, &meta) >= 0) {
        *meta = (++self->clock << 1) | (*meta & 1);
        self->hits[directory]++;
    }
    else {
        /* Inclusion: a line D lacks is held by no agent; D fetches it like a plain cache. */
        self->misses[directory]++;
        latency += tree_fetch_outwards(self, path, length, top_position + 1, line);
    }
    int source = directory;
    int forwarded_dirty = 0;
    int reply;
    uint8_t state;
    self->messages[is_write ? MSG_GETX : MSG_GET]++;
    Py_ssize_t at = dir_find(&self->dir, line);
    if (at < 0) {
        reply = is_write ? MSG_PUTX : MSG_PUTCLNX;
        state = is_write ? STATE_M : STATE_E;
    }
    else if (!is_write) {
        int owner_state = DIR_STATE(&self->dir, at);
        int owner = self->agent_tops[first_agent(dir_mask(&self->dir, at), self->dir.words)];
        state = STATE_S;
        reply = MSG_PUTS;
        if (owner_state != STATE_S) {
            self->messages[MSG_GET_FWD]++;
            self->messages[MSG_DOWNGRADE_ACK]++;
            double probe;
            if (tree_agent_copies(self, owner, line, 0, directory, &probe)) {
                tree_receive(self, directory, line);
            }
            at = dir_find(&self->dir, line);
            DIR_STATE(&self->dir, at) = STATE_S;
            latency += probe;
            source = owner;
        }
    }
    else {
        int owner_state = DIR_STATE(&self->dir, at);
        state = STATE_M;
        if (owner_state != STATE_S) {
            int owner = self->agent_tops[first_agent(dir_mask(&self->dir, at), self->dir.words)];
            self->messages[MSG_GETX_FWD]++;
            self->messages[MSG_GETX_FWD_ACK]++;
            reply = MSG_PUTX;
            double probe;
            forwarded_dirty = tree_agent_copies(self, owner, line, 1, NO_TARGET, &probe);
            latency += probe;
            source = owner;
        }
        else {
            reply = MSG_PUTX_N;
            memcpy(self->sharers, dir_mask(&self->dir, at),
                   (size_t)self->dir.words * sizeof(uint64_t));
            double slowest = 0.0;
            int first = 1;
            for (int other = 0; other < self->agents; other++) {
                if (self->sharers[other / 64] >> (other % 64) & 1) {
                    double probe = tree_invalidate_sharer(self, self->agent_tops[other], line);
                    if (first || probe > slowest) {
                        slowest = probe;
                    }
                    first = 0;
                }
            }
            latency += slowest;
        }
        at = dir_find(&self->dir, line);
        if (at >= 0) {
            dir_remove(&self->dir, at);
        }
    }
    self->messages[reply]++;
    int top_writes_back = self->write_back[agent];
    tree_install_down(self, path, top_position, 0, source, line,
                      forwarded_dirty && top_writes_back);
    if (forwarded_dirty && !top_writes_back) {
        tree_receive(self, agent, line); /* a write-through top passes the dirty line to D */
    }
    at = dir_find(&self->dir, line);
    if (at < 0) {
        at = dir_add(&self->dir, line, state);
    }
    int slot = self->agent_slot[agent];
    dir_mask(&self->dir, at)[slot / 64] |= (uint64_t)1 << (slot % 64);
    DIR_STATE(&self->dir, at) = state;
    return latency;
}

/* -- the chain ------------------------------------------------------------------------------ */

/* A chain is a tree whose one leaf's path holds every cache, each writing back, with no
 * directory: each cache has one child at most, the cache before it in the path. The functions
 * below are _evict, _install_down and _access for such a tree, walking the path by position
 * where the tree's walk goes through the children's lists and a stack; they make the same
 * changes and count the same things in the same order (the reference's own, unspecialised
 * code, and the tree's functions above, serve every other tree). */

/* _evict of a victim leaving the cache at `position` of a chain's path. */
static void
chain_evict(Tree *self, const int *path, int length, int position, uint64_t victim, int dirty)
{
    int cache = path[position];
    /* The children's walk: the copies inside, innermost last; a cache without the line holds
     * none inside it (inclusion), so the walk stops there, as the tree's does. */
    for (int inner = position - 1; inner >= 0; inner--) {
        int was_dirty = tree_remove(self, path[inner], victim);
        if (was_dirty < 0) {
            break;
        }
        self->invalidations[path[inner]]++;
        if (was_dirty) {
            self->writebacks[path[inner]]++;
            tree_link(self, path[inner], cache);
            dirty = 1;
        }
    }
    if (dirty) {
        self->writebacks[cache]++;
        tree_link_at(self, self->chain_links[2 * position + 1]);
        if (position + 1 < length) {
            int parent = path[position + 1];
            uint64_t *meta; /* _receive: the parent writes back, so it keeps the line */
            if (tree_find(self, parent, victim, &meta) >= 0) {
                *meta |= 1;
            }
        }
        else {
            self->memory_writes++;
        }
    }
}

/* _install_down on a chain: install `line` at positions start, ..., 0, outermost first, each
 * from the position after it (or memory); return the leaf's meta word. */
static uint64_t *
chain_install_down(Tree *self, const int *path, int length, int start, uint64_t line)
{
    uint64_t *meta = NULL;
    for (int position = start; position >= 0; position--) {
        int cache = path[position];
        tree_link_at(self, self->chain_links[2 * position]);
        Level *level = &self->caches[cache];
        uint64_t set = set_of(level, line);
        uint64_t base = set * level->ways;
        uint64_t *tags = level->tags + base;
        meta = level->meta + base;
        uint32_t count = level->fill[set];
        uint32_t slot;
        if (count >= level->ways) {
            slot = lru_slot(meta, count);
            self->evictions[cache]++;
            int victim_dirty = (int)(meta[slot] & 1);
            if (victim_dirty || position > 0) { /* position 0, the leaf, has no child */
                chain_evict(self, path, length, position, tags[slot], victim_dirty);
            }
        }
        else {
            slot = count;
            level->fill[set] = count + 1;
        }
        tags[slot] = line;
        meta += slot;
        *meta = ++self->clock << 1;
    }
    return meta;
}

/* _access on a chain (the non-coherent case of tree_access) whose caches before position
 * `first` are known not to hold the line; return the serving position, the path's length for
 * memory. */
static int
chain_access(Tree *self, uint64_t line, int is_write, int first)
{
    self->access_count++;
    const int *path = self->path_list;
    int length = self->path_start[1];
    int served = length;
    uint64_t *meta = NULL;
    for (int position = 0; position < first; position++) { /* known to miss */
        self->accesses[path[position]]++;
        self->misses[path[position]]++;
    }
    for (int position = first; position < length; position++) {
        int cache = path[position];
        self->accesses[cache]++;
        if (tree_find(self, cache, line, &meta) >= 0) {
            *meta = (++self->clock << 1) | (*meta & 1);
            self->hits[cache]++;
            served = position;
            break;
        }
        self->misses[cache]++;
    }
    double latency = self->path_latency[served < length ? served : length - 1];
    if (served == length) {
        latency += self->memory_latency;
        self->memory_reads++;
        meta = chain_install_down(self, path, length, length - 1, line);
    }
    else if (served) {
        meta = chain_install_down(self, path, length, served - 1, line);
    }
    if (is_write) {
        *meta |= 1; /* _receive at the leaf, which writes back: its copy, installed last */
    }
    self->latency_sum += latency;
    return served;
}

/* _access: one access entering at leaf number `leaf` (everything but the fast-path hits);
 * return the position in the leaf's path of the cache that served it, or the path's length
 * when every cache it probed missed (for a chain: the level index, depth for memory, that
 * `Hierarchy.access` returns). */
static int
tree_access(Tree *self, int leaf, uint64_t line, int is_write)
{
    if (self->chain) {
        return chain_access(self, line, is_write, 0);
    }
    self->access_count++;
    const int *path = self->path_list + self->path_start[leaf];
    int length = self->path_start[leaf + 1] - self->path_start[leaf];
    int top_position = self->top_position[leaf];
    int coherent = top_position >= 0;
    int limit = coherent ? top_position + 1 : length;
    int served = limit;
    for (int position = 0; position < limit; position++) {
        int cache = path[position];
        self->accesses[cache]++;
        uint64_t *meta;
        if (tree_find(self, cache, line, &meta) >= 0) {
            *meta = (++self->clock << 1) | (*meta & 1);
            self->hits[cache]++;
            served = position;
            break;
        }
        self->misses[cache]++;
    }
    /* the probes' latencies, added in the same order as the reference adds them one by one */
    int probed = served < limit ? served : limit - 1;
    double latency = self->path_latency[self->path_start[leaf] + probed];
    if (!coherent) {
        if (served == limit) {
            latency += self->memory_latency;
            self->memory_reads++;
            tree_install_down(self, path, served - 1, 0, MEMORY, line, 0);
        }
        else if (served) {
            tree_install_down(self, path, served - 1, 0, path[served], line, 0);
        }
    }
    else if (served < limit) {
        if (is_write) {
            Py_ssize_t at = dir_find(&self->dir, line);
            if (at >= 0) {
                if (DIR_STATE(&self->dir, at) == STATE_S) {
                    latency += tree_upgrade(self, path, served, top_position, line);
                }
                else {
                    DIR_STATE(&self->dir, at) = STATE_M;
                }
            }
        }
        if (served) {
            tree_install_down(self, path, served - 1, 0, path[served], line, 0);
        }
    }
    else {
        latency += tree_agent_miss(self, path, length, top_position, line, is_write);
    }
    if (is_write) {
        tree_receive(self, path[0], line);
    }
    self->latency_sum += latency;
    return served < limit ? served : length;
}

/* One run's view of its leaf: the reference's `run` locals and its count of fast hits. */
typedef struct {
    int leaf;  /* leaf number */
    int cache; /* the leaf cache */
    const int *path;
    int length;
    Level *level;
    int writes_in_place;
    int agent;
    uint64_t fast_hits;
} LeafRun;

/* The reference's `run` loop body for an access whose address is an exact non-negative int:
 * a leaf hit that needs no coherence action touches one set, else `_access`. */
static inline void
tree_step(Tree *self, LeafRun *run, uint64_t line, int is_write)
{
    Level *level = run->level;
    uint64_t set = set_of(level, line);
    Py_ssize_t slot = find(level, set, line);
    if (slot >= 0) {
        uint64_t *meta = level->meta + set * level->ways + (uint64_t)slot;
        if (!is_write) {
            *meta = (++self->clock << 1) | (*meta & 1);
            run->fast_hits++;
            return;
        }
        if (run->writes_in_place) {
            if (run->agent < 0) {
                *meta = (++self->clock << 1) | 1;
                run->fast_hits++;
                return;
            }
            Py_ssize_t at = dir_find(&self->dir, line);
            if (at >= 0 && DIR_STATE(&self->dir, at) != STATE_S) {
                DIR_STATE(&self->dir, at) = STATE_M;
                *meta = (++self->clock << 1) | 1;
                run->fast_hits++;
                return;
            }
        }
    }
    if (slot < 0 && self->chain) {
        chain_access(self, line, is_write, 1); /* the leaf has just missed */
        return;
    }
    tree_access(self, run->leaf, line, is_write);
}

/* Ask the host to fetch the sets and the directory entry an access of `line` will look at:
 * a random trace misses the host's caches at every level, and a bulk run knows its next
 * addresses. Changes nothing simulated. */
#define PREFETCH_DISTANCE 8
/* A cache of fewer lines has at most 32 KiB of tags, which the host's own caches keep close
 * anyway: it is not prefetched, as the prefetch would cost more than it saves. */
#define PREFETCH_MIN_LINES 4096

static inline void
tree_prefetch(Tree *self, const LeafRun *run, uint64_t line)
{
    for (int position = 0; position < run->length; position++) {
        const Level *level = &self->caches[run->path[position]];
        if (level->sets * level->ways < PREFETCH_MIN_LINES) {
            continue;
        }
        uint64_t base = set_of(level, line) * level->ways;
        __builtin_prefetch(level->tags + base);
        __builtin_prefetch(level->meta + base);
    }
    if (run->agent >= 0) {
        __builtin_prefetch(&DIR_KEY(&self->dir, dir_home(&self->dir, line)));
    }
}

/* _flush_line */
static void
tree_flush_line(Tree *self, const int *private_path, int length, uint64_t line)
{
    int outermost = private_path[length - 1];
    int dirty = 0;
    for (int position = 0; position < length; position++) {
        int cache = private_path[position];
        int was_dirty = tree_remove(self, cache, line);
        if (was_dirty < 0) {
            continue;
        }
        self->invalidations[cache]++;
        if (was_dirty) {
            dirty = 1;
            /* The outermost private copy's write-back is counted on its way out. */
            if (cache != outermost) {
                self->writebacks[cache]++;
                tree_link(self, cache, outermost);
            }
        }
    }
    if (self->role[outermost] == ROLE_AGENT_TOP) {
        Py_ssize_t at = dir_find(&self->dir, line);
        if (at >= 0) {
            dir_drop_holder(&self->dir, at, self->agent_slot[outermost]);
        }
        self->messages[dirty ? MSG_WRITE_BACK : MSG_CLEAN_WRITE_BACK]++;
    }
    if (!dirty) {
        return;
    }
    double latency = self->memory_latency;
    int current = outermost;
    while (current >= 0) {
        if (current != outermost) {
            uint64_t *meta;
            if (tree_find(self, current, line, &meta) >= 0) {
                *meta &= ~(uint64_t)1;
            }
        }
        latency += self->latency[current];
        self->writebacks[current]++;
        int parent = self->parent[current];
        tree_link(self, current, parent);
        current = parent;
    }
    self->memory_writes++;
    self->latency_sum += latency;
}

/* flush: every line of the outermost private cache, set by set, least recently used first. */
static void
tree_flush(Tree *self, int leaf)
{
    const int *private_path = self->private_list + self->private_start[leaf];
    int length = self->private_start[leaf + 1] - self->private_start[leaf];
    Level *level = &self->caches[private_path[length - 1]];
    uint64_t *order = self->order;
    for (uint64_t set = 0; set < level->sets; set++) {
        uint32_t count = level->fill[set];
        uint64_t base = set * level->ways;
        for (uint32_t slot = 0; slot < count; slot++) { /* insertion sort by stamp */
            uint64_t stamp = level->meta[base + slot] >> 1;
            uint64_t line = level->tags[base + slot];
            uint32_t at = slot;
            while (at > 0 && order[2 * (at - 1)] > stamp) {
                order[2 * at] = order[2 * (at - 1)];
                order[2 * at + 1] = order[2 * (at - 1) + 1];
                at--;
            }
            order[2 * at] = stamp;
            order[2 * at + 1] = line;
        }
        for (uint32_t slot = 0; slot < count; slot++) {
            tree_flush_line(self, private_path, length, order[2 * slot + 1]);
        }
    }
}
