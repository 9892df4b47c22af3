/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' shared entry point: each fuzz_<input>.c defines
 * LLVMFuzzerTestOneInput. Built with libFuzzer (EGPU_FUZZ, clang) they
 * explore; built with replay.c (every build) they run the checked-in
 * corpus and the crashes found so far as a regression test.
 */
#ifndef EGPU_FUZZ_H
#define EGPU_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
