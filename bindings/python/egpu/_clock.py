# SPDX-License-Identifier: MIT
"""Clock calibration: GPU %globaltimer readings on the host's clock.

    clk = ctx.clock_sync()                  # measure now (ctx.clock(): the last)
    host_ns = clk.gpu_to_host(gpu_ns)       # a probe's bpf_ktime_get_ns()
    # ... within clk.error_ns of time.monotonic_ns() at that moment

See docs/clock.md. Needs a GPU: an offline context raises InvalidArgument,
a machine without a GPU NoDevice.
"""

from dataclasses import dataclass

from . import _egpu as _c
from ._errors import InvalidArgument

_U64 = 1 << 64


@dataclass(frozen=True)
class Clock:
    """A calibration of the GPU's %globaltimer against CLOCK_MONOTONIC
    (struct egpu_clock)."""
    offset_ns: int      # %globaltimer minus CLOCK_MONOTONIC
    error_ns: int       # bound on the mapping's error when measured
    host_ns: int        # CLOCK_MONOTONIC at the measurement
    round_trip_ns: int  # host -> GPU -> host time of the round kept
    step_ns: int        # update step of %globaltimer the GPU saw
    rounds: int         # rounds answered; the shortest is kept

    def gpu_to_host(self, gpu_ns):
        """Host time (CLOCK_MONOTONIC ns, as time.monotonic_ns()) of GPU
        timer reading ``gpu_ns``: gpu_ns - offset_ns, clamped to
        [0, 2**64 - 1] (egpu_clock_gpu_to_host)."""
        if not 0 <= gpu_ns < _U64:
            raise InvalidArgument(f"gpu_ns {gpu_ns}: a GPU timer reading is "
                                  f"an unsigned 64-bit number")
        return _c.clock_gpu_to_host(self.offset_ns, gpu_ns)
