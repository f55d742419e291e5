"""A software prefetch for the lane kernels' gathers: ``prefetch(array, index)`` asks the CPU to bring the cache
line of ``array[index]`` in ahead of its use (LLVM's ``llvm.prefetch``: a hint, no fault on any address, no effect
on any value).

The lane kernels read an item's per-lane counts (a row of 32 or 64 bytes) in each model's order, at random across
an array far larger than the caches at 10^6 items (64 MB for the bootstrap's 64 lanes): each read waits for memory
unless it was asked for some items earlier.  Measured in a scratch loop (32-byte rows of a 32 MB array in random
order, AMD EPYC): 62 ns per row without, 15 ns asking 16 rows ahead.
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic

#: How many items ahead the walks ask for a row (8: 21 ns per row, 16: 15, 32: 21 in the loop above).
PREFETCH_DISTANCE = 16


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch ``array[index]``'s cache line for reading, to every cache level (inside jitted code only)."""
    signature = types.void(array, index)

    def codegen(context, builder, signature, arguments):
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, arguments[0]).data
        byte_pointer = ir.IntType(8).as_pointer()
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer] + [ir.IntType(32)] * 3), "llvm.prefetch.p0")
        address = builder.bitcast(builder.gep(data, [arguments[1]]), byte_pointer)
        read, to_every_level, data_cache = (ir.Constant(ir.IntType(32), v) for v in (0, 3, 1))
        builder.call(function, [address, read, to_every_level, data_cache])
        return context.get_dummy_value()

    return signature, codegen
