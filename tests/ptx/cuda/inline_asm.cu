// Inline assembly: nested scopes with their own declarations, predicates,
// vector operands, comments and labels inside the assembly text.
__global__ void asm_scopes(unsigned *out, unsigned a, unsigned b)
{
	unsigned r, lo, hi;

	asm("{\n\t"
	    ".reg .pred p, q;   // two predicates\n\t"
	    ".reg .b32 t<2>;\n\t"
	    "setp.lt.u32 p, %1, %2;\n\t"
	    "/* choose the larger */\n\t"
	    "selp.b32 t0, %2, %1, p;\n\t"
	    "setp.eq.u32 q, t0, 0;\n\t"
	    "@q mov.b32 t0, 1;\n\t"
	    "@!q add.u32 t0, t0, 3;\n\t"
	    "mov.b32 %0, t0;\n\t"
	    "}"
	    : "=r"(r)
	    : "r"(a), "r"(b));
	asm("mov.b64 {%0, %1}, %2;" : "=r"(lo), "=r"(hi) : "l"((unsigned long long)a << 32 | b));
	asm volatile("{\n\t"
		     ".reg .pred done;\n"
		     "asm_loop_%=:\n\t"
		     "sub.u32 %0, %0, 1;\n\t"
		     "setp.eq.u32 done, %0, 0;\n\t"
		     "@!done bra asm_loop_%=;\n\t"
		     "}"
		     : "+r"(r));
	out[threadIdx.x] = r + lo + hi;
}

__global__ void asm_clock(long long *out)
{
	long long t0, t1;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	__nanosleep(100);
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
	out[blockIdx.x] = t1 - t0;
}
