/* SPDX-License-Identifier: MIT */
/*
 * The device runtime as PTX text, built from the CUDA C in lib/device by nvcc at
 * build time: `.visible .func egpu_dev_<helper>` definitions (map helpers)
 * that translated programs call, to be merged into the instrumented module.
 * It defines no other symbol, so merging it cannot clash with names of the
 * application. Its .target is the lowest nvcc supports (sm_75).
 */
#ifndef EGPU_DEVICE_H
#define EGPU_DEVICE_H

extern const char device_runtime_ptx[];      /* NUL-terminated */
extern const unsigned device_runtime_ptx_len; /* bytes, without the NUL */
/* egpu memcheck's check (memcheck.cu): egpu_dev_mc_find and
 * egpu_dev_mc_window over the variables egpu_dev_mc_* it declares. */
extern const char device_memcheck_ptx[];
extern const unsigned device_memcheck_ptx_len;

#endif
