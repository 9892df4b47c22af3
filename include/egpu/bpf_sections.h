/* SPDX-License-Identifier: MIT */
/*
 * Where a program runs, named by its ELF section:
 *
 *	GPU_ENTRY("vectorAdd")  is SEC("gpu/entry/vectorAdd"): at kernel entry
 *	GPU_EXIT("_Z9vecAdd*")  is SEC("gpu/exit/_Z9vecAdd*"): at every ret/exit
 *	GPU_MEM("vectorAdd")    is SEC("gpu/mem/vectorAdd"): before each access
 *
 * The kernel is a name (mangled or not) or a glob; it may not be empty:
 * GPU_ALL_KERNELS ("*") names every kernel.
 * bpftime's SEC("kprobe/K"), SEC("kretprobe/K") and
 * SEC("kprobe/__memcapture") mean the same as entry, exit and mem (all
 * kernels). Any other section loads a program that is only run directly.
 */
#ifndef EGPU_BPF_SECTIONS_H
#define EGPU_BPF_SECTIONS_H

#ifndef SEC
#define SEC(name) __attribute__((section(name), used))
#endif

#define GPU_ALL_KERNELS "*"
#define GPU_ENTRY(kernel) SEC("gpu/entry/" kernel)
#define GPU_EXIT(kernel) SEC("gpu/exit/" kernel)
#define GPU_MEM(kernel) SEC("gpu/mem/" kernel)

#endif
