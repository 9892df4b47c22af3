; A probe module as the JIT produces it (LLVM NVPTX): one .visible probe
; function, an internal helper, and an extern function and global that the
; device runtime module (cuda/runtime.cu) defines.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@egpu_dev_events = external addrspace(1) global i64, align 8

declare i64 @egpu_dev_mix(i64)

define internal i64 @llc_probe_weight(i64 %x) noinline {
  %y = mul i64 %x, 3
  ret i64 %y
}

; ctx: struct egpu_kernel_ctx (include/egpu/ctx.h)
define i64 @llc_probe(i64 %ctx, i64 %len) {
entry:
  %p = inttoptr i64 %ctx to ptr
  %id = load i64, ptr %p, align 8
  %pp = getelementptr i8, ptr %p, i64 8
  %params = load i64, ptr %pp, align 8
  %sp = getelementptr i8, ptr %p, i64 16
  %size = load i32, ptr %sp, align 4
  %has = icmp ne i32 %size, 0
  br i1 %has, label %read, label %done

read:
  %pb = inttoptr i64 %params to ptr
  %b = load i8, ptr %pb, align 1
  %bz = zext i8 %b to i64
  br label %done

done:
  %v = phi i64 [ 0, %entry ], [ %bz, %read ]
  %s = add i64 %id, %v
  %m = call i64 @egpu_dev_mix(i64 %s)
  %w = call i64 @llc_probe_weight(i64 %m)
  %old = atomicrmw add ptr addrspace(1) @egpu_dev_events, i64 %w monotonic
  ret i64 %old
}
