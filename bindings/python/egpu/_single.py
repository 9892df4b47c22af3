# SPDX-License-Identifier: MIT
"""One instrumentation of a kind at a time (egpu.triton, egpu.jax): both
replace process-wide hooks that cannot be stacked."""
import threading

from ._errors import Busy


class Single:
    """The active instrumentation of one kind, if any."""

    def __init__(self, what):
        self._what = what
        self._lock = threading.Lock()
        self._active = None

    def start(self, inst):
        """Make ``inst`` the active one and install it (``inst._install()``);
        egpu.Busy while another is active. An install that raises is undone."""
        with self._lock:
            if self._active is not None:
                raise Busy(f"{self._what}: another instrumentation is active; "
                           "undo it first")
            self._active = inst
        try:
            inst._install()
        except BaseException:
            inst.undo()
            self.end(inst)
            raise
        return inst

    def end(self, inst):
        """``inst`` is no longer active (idempotent)."""
        with self._lock:
            if self._active is inst:
                self._active = None
