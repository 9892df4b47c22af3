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
/* agent_begin()'s @via for modules the application's own ptxas assembles
 * (ptxas.c serves the stand-in `egpu attach` put on its PATH) */
#define ATTACH_VIA_PTXAS "ptxas"

/* One module load going through the agent. */
struct attach_load {
	char *ptx;        /* instrumented PTX to load instead, or NULL */
	void *cubin;      /* agent_link()'s: ptx linked, to load instead */
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
 * After agent_begin(): where ld->ptx is a traced module whose sites call
 * the device runtime, ld->cubin is it linked with the runtime compiled
 * apart (egpu_ptx_link()), the application's JIT options (@n of them: a
 * CUjit_option array @keys, @vals) given to the linker; else (or where
 * that fails, with a warning) NULL, and ld->ptx loads as one module.
 */
void agent_link(struct attach_load *ld, unsigned n, const void *keys,
		void *const *vals);
/* What to load for ld->ptx: its linked cubin, else the PTX itself. */
static inline const void *agent_image(const struct attach_load *ld)
{
	return ld->cubin ? ld->cubin : (const void *)ld->ptx;
}
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
/* The device's target ("sm_90"), once the first load set the agent up. */
const char *agent_target(void);

/* Settings from the environment (EGPU_ATTACH*). */
struct attach_env {
	const char *probe;    /* EGPU_ATTACH: the eBPF object */
	const char *out;      /* EGPU_ATTACH_OUT: report file, NULL: stderr */
	bool json;            /* EGPU_ATTACH_JSON=1 */
	double interval;      /* EGPU_ATTACH_INTERVAL seconds, 0: at exit only */
	const char *metrics;  /* EGPU_ATTACH_METRICS=[HOST]:PORT: serve maps */
	const char *metrics_spec; /* EGPU_ATTACH_METRICS_SPEC: MAP=KIND[/KEY],... */
	bool verbose;         /* EGPU_ATTACH_VERBOSE=1: each load on stderr */
	const char *events_out;  /* EGPU_ATTACH_EVENTS_OUT: events file, "-": stdout */
	const char *events_raw;  /* EGPU_ATTACH_EVENTS_RAW: records raw to FILE */
	const char *event_types; /* EGPU_ATTACH_EVENT_TYPES: MAP=TYPE,... */
	const char *set;         /* EGPU_ATTACH_SET: MAP[KEY]=VALUE lines */
	const char *set_file;    /* EGPU_ATTACH_SET_FILE: JSON of map entries */
	const char *trace;       /* EGPU_ATTACH_TRACE: the ring streamed there */
};

/*
 * events.c: consumers of every ring map of @obj, printing each record
 * (or writing it raw) as @env says; -1 with a message when a ring cannot
 * be consumed or an --event-type names no type.
 */
int events_start(egpu_obj *obj, const struct attach_env *env);
/* Consume what the rings hold now (the poll thread, under the lock). */
void events_poll(void);
/* The last records, then each ring's records and drops; at exit. */
void events_stop(void);

/* seed.c: store EGPU_ATTACH_SET and EGPU_ATTACH_SET_FILE; -1 with a
 * message naming the bad entry. */
int seed_maps(egpu_obj *obj, const struct attach_env *env);

/* trace_file.c: the probe's ring streamed to a record file, then a line
 * on @report (the records, bytes, rate, drops) at the process's exit. */
int trace_file_start(egpu_obj *obj, const char *path);
void trace_file_stop(FILE *report);

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
	unsigned ptxas_compiles; /* the application's own ptxas runs (ATTACH_VIA_PTXAS) */
};


/* Print maps (and, @final, the whole report) to @f. */
void report_print(FILE *f, egpu_obj *obj, const struct attach_stats *st,
		  bool json, bool final);

#endif
