/* SPDX-License-Identifier: MIT */
/*
 * py_gil_take (bindings/python/py_thread.c) on threads an embedded Python
 * does not know, as libegpu's consumer and dispatcher threads are: each
 * thread's state is deleted when it ends, with a destructor in it that
 * takes the GIL again (CPython gh-119585's pattern), and a thread that
 * ends after Python did leaves Python alone.
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

/*
 * A library thread's calls: Python code, then an object only its thread
 * state holds (its dict), which goes when the state is cleared.
 */
static void *library_thread(void *arg)
{
	(void)arg;
	for (int call = 0; call < 3; call++) {
		PyGILState_STATE g = py_gil_take();

		ck_assert_int_eq(PyRun_SimpleString("x = sum(range(10))"), 0);
		if (!call) {
			PyObject *c = PyCapsule_New(&deleted, "egpu.test", capsule_gone);

			ck_assert_ptr_nonnull(c);
			ck_assert_int_eq(PyDict_SetItemString(PyThreadState_GetDict(),
							      "egpu.test", c), 0);
			Py_DECREF(c);
		}
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
static int step; /* 1: the thread called Python; 2: Python has ended */

static void *late_thread(void *arg)
{
	PyGILState_STATE g = py_gil_take();

	(void)arg;
	ck_assert_int_eq(PyRun_SimpleString("y = 1"), 0);
	PyGILState_Release(g);
	pthread_mutex_lock(&lock);
	step = 1;
	pthread_cond_broadcast(&cond);
	while (step != 2)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_lock(&lock);
	while (step != 1)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	PyEval_RestoreThread(main_state);
	ck_assert_int_eq(Py_FinalizeEx(), 0);
	pthread_mutex_lock(&lock);
	step = 2;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("python_thread");
	TCase *tc = tcase_create("python_thread");

	tcase_add_test(tc, states_deleted_at_thread_end);
	tcase_add_test(tc, thread_ending_after_python);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
