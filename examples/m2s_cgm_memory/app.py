# Memory work of 002's two kinds of CPU-GPU application on the M2S-CGM processor model.
#
# Launch with labels CPU=8,GPU=1 (eight CPU cores, one GPU) and the variables `workload`,
# `size_kb` (the buffer), `rounds` and `flush`:
#
#   "streaming"      the GPU alone streams `size_kb` KiB in and writes one line per 64 KiB
#                    (a reduction: one partial result per block), no reuse: a
#                    non-collaborative GPU-only kernel (002 section 4.3); the CPU cores idle.
#   "collaborative"  `rounds` rounds of producer-consumer sharing (002 section 4.4): each CPU
#                    core writes its share of a buffer, the GPU reads the whole buffer and
#                    writes a result buffer, each core reads its share of the result.
#
# `flush=1` makes every producer flush its caches before the barrier that hands the data
# over, as software must on a system without coherence (002's non-coherent "NC" runs).
# Addresses are line addresses inside named regions, so CPU and GPU touch the same lines.

LINE = 64
lines = size_kb * 1024 // LINE

if workload == "streaming":
    if tag.equals("GPU"):
        sim.memoryAccess(trace=range(0, lines * LINE, LINE), region="input")
        sim.memoryAccess(trace=range(0, lines // 1024 * LINE, LINE), region="output", writes=True)
else:
    cores = labels["CPU"]
    share = lines // cores
    for _ in range(rounds):
        if tag.equals("CPU"):
            first = rank * share * LINE
            sim.memoryAccess(trace=range(first, first + share * LINE, LINE), region="data", writes=True)
            if flush:
                sim.memoryFlush()
        sim.barrier()
        if tag.equals("GPU"):
            sim.memoryAccess(trace=range(0, lines * LINE, LINE), region="data")
            sim.memoryAccess(trace=range(0, lines * LINE, LINE), region="result", writes=True)
            if flush:
                sim.memoryFlush()
        sim.barrier()
        if tag.equals("CPU"):
            first = rank * share * LINE
            sim.memoryAccess(trace=range(first, first + share * LINE, LINE), region="result")
        sim.barrier()
