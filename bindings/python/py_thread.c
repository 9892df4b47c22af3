/* SPDX-License-Identifier: MIT */
/*
 * A thread Python does not know keeps one thread state from its first
 * call to its end, when it is deleted: PyGILState_Ensure would otherwise
 * make and clear one for every call, 16 K of them for a kernel's helper
 * calls, and Python 3.12.3 (Ubuntu 24.04) can crash clearing one whose
 * destructors take the GIL (CPython gh-119585).
 */
#include "py_thread.h"

#include <stdbool.h>
#include <stdlib.h>

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
 * Python's lifetimes in this process: one more each time it finalizes
 * (Py_AtExit, registered again in each lifetime), so that a thread whose
 * state an earlier Python made, which a Py_FinalizeEx freed, never touches
 * it when it ends under a Python initialized again. Written under the GIL
 * or by the finalizing thread; a thread's end reads it without the GIL.
 */
static unsigned long py_lifetime;
static bool py_watched; /* Py_AtExit made in this lifetime */

static void py_finalized(void)
{
	__atomic_add_fetch(&py_lifetime, 1, __ATOMIC_RELEASE);
	py_watched = false;
}

/* What a thread keeps until its end: its state, and whose it is. */
struct py_kept {
	PyThreadState *state;
	unsigned long lifetime;
};

/*
 * At the thread's end: the state takes the GIL, is cleared with its count
 * still 1, so that a destructor's PyGILState_Ensure and Release (Python's
 * key still names the state) cannot delete it under us, then deleted.
 * Once the Python that made it is finalizing or gone, the state is
 * Python's to free (or freed already).
 */
static void py_thread_end(void *arg)
{
	struct py_kept *k = arg;

	if (Py_IsInitialized() &&
	    k->lifetime == __atomic_load_n(&py_lifetime, __ATOMIC_ACQUIRE)) {
		PyEval_RestoreThread(k->state);
		PyThreadState_Clear(k->state);
		PyThreadState_DeleteCurrent();
	}
	free(k);
}

/*
 * The thread's state made and kept (GIL held): deleted at its end. Where
 * memory or Python's 32 exit functions run out, the state is left as
 * PyGILState_Release leaves it: deleted now, made again at the next call.
 */
static void py_keep_state(void)
{
	struct py_kept *k = malloc(sizeof(*k));

	if (!py_watched && !Py_AtExit(py_finalized))
		py_watched = true;
	if (!k || !py_watched)
		goto not_kept;
	k->lifetime = __atomic_load_n(&py_lifetime, __ATOMIC_RELAXED);
	k->state = PyEval_SaveThread();
	if (!__cxa_thread_atexit_impl(py_thread_end, k, &__dso_handle))
		return;
	PyEval_RestoreThread(k->state);
not_kept:
	free(k);
	PyGILState_Release(PyGILState_UNLOCKED);
}

PyGILState_STATE py_gil_take(void)
{
	if (!PyGILState_GetThisThreadState()) {
		PyGILState_Ensure(); /* the state, kept: its count stays 1 */
		py_keep_state();
	}
	return PyGILState_Ensure();
}
