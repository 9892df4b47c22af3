/* SPDX-License-Identifier: MIT */
/*
 * What a host probe includes where bpftime's include vmlinux.h: the types
 * libbpf's helper definitions use, and its bpf_tracing.h for x86-64 over
 * egpu's struct egpu_pt_regs standing in for the kernel's struct pt_regs
 * (vmlinux.h's field names: di, si, ...).
 */
#ifndef UPROBE_REGS_H
#define UPROBE_REGS_H

#define __TARGET_ARCH_x86
#define __VMLINUX_H__
#define pt_regs egpu_pt_regs
typedef __UINT8_TYPE__ __u8;
typedef __UINT16_TYPE__ __u16;
typedef __UINT32_TYPE__ __u32;
typedef __UINT64_TYPE__ __u64;
typedef __INT32_TYPE__ __s32;
typedef __INT64_TYPE__ __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
enum { BPF_MAP_TYPE_ARRAY = 2 };
enum { BPF_ANY = 0 };
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <egpu/ctx.h>

#endif
