/* SPDX-License-Identifier: MIT */
/*
 * libegpu_attach.so: probes in every kernel an unmodified CUDA application
 * loads (docs/attach.md). hook.c intercepts the driver's module loaders;
 * agent.c instruments what they are given; report.c prints what the
 * probes saw.
 */
#ifndef EGPU_ATTACH_H
#define EGPU_ATTACH_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include "egpu.h"

#define ATTACH_MSG "egpu attach: "

/* One module load going through the agent. */
struct attach_load {
	char *ptx;        /* instrumented PTX to load instead, or NULL */
	double t_load_ms; /* when the driver was given it */
	bool owned;       /* ptx is ours to free (not the cache's) */
};

/*
 * Start a load of @image (@len 0: unknown) that reached the driver's @via:
 * ld->ptx is what to load instead, NULL to load @image unchanged (no
 * probe, SASS only, or instrumenting failed: each reported at exit).
 */
void agent_begin(const void *image, size_t len, const char *via,
		 struct attach_load *ld);
/*
 * The driver's answer (@ok) for ld->ptx. false: the caller loads the
 * original image instead (the failure is reported).
 */
void agent_end(struct attach_load *ld, bool ok, int cuda_err);

/* Whether the calling thread is inside libegpu (its own loads pass). */
bool agent_busy(void);
/* Mark the calling thread inside libegpu; returns what agent_leave()
 * restores (calls nest). */
bool agent_enter(void);
void agent_leave(bool was);
/* The driver's own function @name (hook.c), NULL without a driver. */
void *attach_driver_sym(const char *name);

/* Settings from the environment (EGPU_ATTACH*). */
struct attach_env {
	const char *probe;    /* EGPU_ATTACH: the eBPF object */
	const char *out;      /* EGPU_ATTACH_OUT: report file, NULL: stderr */
	bool json;            /* EGPU_ATTACH_JSON=1 */
	double interval;      /* EGPU_ATTACH_INTERVAL seconds, 0: at exit only */
	const char *metrics;  /* EGPU_ATTACH_METRICS=[HOST]:PORT: serve maps */
	const char *metrics_spec; /* EGPU_ATTACH_METRICS_SPEC: MAP=KIND[/KEY],... */
	bool verbose;         /* EGPU_ATTACH_VERBOSE=1: each load on stderr */
};

/* The kernels instrumented so far, for the report. */
struct attach_kernel {
	char *name;
	char *demangled;
	uint32_t id;
};

/* What the agent did, for the report. */
struct attach_stats {
	unsigned modules;        /* loads seen */
	unsigned instrumented;   /* loaded with probes */
	unsigned cache_hits;     /* of those, instrumented before */
	unsigned failed;         /* instrumenting or its load failed */
	double instrument_ms;    /* in libegpu */
	double load_ms;          /* in the driver, loads of instrumented PTX */
	struct attach_kernel *kernels;
	size_t nkernels;
	char **sass_only;        /* "VIA: SASS for sm_90" per module */
	size_t nsass_only;
};

/* Print maps (and, @final, the whole report) to @f. */
void report_print(FILE *f, egpu_obj *obj, const struct attach_stats *st,
		  bool json, bool final);

#endif
