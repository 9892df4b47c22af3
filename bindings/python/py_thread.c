/* SPDX-License-Identifier: MIT */
/*
 * A thread Python does not know keeps one thread state from its first
 * call to its end, when it is deleted: PyGILState_Ensure would otherwise
 * make and clear one for every call, 16 K of them for a kernel's helper
 * calls, and Python 3.12.3 (Ubuntu 24.04) can crash clearing one whose
 * destructors take the GIL (CPython gh-119585).
 */
#include "py_thread.h"

/*
 * glibc's registration of a thread_local object's destructor (C++'s):
 * these run when the thread ends, before any thread-specific key's
 * destructor, and glibc empties the keys (Python's own among them, which
 * says which state is the thread's) before it runs theirs.
 */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj,
				    void *dso);
extern void *__dso_handle;

/*
 * At the thread's end: the state takes the GIL, is cleared with its count
 * still 1, so that a destructor's PyGILState_Ensure and Release (Python's
 * key still names the state) cannot delete it under us, then deleted.
 * Once Python is finalizing, the state is Python's to free.
 */
static void py_thread_end(void *state)
{
	if (!Py_IsInitialized())
		return;
	PyEval_RestoreThread(state);
	PyThreadState_Clear(state);
	PyThreadState_DeleteCurrent();
}

PyGILState_STATE py_gil_take(void)
{
	if (!PyGILState_GetThisThreadState()) {
		PyGILState_Ensure(); /* the state, kept: its count stays 1 */
		__cxa_thread_atexit_impl(py_thread_end, PyEval_SaveThread(),
					 &__dso_handle);
	}
	return PyGILState_Ensure();
}
