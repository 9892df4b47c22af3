/* SPDX-License-Identifier: MIT */
/*
 * Fixed-width types for eBPF programs, without the kernel headers. They
 * repeat Linux's definitions exactly, so <linux/types.h> or a vmlinux.h may
 * be included before or after this file.
 */
#ifndef EGPU_BPF_TYPES_H
#define EGPU_BPF_TYPES_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;

typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;

#ifndef NULL
#define NULL ((void *)0)
#endif

#endif
