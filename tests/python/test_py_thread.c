/* SPDX-License-Identifier: MIT */
/*
 * py_gil_take (bindings/python/py_thread.c) on threads an embedded Python
 * does not know, as libegpu's consumer and dispatcher threads are: each
 * thread's state is deleted when it ends, with a destructor in it that
 * takes the GIL again (CPython gh-119585's pattern), a thread that ends
 * after Python did leaves Python alone, and one that ends under a Python
 * initialized again deletes only the state the new one made.
 */
#include <check.h>
#include <pthread.h>

#include "py_thread.h"
#include "test_util.h"

#define THREADS 8

/* Destructors run, counted under the GIL. */
static int deleted;

/* A C destructor that takes the GIL again, as an extension's may. */
static void capsule_gone(PyObject *capsule)
{
	PyGILState_STATE g = PyGILState_Ensure();

	(void)capsule;
	deleted++;
	PyGILState_Release(g);
}

/* An object only this thread's state holds (its dict), which goes, with
 * capsule_gone, when the state is cleared (GIL held). */
static void hold_capsule(void)
{
	PyObject *c = PyCapsule_New(&deleted, "egpu.test", capsule_gone);

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(PyDict_SetItemString(PyThreadState_GetDict(),
					      "egpu.test", c), 0);
	Py_DECREF(c);
}

/* A library thread's calls: Python code, and a capsule in its state. */
static void *library_thread(void *arg)
{
	(void)arg;
	for (int call = 0; call < 3; call++) {
		PyGILState_STATE g = py_gil_take();

		ck_assert_int_eq(PyRun_SimpleString("x = sum(range(10))"), 0);
		if (!call)
			hold_capsule();
		PyGILState_Release(g);
	}
	return NULL;
}

static void run_threads(int n, bool together)
{
	pthread_t t[THREADS];

	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(pthread_create(&t[i], NULL, library_thread, NULL), 0);
		if (!together)
			ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	}
	for (int i = 0; together && i < n; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
}

/* Every thread's state deleted at its end, its dict's objects with it. */
START_TEST(states_deleted_at_thread_end)
{
	PyThreadState *main_state;
	int seen;

	Py_Initialize();
	main_state = PyEval_SaveThread();
	run_threads(THREADS, false);
	run_threads(THREADS, true);
	PyEval_RestoreThread(main_state);
	seen = deleted;
	ck_assert_int_eq(Py_FinalizeEx(), 0);
	ck_assert_int_eq(seen, 2 * THREADS);
}
END_TEST

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int step; /* how far a test is: each says */

static void wait_step(int n)
{
	pthread_mutex_lock(&lock);
	while (step != n)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void set_step(int n)
{
	pthread_mutex_lock(&lock);
	step = n;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

/* 1: the thread called Python; 2: Python has ended. */
static void *late_thread(void *arg)
{
	PyGILState_STATE g = py_gil_take();

	(void)arg;
	ck_assert_int_eq(PyRun_SimpleString("y = 1"), 0);
	PyGILState_Release(g);
	set_step(1);
	wait_step(2);
	return NULL; /* its state was Python's to free */
}

/* A thread that ends after Python does not touch it. */
START_TEST(thread_ending_after_python)
{
	PyThreadState *main_state;
	pthread_t t;

	Py_Initialize();
	main_state = PyEval_SaveThread();
	ck_assert_int_eq(pthread_create(&t, NULL, late_thread, NULL), 0);
	wait_step(1);
	PyEval_RestoreThread(main_state);
	ck_assert_int_eq(Py_FinalizeEx(), 0);
	set_step(2);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}
END_TEST

/* 1, 3: the thread called the first, the second Python; 2: the second
 * runs; 4: the thread may end. */
static void *restarted_thread(void *arg)
{
	(void)arg;
	for (int life = 1; life <= 2; life++) {
		PyGILState_STATE g = py_gil_take();

		ck_assert_int_eq(PyRun_SimpleString("z = 2"), 0);
		if (life == 2)
			hold_capsule();
		PyGILState_Release(g);
		set_step(2 * life - 1);
		wait_step(2 * life);
	}
	return NULL;
}

/*
 * A thread that called one Python, then, after Py_FinalizeEx and
 * Py_Initialize, the next, ends while the second runs: the first's state
 * (freed with it) is left alone (ASan sees a use of it), the second's
 * deleted, its dict with it.
 */
START_TEST(thread_ending_under_python_initialized_again)
{
	PyThreadState *main_state;
	pthread_t t;
	int seen = deleted;

	Py_Initialize();
	main_state = PyEval_SaveThread();
	ck_assert_int_eq(pthread_create(&t, NULL, restarted_thread, NULL), 0);
	wait_step(1);
	PyEval_RestoreThread(main_state);
	ck_assert_int_eq(Py_FinalizeEx(), 0);
	Py_Initialize();
	main_state = PyEval_SaveThread();
	set_step(2);
	wait_step(3);
	set_step(4);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	PyEval_RestoreThread(main_state);
	ck_assert_int_eq(deleted, seen + 1); /* the second state's dict */
	ck_assert_int_eq(PyRun_SimpleString("assert z == 2"), 0);
	ck_assert_int_eq(Py_FinalizeEx(), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("python_thread");
	TCase *tc = tcase_create("python_thread");

	tcase_add_test(tc, states_deleted_at_thread_end);
	tcase_add_test(tc, thread_ending_after_python);
	tcase_add_test(tc, thread_ending_under_python_initialized_again);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
