/* SPDX-License-Identifier: MIT */
/*
 * The GIL for threads Python does not know: libegpu's own (a ring's
 * consumer threads, the helper dispatcher), which call Python's callables.
 */
#ifndef EGPU_PY_THREAD_H
#define EGPU_PY_THREAD_H

#include <Python.h>

/*
 * PyGILState_Ensure() for any thread, released with PyGILState_Release().
 * A thread Python does not know keeps the state its first call makes
 * until it ends (py_thread.c says why and how it is deleted).
 */
PyGILState_STATE py_gil_take(void);

#endif
